package dev.pgqueue.benchmark;

import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.pgqueue.QueueMode;
import dev.pgqueue.benchmark.userpath.UserPathApplication;
import dev.pgqueue.engine.sql.JobStatements;

/**
 * The baseline of the user-path workload: pgbench draining a preloaded jobs table with pgqueue's own
 * statements, fused where one statement can do the work of two, at a batch of 500.
 *
 * <ul>
 * <li>Transactional: claim-and-delete in one statement, {@code DELETE … WHERE id IN (the claim …
 * FOR UPDATE SKIP LOCKED) RETURNING} the claimed columns, committed at once; pgqueue's batch is the
 * claim, a savepoint and its release, the delete and the commit.</li>
 * <li>Leased: claim-then-complete, two transactions, as the engine's: the lease claim
 * ({@code WITH claimed AS (… SKIP LOCKED) UPDATE … RETURNING}), its ids and attempts aggregated into
 * arrays for pgbench's {@code \gset}, then the completer's guarded completion of those arrays.</li>
 * </ul>
 *
 * <p>Texts come from {@link JobStatements} with its {@code ?} parameters turned into pgbench
 * variables, which {@code -M prepared} sends as bind parameters, as pgjdbc does for the engine.
 */
final class PgbenchBaseline implements AutoCloseable {

	/** Jobs one pgbench transaction claims. */
	static final int BATCH = 500;

	static final String APPLICATION_NAME = CpuTimes.OUR_APPLICATIONS + "-pgbench";

	private static final Pattern PROCESSED = Pattern.compile("number of transactions actually processed: (\\d+)");

	private static final Pattern TPS = Pattern.compile("tps = ([0-9.]+) \\(without initial connection time\\)");

	private final BenchDatabase database;

	private final BenchSchema schema;

	private final Connection cpuProbe;

	private final Path scripts;

	/**
	 * @param schema the table pgbench drains; reloaded before every run
	 * @param cpuProbe a connection of the benchmark's, to tell other sessions apart in CPU figures
	 */
	PgbenchBaseline(BenchDatabase database, BenchSchema schema, Connection cpuProbe) throws IOException {
		this.database = database;
		this.schema = schema;
		this.cpuProbe = cpuProbe;
		this.scripts = Files.createTempDirectory("pgqueue-pgbench-");
		JobStatements statements = new JobStatements(schema.name());
		write(QueueMode.TRANSACTIONAL, claimAndDelete(statements));
		write(QueueMode.LEASED, claimThenComplete(statements));
	}

