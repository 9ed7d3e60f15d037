package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.schema.BucketClaimIndex;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;

/**
 * One workload's schema with a migrated jobs table: loads rows in SQL, hands out connection pools
 * and drops everything on close.
 */
final class BenchSchema implements AutoCloseable {

	static final String QUEUE = "bench";

	static final String KIND = "noop";

	private final BenchDatabase database;

	private final SchemaName name;

	private final String table;

	private final String finishedTable;

	private final String allJobs;

	private Connection admin;

	private final List<HikariDataSource> pools = new ArrayList<>();

	/** Drops the schema if the run is interrupted (Ctrl-C), so that no gigabytes of rows are left behind. */
	private final Thread dropOnExit = new Thread(this::dropQuietly, "pgqueue-bench-drop-schema");

	/** Public ids of loaded rows are sequential from here: unique, and cheap to index. */
	private long nextLoadedId = 1;

	BenchSchema(BenchDatabase database, String name) {
		this.database = database;
		this.name = SchemaName.of(name);
		this.table = this.name.qualify("pgqueue_jobs");
		this.finishedTable = this.name.qualify("pgqueue_finished_jobs");
		this.allJobs = this.name.qualify("pgqueue_all_jobs");
		try {
			this.admin = database.connect();
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not connect to create schema " + name + ": " + ex.getMessage(), ex);
		}
		execute("CREATE SCHEMA " + this.name.quoted());
		Runtime.getRuntime().addShutdownHook(this.dropOnExit);
		// Flyway holds one connection for its lock while migrating on another.
		try (HikariDataSource migration = pool("migrate", 3)) {
			new QueueMigrator(migration, this.name, true).migrate();
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
	}

	SchemaName name() {
		return this.name;
	}

	/** The qualified, quoted jobs table, which claims read: unfinished jobs only. */
	String table() {
		return this.table;
	}

	/** The qualified, quoted table of finished jobs, where a job goes as it finishes. */
	String finishedTable() {
		return this.finishedTable;
	}

	/** The view of every job, unfinished and finished. */
	String allJobs() {
		return this.allJobs;
	}

	/**
	 * Creates the bucket claim index, as the migrator does for an application that configures a queue
	 * with bucket assignment; a schema without it is an installation where no queue claims by buckets.
	 */
	void bucketClaims() {
		try (HikariDataSource index = pool("bucket-index", 1)) {
			new BucketClaimIndex(index, this.name).create(List.of(QUEUE));
		}
	}

	/**
	 * A new pool of exactly {@code size} connections, all opened before this returns so that no run
	 * pays for connecting. Closed with the schema.
	 */
	HikariDataSource pool(String purpose, int size) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(this.database.jdbcUrl());
		if (this.database.username() != null) {
			config.setUsername(this.database.username());
		}
		if (this.database.password() != null) {
			config.setPassword(this.database.password());
		}
		config.setSchema(this.name.value());
		config.setMaximumPoolSize(size);
		config.setMinimumIdle(size);
		config.setConnectionTimeout(60_000);
		config.setPoolName("bench-" + purpose);
		HikariDataSource pool = new HikariDataSource(config);
		this.pools.add(pool);
		warm(pool, size);
		return pool;
	}

	private static void warm(DataSource pool, int size) {
		List<Connection> held = new ArrayList<>();
		try {
			for (int i = 0; i < size; i++) {
				held.add(pool.getConnection());
			}
			for (Connection connection : held) {
				connection.close();
			}
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not open " + size + " connections: " + ex.getMessage(), ex);
		}
	}

	/** A plain connection outside any pool (unqualified names resolve in the public schema). */
	Connection connect() throws SQLException {
		return this.database.connect();
	}

	/** Removes every row, leaving no dead tuples behind for the next run. */
	void truncate() {
		execute("TRUNCATE " + this.table + ", " + this.finishedTable);
	}

	/** Inserts {@code count} due no-op jobs in one statement, then vacuums and analyzes the table. */
	void loadAvailable(long count) {
		loadAvailable(count, KIND, "'{\"n\": 1}'::jsonb");
	}

	/**
	 * Inserts {@code count} due jobs of {@code kind} in one statement, each with the payload that the
	 * SQL expression {@code payload} makes of the row's number {@code g}, then vacuums and analyzes.
	 */
	void loadAvailable(long count, String kind, String payload) {
		load(count, "available", "NULL", kind, payload);
		settle(count);
	}

