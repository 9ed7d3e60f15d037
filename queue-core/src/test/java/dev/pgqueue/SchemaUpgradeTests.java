package dev.pgqueue;

import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An upgrade from the oldest schema this release supports (V1) with jobs in flight: a schema migrated
 * to V1 only holds jobs in every state V1 knows, written with V1's columns by the first release's
 * statements; a worker of that release holds a transactional batch open and a leased job under its
 * lease. The current engine's migrator starts while that worker still runs and waits for its batch;
 * the worker is stopped (its sessions terminated, as when its process dies); the migration goes on to
 * the latest version, and the current engine, polling both queues, runs every runnable job exactly
 * once, leaves finished jobs and a job due tomorrow alone, and rescues the leased job only once its
 * lease has expired.
 */
class SchemaUpgradeTests {

	/** The oldest schema version an upgrade starts from: every migration after it is an upgrade. */
	static final String OLDEST_SUPPORTED_VERSION = "1";

	private static final String TX_QUEUE = "upgrade_tx";

	private static final String TX_KIND = "upgrade.tx";

	private static final String LEASED_QUEUE = "upgrade_leased";

	private static final String LEASED_KIND = "upgrade.leased";

	/** How long the stopped worker's last lease extension lasts: beyond the migration and the engine's start. */
	private static final Duration OLD_LEASE = Duration.ofSeconds(10);

	private static final String OLD_WORKER = "pgqueue-old-worker";

	private TestSchema schema;

	private String table;

	private JdbcTemplate jdbc;

	private QueueEngine engine;

	@BeforeEach
	void createSchemaAtTheOldestVersion() {
		this.schema = TestDatabase.get().createSchema("upgrade");
		this.table = SchemaName.of(this.schema.name()).qualify("pgqueue_jobs");
		this.jdbc = this.schema.jdbcTemplate();
		// As the first release's migrator configured Flyway (its default, transaction-scoped lock
		// included), stopped at the oldest supported version.
		Flyway.configure()
			.dataSource(this.schema.dataSource())
			.schemas(this.schema.name())
			.createSchemas(true)
			.table(QueueMigrator.HISTORY_TABLE)
			.locations(QueueMigrator.LOCATION)
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.cleanDisabled(true)
			.target(OLDEST_SUPPORTED_VERSION)
			.load()
			.migrate();
		this.jdbc.execute("CREATE TABLE old_effects (job_id uuid NOT NULL)");
	}

	@AfterEach
	void dropSchema() {
		if (this.engine != null) {
			this.engine.close();
		}
		this.schema.close();
	}

