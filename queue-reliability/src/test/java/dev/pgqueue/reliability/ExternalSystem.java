package dev.pgqueue.reliability;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

import javax.sql.DataSource;

import dev.pgqueue.InDoubtJob;
import dev.pgqueue.Job;
import dev.pgqueue.test.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The stand-in for a system outside the queue's database that two-phase jobs have an effect on (a
 * payment provider, a broker): a table in another database, {@value #DATABASE}, with one row per
 * job, keyed on the job's id as an idempotency key would be. It does not deduplicate: a second
 * effect for a job counts in {@code applied}, so that the tests see it.
 *
 * <p>It also holds the traps: a job enqueued with one stops the worker that runs it, once, before
 * or after its effect, and the worker prints {@link #TRAPPED} so that the test can kill it there.
 * Each scenario has a schema of its own in that database, named after the scenario's.
 */
final class ExternalSystem {

	/** The database of the external system, beside the test database on the same server. */
	static final String DATABASE = "pgqueue_external";

	/** Starts the line a worker prints when a trap stops it: then the trap, then the job's id. */
	static final String TRAPPED = "trapped between prepare and commit: ";

	/** Where a trap stops the worker. */
	enum Trap {

		/** After the prepare, before the effect: the effect has not happened. */
		BEFORE_EFFECT,

		/** After the effect, before the commit: the effect has happened. */
		AFTER_EFFECT

	}

	private static final long PID = ProcessHandle.current().pid();

	private final JdbcTemplate jdbc;

	private final String schema;

	ExternalSystem(DataSource dataSource, String schema) {
		this.jdbc = new JdbcTemplate(dataSource);
		this.schema = schema;
	}

	/** The JDBC URL of {@value #DATABASE} on the test server. */
	static String url() {
		return TestDatabase.get().jdbcUrl().replaceFirst("^(jdbc:postgresql://[^/]+/)[^?]*", "$1" + DATABASE);
	}

	/** Creates {@value #DATABASE} on the test server unless it exists. */
	static void createDatabase() throws SQLException {
		try (Connection connection = TestDatabase.get().connect(); Statement statement = connection.createStatement()) {
			try (var rs = statement.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + DATABASE + "'")) {
				if (rs.next()) {
					return;
				}
			}
			statement.execute("CREATE DATABASE " + DATABASE);
		}
	}

	/** Creates this scenario's tables in a schema of its own. */
	void create() {
		this.jdbc.execute("CREATE SCHEMA " + this.schema);
		this.jdbc.execute("CREATE TABLE " + this.schema + ".effects (job_id uuid PRIMARY KEY, "
				+ "applied int NOT NULL DEFAULT 1, worker_pid bigint NOT NULL)");
		this.jdbc.execute("CREATE TABLE " + this.schema + ".traps (job_id uuid PRIMARY KEY)");
	}

	void drop() {
		this.jdbc.execute("DROP SCHEMA IF EXISTS " + this.schema + " CASCADE");
	}

	/** The job's effect, with its trap, if it has one. */
	void apply(Job job) throws InterruptedException {
		Trap trap = trapOf(job);
		if (trap == Trap.BEFORE_EFFECT) {
			stopOnce(job, trap);
		}
		this.jdbc.update("INSERT INTO " + this.schema + ".effects (job_id, worker_pid) VALUES (?, ?) "
				+ "ON CONFLICT (job_id) DO UPDATE SET applied = effects.applied + 1", job.id(), PID);
		if (trap == Trap.AFTER_EFFECT) {
			stopOnce(job, trap);
		}
	}

	/** What the in-doubt resolver asks: whether the job's effect happened. */
	boolean effectHappened(InDoubtJob job) {
		return this.jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM " + this.schema + ".effects WHERE job_id = ?)",
				Boolean.class, job.id());
	}

	/** Effects recorded, and how many jobs had more than one. */
	Map<String, Object> tally() {
		return this.jdbc.queryForMap("SELECT count(*) AS jobs, coalesce(sum(applied), 0) AS effects, "
				+ "count(*) FILTER (WHERE applied > 1) AS repeated FROM " + this.schema + ".effects");
	}

	/** Whether the job has exactly one effect. */
	long applied(UUID job) {
		Long applied = this.jdbc.queryForObject("SELECT coalesce(max(applied), 0) FROM " + this.schema
				+ ".effects WHERE job_id = ?", Long.class, job);
		return (applied != null) ? applied : 0;
	}

	/** Traps that stopped a worker. */
	long sprung() {
		return this.jdbc.queryForObject("SELECT count(*) FROM " + this.schema + ".traps", Long.class);
	}

	private void stopOnce(Job job, Trap trap) throws InterruptedException {
		if (this.jdbc.update("INSERT INTO " + this.schema + ".traps (job_id) VALUES (?) ON CONFLICT DO NOTHING",
				job.id()) == 1) {
			System.out.println(TRAPPED + trap + " " + job.id());
			System.out.flush();
			// Until the test kills this process.
			new CountDownLatch(1).await();
		}
	}

	private static Trap trapOf(Job job) {
		for (Trap trap : Trap.values()) {
			if (job.payload().contains("\"" + trap.name() + "\"")) {
				return trap;
			}
		}
		return null;
	}

}