	/**
	 * Inserts {@code count} no-op jobs, in one statement, due {@code lead} from now: each at a random
	 * instant in {@code [due, due + jitter)}, drawn in SQL as the engine's insert statements draw a
	 * job's jitter, and stored {@code scheduled} for the promoter to make available; vacuums; then
	 * waits until the database's clock reaches the common due instant. Returns how much later than
	 * that it returned (zero unless loading took longer than the lead).
	 */
	Duration loadScheduled(long count, Duration lead, Duration jitter) {
		String due = single("SELECT (clock_timestamp() + interval '" + lead.toMillis() + " milliseconds')::text");
		String runAt = "'" + due + "'::timestamptz"
				+ (jitter.isZero() ? "" : " + random() * " + jitter.toNanos() / 1000 + " * interval '1 microsecond'");
		load(count, "scheduled", "NULL", KIND, "'{\"n\": 1}'::jsonb", runAt);
		settle(count);
		// Waits on the database's clock, the one run-ats are compared with: the JVM's clock and the
		// server's were seen to disagree by tens of milliseconds.
		String late = single("SELECT extract(epoch FROM clock_timestamp() - '" + due + "'::timestamptz)::text FROM "
				+ "pg_sleep(greatest(0, extract(epoch FROM '" + due + "'::timestamptz - clock_timestamp())))");
		double seconds = Double.parseDouble(late);
		return Duration.ofNanos((long) (Math.max(0, seconds) * 1e9));
	}

	private String single(String sql) {
		return withAdmin(sql, (statement, query) -> {
			try (ResultSet rs = statement.executeQuery(query)) {
				rs.next();
				return rs.getString(1);
			}
		});
	}

	/** Inserts {@code count} due no-op jobs in one statement and nothing else: a burst that lands at once. */
	void insertAvailable(long count) {
		load(count, "available", "NULL", KIND, "'{\"n\": 1}'::jsonb", "now()");
	}

	/** Forgets every member, leader and bucket owner of the coordinator (between runs, all stopped). */
	void resetCoordination() {
		execute("DELETE FROM " + this.name.qualify("pgqueue_buckets") + "; DELETE FROM "
				+ this.name.qualify("pgqueue_leaders") + "; DELETE FROM " + this.name.qualify("pgqueue_members"));
	}

	/** Gives every job one of {@code keys} concurrency keys, round robin in id order, then vacuums. */
	void assignConcurrencyKeys(int keys) {
		execute("UPDATE " + this.table + " SET concurrency_key = 'key-' || (id %% %d)".formatted(keys));
		vacuum();
	}

	/** Inserts {@code count} jobs completed a minute ago, as kept by a completed retention. */
	void loadCompleted(long count) {
		load(count, "completed", "now() - interval '1 minute'", KIND, "'{\"n\": 1}'::jsonb");
		settle(count);
	}

	/**
	 * Vacuums, and after a big load also checkpoints: otherwise the checkpoint that the load's WAL
	 * triggers writes gigabytes while the next run is being timed.
	 */
	void settle(long loaded) {
		vacuum();
		if (loaded >= 100_000) {
			try {
				execute("CHECKPOINT");
			}
			catch (IllegalStateException ex) {
				// Needs superuser or pg_checkpoint; without it the run is merely noisier.
			}
		}
	}

	/**
	 * Generated in SQL, never through the client: ten million rows would otherwise take an hour.
	 * Every row gets the same {@code run_at} (the statement's {@code now()}), as if all were due at the
	 * same instant.
	 */
	private void load(long count, String state, String finishedAt, String kind, String payload) {
		load(count, state, finishedAt, kind, payload, "now()");
	}

	/**
	 * Each row gets a random bucket of the default 64, as {@code JobClient} gives a job without a
	 * bucket key: with them all in bucket 0, a queue with bucket assignment would have one member
	 * doing all the work.
	 */
	private void load(long count, String state, String finishedAt, String kind, String payload, String runAt) {
		long first = this.nextLoadedId;
		this.nextLoadedId += count;
		// Finished jobs go straight to their table, with ids from the jobs table's identity, as a
		// completion leaves them (through the jobs table, its trigger would move them one by one).
		boolean finished = List.of("completed", "failed", "cancelled").contains(state);
		execute("""
				INSERT INTO %s (id, public_id, kind, queue, payload, state, priority, run_at, attempt, max_attempts,
				                started_at, finished_at, bucket)
				OVERRIDING SYSTEM VALUE
				SELECT nextval(pg_get_serial_sequence('%s', 'id')), lpad(to_hex(g), 32, '0')::uuid, '%s', '%s', %s,
				       '%s', 0, %s, CASE WHEN %s IS NULL THEN 0 ELSE 1 END, 10, %s, %s,
				       floor(random() * %d)::smallint
				FROM generate_series(%d::bigint, %d::bigint) g
				""".formatted(finished ? this.finishedTable : this.table, this.table, kind, QUEUE, payload, state, runAt,
				finishedAt, finishedAt, finishedAt, QueueSettings.DEFAULT_BUCKETS, first, first + count - 1));
	}

