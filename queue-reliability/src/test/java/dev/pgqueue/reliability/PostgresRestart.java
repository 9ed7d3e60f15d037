package dev.pgqueue.reliability;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.pgqueue.embedded.EmbeddedPostgresServer;
import dev.pgqueue.test.TestDatabase;
import org.jspecify.annotations.Nullable;

/**
 * How to restart, stop and start the test database's PostgreSQL server, in this order:
 * <ol>
 * <li>the shell command in {@value #VARIABLE} (environment or system property), run with the action
 * ({@code restart}, {@code stop} or {@code start}) as {@code $1};</li>
 * <li>the embedded server the tests started ({@link TestDatabase#embeddedServer()}), which they own;</li>
 * <li>{@code pg_ctlcluster --skip-systemctl-redirect <version> <name> <action>} when the JDBC URL
 * points at this machine and the server is a Debian cluster (its {@code cluster_name} reads
 * {@code 15/main}) whose configuration is under {@code /etc/postgresql};</li>
 * <li>otherwise the scenario fails and says how to provide the command. It is never skipped.</li>
 * </ol>
 * A Testcontainers server is not restarted: a restarted container gets a new port.
 */
final class PostgresRestart {

	static final String VARIABLE = "PGQUEUE_TEST_PG_CTL";

	private static final Pattern HOST = Pattern.compile("^jdbc:postgresql://(\\[[^]]+]|[^/:?,]+)");

	private static final Set<String> LOCAL_HOSTS = Set.of("localhost", "127.0.0.1", "[::1]");

	private final List<String> command;

	private final @Nullable EmbeddedPostgresServer server;

	private PostgresRestart(List<String> command) {
		this.command = command;
		this.server = null;
	}

	private PostgresRestart(EmbeddedPostgresServer server) {
		this.command = List.of("embedded PostgreSQL on port " + server.port());
		this.server = server;
	}

	/** Finds the control command, or fails saying how to provide one. */
	static PostgresRestart resolve() throws SQLException {
		String configured = System.getProperty(VARIABLE);
		if (configured == null || configured.isBlank()) {
			configured = System.getenv(VARIABLE);
		}
		if (configured != null && !configured.isBlank()) {
			return new PostgresRestart(List.of("sh", "-c", configured, "sh"));
		}
		TestDatabase database = TestDatabase.get();
		EmbeddedPostgresServer embedded = database.embeddedServer();
		if (embedded != null) {
			return new PostgresRestart(embedded);
		}
		Matcher host = HOST.matcher(database.jdbcUrl());
		String cluster = clusterName(database);
		if (host.find() && LOCAL_HOSTS.contains(host.group(1).toLowerCase(Locale.ROOT))
				&& cluster.matches("\\d+/[\\w.-]+") && onPath("pg_ctlcluster")
				&& Files.isDirectory(Paths.get("/etc/postgresql", cluster))) {
			String[] versionAndName = cluster.split("/");
			return new PostgresRestart(List.of("pg_ctlcluster", "--skip-systemctl-redirect", versionAndName[0],
					versionAndName[1]));
		}
		throw new IllegalStateException("""
				This scenario stops or restarts PostgreSQL under the workers and found no way to do it for %s \
				(%s; cluster_name '%s').
				Set %s to a shell command that runs the action given as $1 (restart, stop or start) on that \
				server and returns once it is done (accepting connections again after restart and start), \
				for example:
				    export %s='pg_ctlcluster --skip-systemctl-redirect 15 main $1'
				    export %s='sudo systemctl $1 postgresql'
				A local Debian cluster is found by itself when the JDBC URL points at localhost and \
				pg_ctlcluster is installed. A Testcontainers server cannot be restarted on the same port: \
				point %s at a server you can restart. The scenario is never skipped."""
			.formatted(database.jdbcUrl(), database.origin(), cluster, VARIABLE, VARIABLE, VARIABLE,
					TestDatabase.URL_VARIABLE));
	}

	private static String clusterName(TestDatabase database) throws SQLException {
		try (Connection connection = database.connect(); Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SHOW cluster_name")) {
			return rs.next() ? rs.getString(1) : "";
		}
	}

	private static boolean onPath(String program) {
		String path = System.getenv("PATH");
		return path != null && Arrays.stream(path.split(File.pathSeparator))
			.anyMatch((dir) -> Files.isExecutable(Paths.get(dir, program)));
	}

	/** Restarts the server and returns how long the command took; fails if it did not succeed. */
	Duration run(Path log) throws IOException, InterruptedException {
		return control("restart", log);
	}

	/**
	 * Stops the server (fast shutdown: every session cut, every open transaction rolled back), keeps
	 * it down for {@code down}, starts it again and returns once it accepts connections.
	 */
	void stopFor(Duration down, Path log) throws IOException, InterruptedException {
		control("stop", log);
		Thread.sleep(down.toMillis());
		control("start", log);
	}

	private Duration control(String action, Path log) throws IOException, InterruptedException {
		long start = System.nanoTime();
		if (this.server != null) {
			switch (action) {
				case "restart" -> {
					this.server.stop();
					this.server.restart();
				}
				case "stop" -> this.server.stop();
				default -> this.server.restart();
			}
			Files.writeString(log, "embedded PostgreSQL: " + action + "\n", StandardCharsets.UTF_8,
					StandardOpenOption.CREATE, StandardOpenOption.APPEND);
			return Duration.ofNanos(System.nanoTime() - start);
		}
		List<String> command = new ArrayList<>(this.command);
		command.add(action);
		Process process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
			.start();
		if (!process.waitFor(2, TimeUnit.MINUTES)) {
			process.destroyForcibly();
			throw new IllegalStateException("Running " + command + " on PostgreSQL took over 2 minutes");
		}
		if (process.exitValue() != 0) {
			throw new IllegalStateException("Running " + command + " on PostgreSQL failed with status "
					+ process.exitValue() + ": " + Files.readString(log, StandardCharsets.UTF_8));
		}
		return Duration.ofNanos(System.nanoTime() - start);
	}

	@Override
	public String toString() {
		return String.join(" ", this.command);
	}

}