	/** Fails, saying what to install, when pgbench cannot be run. */
	static void requireInstalled() {
		try {
			Process version = new ProcessBuilder("pgbench", "--version").redirectErrorStream(true).start();
			version.getInputStream().readAllBytes();
			if (version.waitFor(30, TimeUnit.SECONDS) && version.exitValue() == 0) {
				return;
			}
		}
		catch (IOException ex) {
			// Not on PATH: said below.
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		throw new IllegalStateException("The user-path workload needs pgbench on PATH for its baselines, and found "
				+ "none. Install PostgreSQL's client tools (Debian/Ubuntu: apt-get install postgresql-client, or "
				+ "postgresql-<version> where pgbench ships with the server; RHEL: postgresql-contrib; macOS: "
				+ "brew install libpq), or leave user-path out of --workloads.");
	}

	static String claimAndDelete(JobStatements statements) {
		String claim = statements.claimLocked.replace(JobStatements.CLAIMED_COLUMNS, "id");
		return "DELETE FROM " + statements.table + " WHERE id IN (\n" + variables(claim, "queue", "kinds", "batch")
				+ ")\nRETURNING " + JobStatements.CLAIMED_COLUMNS + ";\n";
	}

	/**
	 * pgbench keeps one row of a result ({@code \gset}) and PostgreSQL allows data-modifying
	 * statements only at the top level of a {@code WITH}: so the engine's claim becomes a second
	 * common table expression whose rows are aggregated. {@code coalesce} keeps an empty claim from
	 * passing an empty string to the completion.
	 */
	static String claimThenComplete(JobStatements statements) {
		// No rate limit grants this claim's starts: they start at its now().
		String claim = statements.claimLeased.strip().replace("coalesce(?, now())", "now()");
		int update = claim.indexOf("\nUPDATE ");
		if (!claim.startsWith("WITH claimed AS (") || update < 0) {
			throw new IllegalStateException("The engine's lease claim changed shape; adapt PgbenchBaseline:\n" + claim);
		}
		String leased = claim.substring(0, update) + ",\nleased AS (" + claim.substring(update + 1) + ")\n"
				+ "SELECT coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(attempt), '{}') AS attempts, "
				+ "array_agg(payload) AS payloads FROM leased";
		return variables(leased, "queue", "kinds", "batch", "owner", "lease") + "\n\\gset\n"
				+ variables(statements.completeLeased, "ids", "attempts") + ";\n";
	}

	/** Replaces each {@code ?} in turn by a pgbench variable. */
	private static String variables(String sql, String... names) {
		StringBuilder script = new StringBuilder();
		int next = 0;
		for (char c : sql.toCharArray()) {
			if (c == '?') {
				script.append(':').append(names[next++]);
			}
			else {
				script.append(c);
			}
		}
		if (next != names.length) {
			throw new IllegalStateException("Expected " + names.length + " parameters, found " + next + " in:\n" + sql);
		}
		return script.toString();
	}

	private void write(QueueMode mode, String script) throws IOException {
		Files.writeString(script(mode), script);
	}

	private Path script(QueueMode mode) {
		return this.scripts.resolve(mode.name().toLowerCase(Locale.ROOT) + ".sql");
	}

	/** Reloads {@code jobs} jobs and drains them with {@code clients} pgbench clients. */
	Run run(QueueMode mode, int clients, long jobs, String payload) throws IOException, InterruptedException {
		this.schema.truncate();
		this.schema.loadAvailable(jobs, UserPathApplication.KIND, payload);
		long before = this.schema.unfinished();
		// Enough transactions for every job to be claimed once: SKIP LOCKED gives every claim a full
		// batch while one is left.
		long perClient = (jobs + (long) BATCH * clients - 1) / ((long) BATCH * clients);
		List<String> command = command(mode, clients, perClient);
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		environment(builder.environment());
		CpuTimes.ServerSnapshot serverBefore = CpuTimes.server(this.cpuProbe);
		double clientBefore = CpuTimes.waitedForChildrenSeconds();
		Process pgbench = builder.start();
		String output = new String(pgbench.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		int status = pgbench.waitFor();
		// The postmaster reaps pgbench's backends as they exit; let it, so that their time is in it.
		Drains.sleep(200);
		CpuTimes.ServerUsage server = CpuTimes.server(this.cpuProbe).since(serverBefore);
		double client = CpuTimes.waitedForChildrenSeconds() - clientBefore;
		if (status != 0) {
			throw new IllegalStateException("pgbench failed (exit " + status + "): " + String.join(" ", command) + "\n"
					+ output);
		}
		long drained = before - this.schema.unfinished();
		if (mode == QueueMode.LEASED && this.schema.count("state = 'completed'") != drained) {
			throw new IllegalStateException("pgbench's leased script claimed jobs it did not complete: "
					+ this.schema.count("state = 'completed'") + " completed of " + drained + "\n" + output);
		}
		return new Run(mode, clients, drained, seconds(output), client, server);
	}

	private List<String> command(QueueMode mode, int clients, long perClient) {
		Map<String, String> target = target();
		List<String> command = new ArrayList<>(List.of("pgbench", "-n", "-M", "prepared", "-f",
				script(mode).toString(), "-c", String.valueOf(clients), "-j", String.valueOf(clients), "-t",
				String.valueOf(perClient), "-D", "queue=" + BenchSchema.QUEUE, "-D",
				"kinds={" + UserPathApplication.KIND + "}", "-D", "batch=" + BATCH,
				"-D", "owner=pgbench", "-D", "lease=" + Drains.LEASE_MILLIS));
		target.forEach((option, value) -> {
			command.add(option);
			command.add(value);
		});
		return command;
	}

	/** Host, port, user and database of the JDBC URL, as pgbench options. */
	private Map<String, String> target() {
		Map<String, String> target = new LinkedHashMap<>();
		URI uri = uri();
		if (uri.getHost() != null) {
			target.put("-h", uri.getHost());
		}
		if (uri.getPort() > 0) {
			target.put("-p", String.valueOf(uri.getPort()));
		}
		String user = firstNonNull(parameters().get("user"), this.database.username());
		if (user != null) {
			target.put("-U", user);
		}
		String path = uri.getPath();
		target.put("-d", (path != null && path.length() > 1) ? path.substring(1) : "postgres");
		return target;
	}

	private void environment(Map<String, String> environment) {
		environment.put("PGAPPNAME", APPLICATION_NAME);
		String password = firstNonNull(parameters().get("password"), this.database.password());
		if (password != null) {
			environment.put("PGPASSWORD", password);
		}
		String sslmode = parameters().get("sslmode");
		if (sslmode != null) {
			environment.put("PGSSLMODE", sslmode);
		}
	}

	private URI uri() {
		String url = this.database.jdbcUrl();
		if (!url.startsWith("jdbc:postgresql://")) {
			throw new IllegalStateException("Cannot derive pgbench's connection from " + url
					+ "; the user-path workload needs a jdbc:postgresql://host:port/database URL");
		}
		URI uri = URI.create(url.substring("jdbc:".length()));
		if (uri.getHost() == null && uri.getAuthority() != null) {
			throw new IllegalStateException("Cannot derive pgbench's connection from " + url
					+ " (several hosts?); the user-path workload needs a single host");
		}
		return uri;
	}

	private Map<String, String> parameters() {
		Map<String, String> parameters = new LinkedHashMap<>();
		String query = uri().getRawQuery();
		if (query != null) {
			for (String pair : query.split("&")) {
				int equals = pair.indexOf('=');
				if (equals > 0) {
					parameters.put(URLDecoder.decode(pair.substring(0, equals), StandardCharsets.UTF_8),
							URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8));
				}
			}
		}
		return parameters;
	}

	private static String firstNonNull(String first, String second) {
		return (first != null) ? first : second;
	}

	/** pgbench's own duration: transactions ÷ its tps, which leaves out connecting. */
	private static double seconds(String output) {
		Matcher processed = PROCESSED.matcher(output);
		Matcher tps = TPS.matcher(output);
		if (!processed.find() || !tps.find()) {
			throw new IllegalStateException("Could not read pgbench's output:\n" + output);
		}
		return Long.parseLong(processed.group(1)) / Double.parseDouble(tps.group(1));
	}

	/**
	 * One pgbench drain.
	 *
	 * @param mode which script
	 * @param clients pgbench clients (and threads)
	 * @param drained jobs that left the unfinished states
	 * @param seconds pgbench's duration, connecting left out
	 * @param clientCpuSeconds CPU time of the pgbench process
	 * @param server CPU time of the server over the run
	 */
	record Run(QueueMode mode, int clients, long drained, double seconds, double clientCpuSeconds,
			CpuTimes.ServerUsage server) {

		double rate() {
			return this.drained / this.seconds;
		}

	}

	/** Removes the scripts. */
	@Override
	public void close() {
		try {
			for (QueueMode mode : QueueMode.values()) {
				Files.deleteIfExists(script(mode));
			}
			Files.deleteIfExists(this.scripts);
		}
		catch (IOException ex) {
			// A temporary directory; nothing depends on it.
		}
	}

}