	/**
	 * Vacuums without refreshing statistics: between drains of a table that is empty now and full
	 * during the drain, whose statistics should describe it full.
	 */
	void vacuumKeepingStatistics() {
		execute("VACUUM " + this.table + ", " + this.finishedTable);
	}

	/** Refreshes the statistics (of a full table), so that the planner sees the rows claims will read. */
	void analyze() {
		execute("ANALYZE " + this.table + ", " + this.finishedTable);
	}

	/** Sets hint bits and the visibility map and refreshes statistics, so that no run pays for them. */
	void vacuum() {
		execute("VACUUM (ANALYZE) " + this.table + ", " + this.finishedTable);
	}

	/** Jobs waiting for a worker. */
	long available() {
		return count("state = 'available'");
	}

	/** Jobs not finished yet: available (or locked by a transaction still running) and running. */
	long unfinished() {
		return count("state IN ('available', 'running')");
	}

	long count(String where) {
		return withAdmin("SELECT count(*) FROM " + this.allJobs + " WHERE " + where, (statement, sql) -> {
			try (ResultSet rs = statement.executeQuery(sql)) {
				rs.next();
				return rs.getLong(1);
			}
		});
	}

	void execute(String sql) {
		withAdmin(sql, Statement::execute);
	}

	/** Runs on the admin connection, reconnecting once if the server dropped it (a restart, say). */
	private <T> T withAdmin(String sql, AdminCall<T> call) {
		for (int attempt = 1;; attempt++) {
			try (Statement statement = this.admin.createStatement()) {
				return call.run(statement, sql);
			}
			catch (SQLException ex) {
				if (attempt > 1 || !isConnectionLost(ex)) {
					throw new IllegalStateException("Failed in schema " + this.name + ": " + ex.getMessage() + "\n"
							+ sql, ex);
				}
				reconnect();
			}
		}
	}

	/** Connection-level failures: SQLSTATE class 08, or 57P (administrator shutdown or termination). */
	static boolean isConnectionLost(SQLException ex) {
		String state = ex.getSQLState();
		return state != null && (state.startsWith("08") || state.startsWith("57P"));
	}

	private void reconnect() {
		try {
			this.admin.close();
		}
		catch (SQLException ex) {
			// Already gone.
		}
		long deadline = System.nanoTime() + 60_000_000_000L;
		while (true) {
			try {
				this.admin = this.database.connect();
				return;
			}
			catch (SQLException ex) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("PostgreSQL did not come back within a minute: " + ex.getMessage(),
							ex);
				}
				Drains.sleep(500);
			}
		}
	}

	@FunctionalInterface
	private interface AdminCall<T> {

		T run(Statement statement, String sql) throws SQLException;

	}

	/** Closes a pool before the schema closes (a run that needs a pool of another size). */
	void release(HikariDataSource pool) {
		pool.close();
		this.pools.remove(pool);
	}

	private void dropQuietly() {
		try (Connection connection = this.database.connect(); Statement statement = connection.createStatement()) {
			statement.execute("DROP SCHEMA IF EXISTS " + this.name.quoted() + " CASCADE");
		}
		catch (SQLException ex) {
			// Exiting anyway; the schema's name says what it was.
		}
	}

	@Override
	public void close() {
		try {
			Runtime.getRuntime().removeShutdownHook(this.dropOnExit);
		}
		catch (IllegalStateException ex) {
			// Shutting down: the hook is running or about to.
		}
		this.pools.forEach(HikariDataSource::close);
		this.pools.clear();
		try {
			execute("DROP SCHEMA IF EXISTS " + this.name.quoted() + " CASCADE");
		}
		finally {
			try {
				this.admin.close();
			}
			catch (SQLException ex) {
				// Closing is best effort; the schema is already gone or the server is.
			}
		}
	}

}