	@Test
	void jobsInEveryStateOfTheOldestSchemaFinishOnceAfterAnUpgradeWhileAnOldWorkerStops() throws Exception {
		assertThat(this.jdbc.queryForList("SELECT version FROM " + SchemaName.of(this.schema.name())
			.qualify(QueueMigrator.HISTORY_TABLE) + " WHERE version IS NOT NULL ORDER BY installed_rank", String.class))
			.containsExactly(OLDEST_SUPPORTED_VERSION);
		assertThat(columns()).as("the jobs table as V1 left it").doesNotContain("bucket", "attempts", "snoozes");

		Map<String, UUID> jobs = new LinkedHashMap<>();
		Map<UUID, Map<String, Object>> finishedBefore;
		try (OldWorker old = new OldWorker()) {
			// Claimed first, so that these are the jobs the old worker's batch and lease hold.
			jobs.put("tx-held-1", insert(TX_KIND, TX_QUEUE, "available", "0", 0, 3, null, null, null, null, null));
			jobs.put("tx-held-2", insert(TX_KIND, TX_QUEUE, "available", "0", 0, 3, null, null, null, null, null));
			jobs.put("tx-held-3", insert(TX_KIND, TX_QUEUE, "available", "0", 0, 3, null, null, null, null, null));
			List<UUID> held = old.claimBatchAndWork(3);
			assertThat(held).containsExactlyInAnyOrder(jobs.get("tx-held-1"), jobs.get("tx-held-2"),
					jobs.get("tx-held-3"));
			jobs.put("leased-orphan", insert(LEASED_KIND, LEASED_QUEUE, "available", "0", 0, 3, null, null, null, null,
					null));
			assertThat(old.claimLeased()).containsExactly(jobs.get("leased-orphan"));

			for (String mode : List.of("tx", "leased")) {
				String kind = mode.equals("tx") ? TX_KIND : LEASED_KIND;
				String queue = mode.equals("tx") ? TX_QUEUE : LEASED_QUEUE;
				jobs.put(mode + "-available", insert(kind, queue, "available", "0", 0, 3, null, null, null, null, null));
				jobs.put(mode + "-scheduled-soon",
						insert(kind, queue, "scheduled", "2 seconds", 0, 3, null, null, null, null, null));
				jobs.put(mode + "-scheduled-tomorrow",
						insert(kind, queue, "scheduled", "1 day", 0, 3, null, null, null, null, null));
				jobs.put(mode + "-retry-due", insert(kind, queue, "scheduled", "-1 second", 1, 3, null, null,
						"java.lang.IllegalStateException: first attempt failed", "-1 minute", null));
				jobs.put(mode + "-retry-soon", insert(kind, queue, "scheduled", "2 seconds", 1, 3, null, null,
						"java.lang.IllegalStateException: first attempt failed", "-1 minute", null));
				jobs.put(mode + "-completed",
						insert(kind, queue, "completed", "-2 minutes", 1, 3, null, null, null, "-1 minute", "-1 minute"));
				jobs.put(mode + "-failed", insert(kind, queue, "failed", "-2 minutes", 3, 3, null, null,
						"java.lang.IllegalStateException: third attempt failed", "-1 minute", "-1 minute"));
			}
			// Leased by workers that died long before the upgrade: their leases have run out.
			jobs.put("leased-expired", insert(LEASED_KIND, LEASED_QUEUE, "running", "-2 minutes", 1, 3, "old-worker-0",
					"-1 minute", null, "-2 minutes", null));
			jobs.put("leased-expired-last", insert(LEASED_KIND, LEASED_QUEUE, "running", "-2 minutes", 1, 1,
					"old-worker-0", "-1 minute", null, "-2 minutes", null));
			finishedBefore = rows(List.of(jobs.get("tx-completed"),
					jobs.get("tx-failed"), jobs.get("leased-completed"), jobs.get("leased-failed"),
					jobs.get("tx-scheduled-tomorrow"), jobs.get("leased-scheduled-tomorrow")));

			// The old worker's lease keeper extends its lease one last time (a statement that, once the
			// migration waits for the table's lock, would queue behind it).
			old.extendLease(OLD_LEASE);
			// The current engine's migrator starts while the old worker's batch is open: it waits for it.
			CompletableFuture<Void> migration = CompletableFuture.runAsync(() -> new QueueMigrator(
					this.schema.dataSource(), SchemaName.of(this.schema.name()), true).afterPropertiesSet());
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(20))
				.failFast("the migration ended before the old worker stopped", migration::isDone)
				.until(this::aSessionWaitsForTheJobsTable);

			old.stop();
			migration.get(2, TimeUnit.MINUTES);
		}
		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM old_effects", Long.class))
			.as("the work of the stopped worker's open batch died with it")
			.isZero();
		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM " + this.table
				+ " WHERE state = 'available' AND attempt = 0 AND public_id = ANY(?::uuid[])", Long.class,
				array(jobs.get("tx-held-1"), jobs.get("tx-held-2"), jobs.get("tx-held-3"))))
			.as("the stopped batch's jobs: available again, no attempt counted")
			.isEqualTo(3);
		Map<String, Object> orphan = row(jobs.get("leased-orphan"));
		assertThat(orphan).as("the stopped worker's leased job keeps its lease through the upgrade")
			.containsEntry("state", "running")
			.containsEntry("lease_owner", "old-worker-1")
			.containsEntry("attempt", 1);
		Instant orphanLeaseUntil = ((Timestamp) orphan.get("lease_until")).toInstant();
		assertThat(columns()).as("the jobs table at the latest version")
			.contains("bucket", "concurrency_key", "attempts", "snoozes", "rate_weight");

		Map<UUID, List<Call>> calls = new ConcurrentHashMap<>();
		this.engine = startCurrentEngine(calls);
		assertThat(Instant.now()).as("the engine polls before the stopped worker's lease runs out (else the "
				+ "test cannot tell a rescue after the lease from one before it)").isBefore(orphanLeaseUntil);
		assertThat(row(jobs.get("leased-orphan"))).containsEntry("state", "running");

		List<String> runnable = List.of("tx-held-1", "tx-held-2", "tx-held-3", "tx-available", "tx-scheduled-soon",
				"tx-retry-due", "tx-retry-soon", "leased-orphan", "leased-available", "leased-scheduled-soon",
				"leased-retry-due", "leased-retry-soon", "leased-expired");
		await().atMost(OLD_LEASE.plusSeconds(30))
			.failFast("a job ran more than once", () -> assertThat(callsByJob(jobs, calls))
				.as("jobs called more than once")
				.allSatisfy((name, n) -> assertThat(n).as(name).isEqualTo(1)))
			.untilAsserted(() -> {
				assertThat(runnable).as("runnable jobs not run yet")
					.filteredOn((name) -> !calls.containsKey(jobs.get(name)))
					.isEmpty();
				assertThat(count("state = 'completed'"))
					.as("completed jobs, the two completed before the upgrade included")
					.isEqualTo(runnable.size() + 2);
			});
		// Each runnable job once, no other job, however long the rescuer and pollers go on.
		Map<String, Integer> once = new TreeMap<>();
		runnable.forEach((name) -> once.put(name, 1));
		await().during(Duration.ofSeconds(2))
			.atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(callsByJob(jobs, calls)).as("calls per job").isEqualTo(once));
		assertThat(calls).as("calls of jobs this test did not write").hasSize(runnable.size());
		Map<String, Integer> attempts = Map.of("tx-retry-due", 2, "tx-retry-soon", 2, "leased-retry-due", 2,
				"leased-retry-soon", 2, "leased-orphan", 2, "leased-expired", 2);
		for (String name : runnable) {
			int attempt = attempts.getOrDefault(name, 1);
			assertThat(calls.get(jobs.get(name)).get(0).attempt()).as("attempt of %s", name).isEqualTo(attempt);
			assertThat(row(jobs.get(name))).as(name)
				.containsEntry("state", "completed")
				.containsEntry("attempt", attempt)
				.containsEntry("lease_owner", null);
		}
		assertThat(calls.get(jobs.get("leased-orphan")).get(0).at())
			.as("the stopped worker's leased job ran only after its lease expired")
			.isAfterOrEqualTo(orphanLeaseUntil);
		assertThat(this.jdbc.queryForObject("SELECT attempts::text FROM " + allJobs() + " WHERE public_id = ?",
				String.class, jobs.get("leased-orphan")))
			.as("its history records the expired attempt")
			.contains("\"attempt\": 1")
			.contains("expired")
			.contains("old-worker-1");
		assertThat(row(jobs.get("leased-expired-last"))).as("an expired lease on the last attempt fails the job")
			.containsEntry("state", "failed")
			.containsEntry("attempt", 1);
		assertThat(rows(finishedBefore.keySet())).as("finished jobs, and the job due tomorrow, are left alone")
			.isEqualTo(finishedBefore);
	}

	/** The current engine as an application starts it, with listeners on both queues. */
	private QueueEngine startCurrentEngine(Map<UUID, List<Call>> calls) {
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		QueueFixture.ThrowingConsumer<Job> record = (job) -> calls
			.computeIfAbsent(job.id(), (id) -> new CopyOnWriteArrayList<>())
			.add(new Call(job.attempt(), Instant.now()));
		handlers.register(QueueFixture.handler(TX_KIND, TX_QUEUE, record));
		handlers.register(QueueFixture.handler(LEASED_KIND, LEASED_QUEUE, record));
		MaintenanceSettings defaults = MaintenanceSettings.DEFAULT;
		EngineSettings settings = EngineSettings.defaults(SchemaName.of(this.schema.name()))
			.withWorkers(new WorkerSettings(Duration.ofSeconds(5), false, false))
			.withMaintenance(new MaintenanceSettings(Duration.ofMillis(200), Duration.ofMillis(200),
					defaults.cleanupInterval(), defaults.statsInterval(), defaults.completedRetention(),
					defaults.failedRetention(), defaults.cleanupBatchSize(), defaults.deadRowsWarning()));
		QueueEngine started = QueueEngine.builder(this.schema.dataSource())
			.settings(settings)
			.queues(new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE),
					List.of(QueueSettings.defaults(TX_QUEUE).withPollInterval(Duration.ofMillis(200)),
							QueueSettings.defaults(LEASED_QUEUE)
								.withMode(QueueMode.LEASED)
								.withLeaseDuration(Duration.ofSeconds(2))
								.withPollInterval(Duration.ofMillis(200)))))
			.handlers(handlers)
			.transactionManager(new DataSourceTransactionManager(this.schema.dataSource()))
			.build();
		started.start();
		return started;
	}

	/**
	 * Inserts a job with V1's columns only. Offsets are PostgreSQL intervals from now; {@code null}
	 * leaves the column null.
	 */
	private UUID insert(String kind, String queue, String state, String runAt, int attempt, int maxAttempts,
			String leaseOwner, String leaseUntil, String lastError, String startedAt, String finishedAt) {
		UUID id = UUID.randomUUID();
		this.jdbc.update("INSERT INTO " + this.table + " (public_id, kind, queue, payload, state, priority, run_at, "
				+ "attempt, max_attempts, lease_owner, lease_until, last_error, created_at, started_at, finished_at) "
				+ "VALUES (?, ?, ?, '{\"n\": 1}', ?, 0, now() + ?::interval, ?, ?, ?, now() + ?::interval, ?, "
				+ "now() - interval '3 minutes', now() + ?::interval, now() + ?::interval)", id, kind, queue, state,
				runAt, attempt, maxAttempts, leaseOwner, leaseUntil, lastError, startedAt, finishedAt);
		return id;
	}

	/** How many times the current engine called a listener for each job, by the job's name; jobs not called are left out. */
	private static Map<String, Integer> callsByJob(Map<String, UUID> jobs, Map<UUID, List<Call>> calls) {
		Map<String, Integer> counts = new TreeMap<>();
		jobs.forEach((name, id) -> {
			List<Call> made = calls.get(id);
			if (made != null) {
				counts.put(name, made.size());
			}
		});
		return counts;
	}

	private boolean aSessionWaitsForTheJobsTable() {
		return this.jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM pg_locks WHERE relation = ?::regclass "
				+ "AND NOT granted)", Boolean.class, this.table);
	}

	private List<String> columns() {
		return this.jdbc.queryForList("SELECT column_name FROM information_schema.columns "
				+ "WHERE table_schema = ? AND table_name = 'pgqueue_jobs'", String.class, this.schema.name());
	}

	private long count(String condition) {
		return this.jdbc.queryForObject("SELECT count(*) FROM " + allJobs() + " WHERE " + condition, Long.class);
	}

	private Map<String, Object> row(UUID id) {
		return this.jdbc.queryForMap("SELECT state, attempt, lease_owner, lease_until, run_at, last_error, "
				+ "started_at, finished_at FROM " + allJobs() + " WHERE public_id = ?", id);
	}

	/**
	 * Every job: the jobs table before the upgrade, the view over it and the finished jobs' table
	 * (which the upgrade makes) after.
	 */
	private String allJobs() {
		String view = SchemaName.of(this.schema.name()).qualify("pgqueue_all_jobs");
		Boolean exists = this.jdbc.queryForObject("SELECT to_regclass(?) IS NOT NULL", Boolean.class, view);
		return Boolean.TRUE.equals(exists) ? view : this.table;
	}

	private Map<UUID, Map<String, Object>> rows(Collection<UUID> ids) {
		Map<UUID, Map<String, Object>> rows = new LinkedHashMap<>();
		for (UUID id : ids) {
			rows.put(id, row(id));
		}
		return rows;
	}

	private static String array(UUID... ids) {
		List<String> texts = new ArrayList<>();
		for (UUID id : ids) {
			texts.add(id.toString());
		}
		return "{" + String.join(",", texts) + "}";
	}

	/** One call of a listener of the current engine. */
	record Call(int attempt, Instant at) {
	}

	/**
	 * A worker of the first release, reduced to its statements (as that release's JobRepository wrote
	 * them, against V1's columns) on two sessions of its own: one holding a transactional batch open
	 * mid-work, one that claimed a job under its lease.
	 */
	private final class OldWorker implements AutoCloseable {

		private static final String OWNER = "old-worker-1";

		private final Connection batch;

		private final Connection leases;

		private final List<Long> leased = new ArrayList<>();

		OldWorker() throws SQLException {
			this.batch = connect();
			this.leases = connect();
		}

		private Connection connect() throws SQLException {
			Properties properties = new Properties();
			TestDatabase database = TestDatabase.get();
			if (database.username() != null) {
				properties.setProperty("user", database.username());
			}
			if (database.password() != null) {
				properties.setProperty("password", database.password());
			}
			properties.setProperty("ApplicationName", OLD_WORKER);
			properties.setProperty("currentSchema", SchemaUpgradeTests.this.schema.name());
			return DriverManager.getConnection(database.jdbcUrl(), properties);
		}

		/**
		 * Locks up to {@code limit} due transactional jobs for its batch's transaction (the rows stay
		 * available), does their work and records one's completion, and leaves the transaction open.
		 */
		List<UUID> claimBatchAndWork(int limit) throws SQLException {
			this.batch.setAutoCommit(false);
			List<Long> ids = new ArrayList<>();
			List<UUID> publicIds = new ArrayList<>();
			try (PreparedStatement claim = this.batch.prepareStatement("""
					SELECT id, public_id, kind, queue, attempt, max_attempts, priority, payload::text AS payload,
					       run_at, created_at FROM %s
					WHERE queue = ? AND state = 'available' AND kind = ANY(?)
					ORDER BY priority DESC, run_at, id
					LIMIT ?
					FOR UPDATE SKIP LOCKED""".formatted(SchemaUpgradeTests.this.table))) {
				claim.setString(1, TX_QUEUE);
				claim.setArray(2, this.batch.createArrayOf("text", new String[] { TX_KIND }));
				claim.setInt(3, limit);
				try (ResultSet rs = claim.executeQuery()) {
					while (rs.next()) {
						ids.add(rs.getLong("id"));
						publicIds.add(rs.getObject("public_id", UUID.class));
					}
				}
			}
			try (PreparedStatement work = this.batch.prepareStatement("INSERT INTO old_effects (job_id) VALUES (?)")) {
				for (UUID id : publicIds) {
					work.setObject(1, id);
					work.executeUpdate();
				}
			}
			try (PreparedStatement complete = this.batch.prepareStatement("UPDATE " + SchemaUpgradeTests.this.table
					+ " SET state = 'completed', attempt = attempt + 1, started_at = now(), "
					+ "finished_at = clock_timestamp(), last_error = NULL WHERE id = ANY(?)")) {
				complete.setArray(1, this.batch.createArrayOf("int8", new Long[] { ids.get(0) }));
				complete.executeUpdate();
			}
			return publicIds;
		}

		/** Claims one due leased job as running under its lease, counting the attempt, and commits. */
		List<UUID> claimLeased() throws SQLException {
			List<UUID> publicIds = new ArrayList<>();
			try (PreparedStatement claim = this.leases.prepareStatement("""
					WITH claimed AS (
					    SELECT id FROM %1$s
					    WHERE queue = ? AND state = 'available' AND kind = ANY(?)
					    ORDER BY priority DESC, run_at, id
					    LIMIT ?
					    FOR UPDATE SKIP LOCKED)
					UPDATE %1$s j
					SET state = 'running', attempt = j.attempt + 1, started_at = now(),
					    lease_owner = ?, lease_until = now() + ? * interval '1 millisecond'
					FROM claimed
					WHERE j.id = claimed.id
					RETURNING j.id, j.public_id""".formatted(SchemaUpgradeTests.this.table))) {
				claim.setString(1, LEASED_QUEUE);
				claim.setArray(2, this.leases.createArrayOf("text", new String[] { LEASED_KIND }));
				claim.setInt(3, 1);
				claim.setString(4, OWNER);
				claim.setLong(5, 30_000);
				try (ResultSet rs = claim.executeQuery()) {
					while (rs.next()) {
						this.leased.add(rs.getLong(1));
						publicIds.add(rs.getObject(2, UUID.class));
					}
				}
			}
			return publicIds;
		}

		/** Its lease keeper's last extension before the worker stops. */
		void extendLease(Duration lease) throws SQLException {
			try (PreparedStatement extend = this.leases.prepareStatement("UPDATE " + SchemaUpgradeTests.this.table
					+ " SET lease_until = clock_timestamp() + ? * interval '1 millisecond'"
					+ " WHERE id = ANY(?) AND state = 'running' AND lease_owner = ?")) {
				Array ids = this.leases.createArrayOf("int8", this.leased.toArray(new Long[0]));
				extend.setLong(1, lease.toMillis());
				extend.setArray(2, ids);
				extend.setString(3, OWNER);
				assertThat(extend.executeUpdate()).isEqualTo(this.leased.size());
			}
		}

		/**
		 * Stops the worker as its process's death would: the server ends its sessions, rolling back the
		 * open batch and releasing its locks; the lease stays in the table.
		 */
		void stop() throws SQLException {
			try (Connection admin = TestDatabase.get().connect(); Statement statement = admin.createStatement();
					ResultSet rs = statement.executeQuery("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) "
							+ "FROM pg_stat_activity WHERE application_name = '" + OLD_WORKER + "'")) {
				rs.next();
				assertThat(rs.getInt(1)).as("sessions of the old worker ended").isEqualTo(2);
			}
		}

		@Override
		public void close() {
			for (Connection connection : List.of(this.batch, this.leases)) {
				try {
					connection.close();
				}
				catch (SQLException ex) {
					// Its session was terminated: nothing to close on the server's side.
				}
			}
		}

	}

}
