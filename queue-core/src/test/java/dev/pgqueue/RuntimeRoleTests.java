package dev.pgqueue;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.AppenderBase;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.QueueEngineBuilder;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.settings.ConcurrencyLimits;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.KeyFairness;
import dev.pgqueue.engine.settings.KindSettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.settings.TwoPhaseSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.shards.ShardLayout;
import dev.pgqueue.engine.sql.RateRepository;
import dev.pgqueue.engine.sql.RateRepository.Grant;
import dev.pgqueue.engine.twophase.InDoubtResolver;
import dev.pgqueue.engine.twophase.TransactionIds;
import dev.pgqueue.metrics.OldestTransaction;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * With migrations applied by an administrator and turned off at runtime, an application role that
 * holds exactly the grants {@code docs/operations.md} documents (the block read from the page and
 * executed, nothing more, in a schema whose functions {@code PUBLIC} may not execute) runs every
 * feature: both modes, every background service, the operators' operations, cancelling a running job
 * and its progress, the history, rate limits, concurrency limits, fairness, unique keys, schedules,
 * two-phase commit and shards. Each feature's effect is checked, and so is every log line of the
 * engine, at every level: a permission the grants lack shows as a failure even where the engine only
 * logs it.
 */
class RuntimeRoleTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	private static final String PASSWORD = "runtime";

	private static QueueFixture admin;

	/** The second shard's tables, in a schema of their own. */
	private static QueueFixture secondShard;

	private static String role;

	private static HikariDataSource runtimePool;

	private static HikariDataSource secondShardPool;

	private static final PermissionFailures permissionFailures = new PermissionFailures();

	@BeforeAll
	static void setUp() throws Exception {
		admin = QueueFixture.create("runtime_role");
		secondShard = QueueFixture.create("runtime_shard");
		role = "pgqueue_rt_" + UUID.randomUUID().toString().substring(0, 8);
		try (Connection connection = TestDatabase.get().connect(); Statement sql = connection.createStatement()) {
			sql.execute("CREATE ROLE " + role + " LOGIN PASSWORD '" + PASSWORD + "'");
			grantAsDocumented(sql, admin.schema().name());
			grantAsDocumented(sql, secondShard.schema().name());
			// The application's own table, which its listeners write.
			sql.execute("CREATE TABLE " + admin.schema().name() + ".ledger (job_id uuid PRIMARY KEY)");
			sql.execute("GRANT SELECT, INSERT ON " + admin.schema().name() + ".ledger TO " + role);
		}
		runtimePool = runtimePool(admin.schema().name());
		secondShardPool = runtimePool(secondShard.schema().name());
		permissionFailures.attach();
	}

	/**
	 * Executes the documented block for this schema, after taking {@code EXECUTE} on the schema's
	 * functions away from {@code PUBLIC} (as a hardened database does), so that only the block's grants
	 * count.
	 */
	private static void grantAsDocumented(Statement sql, String schema) throws Exception {
		sql.execute("REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA " + schema + " FROM PUBLIC");
		List<String> statements = DocumentedGrants.read().statements(schema, role);
		assertThat(statements).as("the GRANT block of %s", DocumentedGrants.DOCUMENT).isNotEmpty();
		for (String statement : statements) {
			sql.execute(statement);
		}
	}

	private static HikariDataSource runtimePool(String schema) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(withoutCredentials(TestDatabase.get().jdbcUrl()));
		config.setUsername(role);
		config.setPassword(PASSWORD);
		config.setSchema(schema);
		config.setMaximumPoolSize(12);
		return new HikariDataSource(config);
	}

	@AfterEach
	void nothingWasRefused() {
		List<String> refused = permissionFailures.takeAll();
		assertThat(refused).as("what the engine logged of statements the runtime role was refused").isEmpty();
	}

	@AfterAll
	static void tearDown() throws Exception {
		permissionFailures.detach();
		runtimePool.close();
		secondShardPool.close();
		admin.close();
		secondShard.close();
		try (Connection connection = TestDatabase.get().connect(); Statement sql = connection.createStatement()) {
			sql.execute("DROP ROLE IF EXISTS " + role);
		}
	}

	@Test
	void aRoleWithoutDdlRightsRunsTheWholeQueueWhenMigrationsAreOff() {
		SchemaName schema = schema();
		JdbcTemplate jdbc = new JdbcTemplate(runtimePool);
		assertThat(jdbc.queryForObject("SELECT current_user", String.class)).isEqualTo(role);
		assertThatExceptionOfType(DataAccessException.class)
			.isThrownBy(() -> jdbc.execute("CREATE TABLE " + schema.quoted() + ".sneaky (id int)"))
			.satisfies((ex) -> assertThat(ex.getMostSpecificCause().getMessage()).contains("permission denied"));

		new QueueMigrator(runtimePool, schema, false).afterPropertiesSet();
		Set<String> ran = ConcurrentHashMap.newKeySet();
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		QueueFixture.ThrowingConsumer<Job> record = (job) -> {
			jdbc.update("INSERT INTO ledger (job_id) VALUES (?)", job.id());
			ran.add(job.kind());
		};
		handlers.register(QueueFixture.handler("tx.job", "tx", record));
		handlers.register(QueueFixture.handler("leased.job", "leased", record));
		handlers.register(QueueFixture.handler("bucketed.job", "bucketed", record));
		QueueCatalog catalog = new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE),
				List.of(QueueSettings.defaults("leased").withMode(QueueMode.LEASED),
						QueueSettings.defaults("bucketed").withAssignment(QueueAssignment.BUCKETS)));
		QueueEngine engine = QueueEngine.builder(runtimePool)
			.settings(EngineSettings.defaults(schema)
				.withWorkers(new WorkerSettings(Duration.ofSeconds(5), false, false))
				.withHeartbeatInterval(Duration.ofMillis(200)))
			.queues(catalog)
			.handlers(handlers)
			.transactionManager(new DataSourceTransactionManager(runtimePool))
			.adminCaller(() -> "runtime")
			.build();
		JobClient client = engine.client();
		JobAdmin jobAdmin = engine.admin();
		QueueFixture.Maintenance maintenance = QueueFixture.Maintenance.of(engine);
		engine.start();
		try {
			List<UUID> ids = client.enqueueAll(List.of(JobRequest.of("tx.job", 1), JobRequest.of("leased.job", 2),
					JobRequest.of("bucketed.job", 4)));
			client.enqueue(JobRequest.of("tx.job", 3).delay(Duration.ofMillis(10)));
			await().atMost(TIMEOUT).until(() -> {
				maintenance.promote();
				return jdbc.queryForObject("SELECT count(*) FROM ledger", Long.class) == 4;
			});
			assertThat(ran).containsExactlyInAnyOrder("tx.job", "leased.job", "bucketed.job");
			assertThat(maintenance.rescue()).isZero();
			assertThat(maintenance.readStats()).containsKeys("tx", "leased", "bucketed");
			assertThat(ids).hasSize(3);
			assertThat(EngineInternals.of(engine).pollingHeartbeat().refresh().polled()).contains("tx", "leased",
					"bucketed");
			assertThat(jdbc.queryForList("SELECT DISTINCT queue FROM " + schema.qualify("pgqueue_pollers"), String.class))
				.as("heartbeats written as the runtime role")
				.contains("tx", "leased", "bucketed");

			assertThat(jobAdmin.pause("tx")).isTrue();
			UUID waiting = client.enqueue(JobRequest.of("tx.job", 5));
			assertThat(jobAdmin.list(JobQuery.all().queue("tx").state(JobState.AVAILABLE)).jobs())
				.extracting(JobDetails::id)
				.containsExactly(waiting);
			assertThat(jobAdmin.cancel(waiting).applied()).isTrue();
			assertThat(jobAdmin.delete(waiting).applied()).isTrue();
			assertThat(jobAdmin.retryFailed("tx", null)).isZero();
			assertThat(jobAdmin.counts()).containsKeys("tx", "leased", "bucketed");
			assertThat(jobAdmin.resume("tx")).isTrue();
		}
		finally {
			engine.close();
		}
	}

	@Test
	void uniqueKeysHoldAndThePeriodsThatEndedArePruned() {
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		handlers.register(QueueFixture.handler("unique.job", "unique", (job) -> {
		}));
		try (QueueEngine engine = engine(handlers, List.of(QueueSettings.defaults("unique")), false)) {
			JobClient client = engine.client();
			UUID unique = client.enqueue(JobRequest.of("unique.job", 1).uniqueKey("once", Duration.ofHours(1))
				.delay(Duration.ofHours(2)));
			assertThat(client.enqueue(JobRequest.of("unique.job", 2).uniqueKey("once", Duration.ofHours(1))))
				.as("the second enqueue of the key within its period").isEqualTo(unique);
			// The period ends: the cleaner, as the runtime role, deletes its key.
			admin.jdbc().update("UPDATE pgqueue_unique_periods SET period_start = now() - interval '2 hours', "
					+ "period_end = now() - interval '1 hour' WHERE unique_key = 'once'");
			assertThat(EngineInternals.of(engine).cleaner().pruneEndedKeys()).isEqualTo(1);
			assertThat(admin.jdbc().queryForObject("SELECT count(*) FROM pgqueue_unique_periods WHERE unique_key = 'once'",
					Long.class)).isZero();
		}
	}

	@Test
	void schedulesTickAndTheirJobsRun() throws Exception {
		CountDownLatch ran = new CountDownLatch(1);
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		handlers.register(QueueFixture.handler("tick.job", "ticks", (job) -> ran.countDown()));
		try (QueueEngine engine = engine(handlers, List.of(QueueSettings.defaults("ticks")
			.withPollInterval(Duration.ofMillis(50))), false)) {
			engine.start();
			engine.schedules().save(Schedule.of("runtime", "0 0 * * * *", "tick.job").queue("ticks"));
			admin.jdbc().update("UPDATE pgqueue_schedules SET next_tick = now() - interval '1 second' WHERE name = 'runtime'");
			// Fired by this pass or by the engine's own ticker, both as the runtime role.
			EngineInternals.of(engine).scheduleTicker().pass();
			await().atMost(TIMEOUT).until(() -> engine.schedules().get("runtime").orElseThrow().lastTick() != null);
			assertThat(ran.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("the tick's job ran").isTrue();
			assertThat(engine.schedules().pause("runtime")).isTrue();
			assertThat(engine.schedules().runNow("runtime")).isNotNull();
			assertThat(engine.schedules().delete("runtime")).isTrue();
		}
	}

	@Test
	void rateLimitedQueuesClaimAndRunTheirJobsAndIdleKeysArePruned() {
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		handlers.register(QueueFixture.handler("rated.job", "rated", (job) -> {
		}));
		handlers.register(QueueFixture.handler("keyed.job", "rated_keys", (job) -> {
		}));
		// A kind's own limit and weight: its claims reserve several limits at once.
		handlers.override(new KindSettings("keyed.job", null, null, new RateLimit(20, Duration.ofSeconds(1)), 2));
		List<QueueSettings> queues = List.of(
				QueueSettings.defaults("rated").withPollInterval(Duration.ofMillis(50))
					.withRateLimit(new RateLimit(5, Duration.ofSeconds(1))),
				QueueSettings.defaults("rated_keys").withMode(QueueMode.LEASED).withPollInterval(Duration.ofMillis(50))
					.withPerKeyRateLimit(new RateLimit(3, Duration.ofSeconds(1))));
		try (QueueEngine engine = engine(handlers, queues, false)) {
			engine.start();
			List<JobRequest> requests = new ArrayList<>();
			for (int i = 0; i < 8; i++) {
				requests.add(JobRequest.of("rated.job", i));
				requests.add(JobRequest.of("keyed.job", i).concurrencyKey("tenant-" + (i % 2)));
			}
			List<UUID> ids = engine.client().enqueueAll(requests);
			await().atMost(TIMEOUT).until(() -> completed(ids) == ids.size());
			assertThat(admin.jdbc().queryForList("SELECT name FROM pgqueue_rate_windows", String.class))
				.as("the windows the runtime role reserved in")
				.anyMatch((name) -> name.contains("rated"))
				.anyMatch((name) -> name.startsWith(RateRepository.KEY_WINDOW_PREFIX));
			// Starts given back, as claims that found fewer jobs than they reserved give them.
			RateRepository windows = new RateRepository(new JdbcTemplate(runtimePool), schema());
			Grant grant = windows.reserve("runtime:back", 5, 60_000_000, 5);
			assertThat(grant.granted()).isEqualTo(5);
			windows.giveBack("runtime:back", grant, 2);
			assertThat(windows.reserve("runtime:back", 5, 60_000_000, 5).granted()).isEqualTo(2);
			// A key idle for a whole period: its window is deleted by the cleaner.
			await().atMost(TIMEOUT).until(() -> EngineInternals.of(engine).cleaner().pruneIdleRateKeys() > 0);
		}
	}

	@Test
	void aRunningJobReportsProgressAndIsCancelledInBothModes() throws Exception {
		Map<UUID, CountDownLatch> started = new ConcurrentHashMap<>();
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		for (QueueMode mode : QueueMode.values()) {
			handlers.register(withContext("steps." + mode, "steps_" + mode, (job, context) -> {
				started.computeIfAbsent(job.id(), (id) -> new CountDownLatch(1)).countDown();
				long until = System.nanoTime() + TIMEOUT.toNanos();
				int step = 0;
				while (!context.isCancellationRequested() && System.nanoTime() < until) {
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
					context.progress(10, "step " + step++);
				}
			}));
		}
		List<QueueSettings> queues = new ArrayList<>();
		for (QueueMode mode : QueueMode.values()) {
			queues.add(QueueSettings.defaults("steps_" + mode).withMode(mode).withBatchSize(1)
				.withPollInterval(Duration.ofMillis(50)));
		}
		try (QueueEngine engine = engine(handlers, queues, true)) {
			engine.start();
			for (QueueMode mode : QueueMode.values()) {
				UUID id = engine.client().enqueue("steps." + mode, null);
				assertThat(started.computeIfAbsent(id, (k) -> new CountDownLatch(1)).await(TIMEOUT.toSeconds(),
						TimeUnit.SECONDS)).isTrue();
				await().atMost(TIMEOUT).until(() -> engine.admin().progress(id).map(JobProgress::percent).orElse(null),
						(percent) -> Integer.valueOf(10).equals(percent));

				assertThat(engine.admin().cancel(id).outcome()).as(mode.name()).isEqualTo(AdminResult.Outcome.CANCEL_REQUESTED);
				await().atMost(TIMEOUT).until(() -> engine.admin().find(id).orElseThrow().state() == JobState.CANCELLED);
				await().atMost(TIMEOUT).until(() -> admin.jdbc().queryForObject("SELECT count(*) FROM pgqueue_job_controls c "
						+ "JOIN pgqueue_all_jobs j ON j.id = c.job_id WHERE j.public_id = ?", Long.class, id) == 0);
			}
		}
	}

	@Test
	void theHistoryIsFlushedAndTheCleanerPrunesItAndFinishedJobs() {
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		handlers.register(QueueFixture.handler("hist.job", "hist", (job) -> {
		}));
		try (QueueEngine engine = engine(handlers, List.of(QueueSettings.defaults("hist")
			.withPollInterval(Duration.ofMillis(50))), false)) {
			engine.start();
			List<UUID> ids = engine.client().enqueueAll(List.of(JobRequest.of("hist.job", 1), JobRequest.of("hist.job", 2),
					JobRequest.of("hist.job", 3)));
			await().atMost(TIMEOUT).until(() -> completed(ids) == 3);
			await().atMost(TIMEOUT).untilAsserted(() -> {
				EngineInternals.of(engine).historyFlusher().flush();
				assertThat(admin.jdbc().queryForObject("SELECT coalesce(sum(completed), 0) FROM pgqueue_queue_history "
						+ "WHERE queue = 'hist'", Long.class)).isEqualTo(3);
			});
			assertThat(engine.admin().history(Duration.ofHours(1), Duration.ofMinutes(1)))
				.filteredOn((history) -> history.queue().equals("hist"))
				.singleElement()
				.satisfies((history) -> assertThat(history.points().stream().mapToLong(QueueHistory.Point::completed).sum())
					.isEqualTo(3));

			admin.jdbc().update("INSERT INTO pgqueue_queue_history (queue, minute, completed) "
					+ "VALUES ('hist_old', date_trunc('minute', now()) - interval '30 days', 1)");
			assertThat(EngineInternals.of(engine).cleaner().pruneHistory()).isGreaterThanOrEqualTo(1);
			assertThat(admin.jdbc().queryForObject("SELECT count(*) FROM pgqueue_queue_history WHERE queue = 'hist_old'",
					Long.class)).isZero();

			admin.jdbc().update("UPDATE pgqueue_finished_jobs SET finished_at = now() - interval '30 days' "
					+ "WHERE public_id = ANY(?::uuid[])", (Object) ids.stream().map(UUID::toString).toArray(String[]::new));
			// The cleaner's own thread may take the turn; either way the runtime role deletes them.
			await().atMost(TIMEOUT).until(() -> {
				EngineInternals.of(engine).cleaner().clean();
				return jobsLeft(ids) == 0;
			});
		}
	}

	@Test
	void concurrencyLimitsAndFairnessHoldAcrossKeys() {
		AtomicInteger running = new AtomicInteger();
		AtomicInteger mostRunning = new AtomicInteger();
		Map<String, AtomicInteger> runningByKey = new ConcurrentHashMap<>();
		AtomicInteger mostOfOneKey = new AtomicInteger();
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		handlers.register(QueueFixture.handler("limited.job", "limited", (job) -> {
			AtomicInteger ofKey = runningByKey.computeIfAbsent(job.payload(), (k) -> new AtomicInteger());
			mostRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
			mostOfOneKey.accumulateAndGet(ofKey.incrementAndGet(), Math::max);
			Thread.sleep(30);
			ofKey.decrementAndGet();
			running.decrementAndGet();
		}));
		handlers.register(QueueFixture.handler("fair.job", "fair", (job) -> {
		}));
		handlers.register(QueueFixture.handler("ordered.job", "ordered", (job) -> {
		}));
		handlers.override(new KindSettings("ordered.job", 1, null));
		List<QueueSettings> queues = List.of(
				QueueSettings.defaults("limited").withConcurrency(4).withPollInterval(Duration.ofMillis(50))
					.withLimits(ConcurrencyLimits.of("limited", 1, false, 2)),
				QueueSettings.defaults("fair").withMode(QueueMode.LEASED).withPollInterval(Duration.ofMillis(50))
					.withFairness(KeyFairness.of("fair", Map.of("gold", 3))),
				QueueSettings.defaults("ordered").withPollInterval(Duration.ofMillis(50))
					.withLimits(ConcurrencyLimits.of("ordered", 0, true, 0)));
		try (QueueEngine engine = engine(handlers, queues, false)) {
			engine.start();
			List<JobRequest> requests = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				for (String key : List.of("a", "b", "c")) {
					requests.add(JobRequest.of("limited.job", key).concurrencyKey(key));
					requests.add(JobRequest.of("ordered.job", i).concurrencyKey(key));
				}
				for (String key : List.of("gold", "plain")) {
					requests.add(JobRequest.of("fair.job", i).concurrencyKey(key));
				}
			}
			List<UUID> ids = engine.client().enqueueAll(requests);
			await().atMost(TIMEOUT).until(() -> completed(ids) == ids.size());
			assertThat(mostRunning).as("most jobs of the queue running at once (max-running 2)").hasValueBetween(1, 2);
			assertThat(mostOfOneKey).as("most jobs of one key running at once (per-key 1)").hasValue(1);
		}
	}

	@Test
	void twoPhaseCommitPreparesCommitsAndResolvesWhatADeadWorkerLeft() throws Exception {
		SchemaName schema = schema();
		admin.jdbc().execute("CREATE TABLE IF NOT EXISTS effects (job_id uuid PRIMARY KEY)");
		assertThat(admin.jdbc().queryForObject("SELECT current_setting('max_prepared_transactions')::int", Integer.class))
			.as("max_prepared_transactions of the test server (the embedded one sets it)").isPositive();
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		handlers.register(withEffect("pay", "pay", (job) -> () -> admin.jdbc()
			.update("INSERT INTO effects (job_id) VALUES (?)", job.id())));
		QueueSettings pay = QueueSettings.defaults("pay").withBatchSize(1).withTwoPhaseCommit(true)
			.withPollInterval(Duration.ofMillis(50));
		QueueEngine engine = QueueEngine.builder(runtimePool)
			.settings(settings(schema, false).withTwoPhase(new TwoPhaseSettings(Duration.ofHours(1), Duration.ofMillis(1),
					Duration.ofHours(1))))
			.queues(new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE), List.of(pay)))
			.handlers(handlers)
			.transactionManager(new DataSourceTransactionManager(runtimePool))
			.inDoubtJobResolver((job) -> Boolean.TRUE.equals(admin.jdbc().queryForObject(
					"SELECT EXISTS (SELECT 1 FROM effects WHERE job_id = ?)", Boolean.class, job.id())))
			.adminCaller(() -> "runtime")
			.build();
		try (engine) {
			engine.start();
			List<UUID> ids = engine.client().enqueueAll(List.of(JobRequest.of("pay", 1), JobRequest.of("pay", 2)));
			await().atMost(TIMEOUT).until(() -> completed(ids) == 2);
			assertThat(admin.jdbc().queryForObject("SELECT count(*) FROM effects WHERE job_id = ANY(?::uuid[])", Long.class,
					(Object) ids.stream().map(UUID::toString).toArray(String[]::new))).isEqualTo(2);

			// A worker of this role prepared a job's transaction and died before committing it.
			engine.admin().pause("pay");
			UUID orphan = engine.client().enqueue(JobRequest.of("pay", 3));
			admin.jdbc().update("INSERT INTO effects (job_id) VALUES (?)", orphan);
			try (Connection worker = runtimePool.getConnection(); Statement sql = worker.createStatement()) {
				worker.setAutoCommit(false);
				sql.execute("UPDATE pgqueue_jobs SET state = 'completed', attempt = attempt + 1, finished_at = "
						+ "clock_timestamp() WHERE public_id = '" + orphan + "'");
				sql.execute("PREPARE TRANSACTION '" + TransactionIds.of(schema, "pay", orphan) + "'");
				worker.setAutoCommit(true);
			}
			InDoubtResolver resolver = EngineInternals.of(engine).inDoubtResolver();
			assertThat(resolver).isNotNull();
			assertThat(resolver.resolve().count()).as("prepared transactions left").isZero();
			assertThat(engine.admin().find(orphan).orElseThrow().state()).isEqualTo(JobState.COMPLETED);
			assertThat(admin.jdbc().queryForObject("SELECT count(*) FROM pg_prepared_xacts WHERE starts_with(gid, ?)",
					Long.class, TransactionIds.prefix(schema))).isZero();
			engine.admin().resume("pay");
		}
	}

	@Test
	void shardsRouteRunAndAdministerJobsOnEveryShard() {
		Map<String, HikariDataSource> pools = Map.of("one", runtimePool, "two", secondShardPool);
		List<String> ranOn = new CopyOnWriteArrayList<>();
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		handlers.register(QueueFixture.handler("sharded.job", "sharded", (job) -> ranOn.add(job.shard())));
		QueueEngineBuilder builder = QueueEngine.builder()
			.settings(settings(SchemaName.of(runtimePool.getSchema()), false))
			.queues(new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE),
					List.of(QueueSettings.defaults("sharded").withPollInterval(Duration.ofMillis(50)))))
			.handlers(handlers)
			.adminCaller(() -> "runtime");
		for (String shard : List.of("one", "two")) {
			HikariDataSource pool = pools.get(shard);
			builder.shard(shard, pool, (database) -> database.schema(SchemaName.of(pool.getSchema()))
				.transactionManager(new DataSourceTransactionManager(pool)));
		}
		QueueEngine engine = builder.build();
		ShardLayout layout = engine.layout().orElseThrow();
		JobClient client = engine.client();
		JobAdmin shardedAdmin = engine.admin();
		engine.start();
		try {
			List<UUID> ids = new ArrayList<>();
			for (int i = 0; i < 6; i++) {
				ids.add(client.enqueue(JobRequest.of("sharded.job", i).shard(layout.shards().get(i % 2))));
				ids.add(client.enqueue(JobRequest.of("sharded.job", i).concurrencyKey("key-" + i)));
			}
			await().atMost(TIMEOUT).until(() -> ids.stream()
				.allMatch((id) -> shardedAdmin.find(id).map((job) -> job.state() == JobState.COMPLETED).orElse(false)));
			assertThat(ranOn).containsOnly("one", "two").contains("one", "two");
			assertThat(secondShard.jdbc().queryForObject("SELECT count(*) FROM pgqueue_all_jobs WHERE state = 'completed' "
					+ "AND kind = 'sharded.job'", Long.class)).as("jobs run on the second shard's tables").isPositive();
			assertThat(shardedAdmin.counts().get("sharded").get(JobState.COMPLETED)).isEqualTo(ids.size());

			assertThat(shardedAdmin.pause("sharded")).isTrue();
			UUID waiting = client.enqueue(JobRequest.of("sharded.job", 99).shard("two"));
			assertThat(shardedAdmin.cancel(waiting).applied()).isTrue();
			assertThat(shardedAdmin.find(waiting).orElseThrow().state()).isEqualTo(JobState.CANCELLED);
			assertThat(shardedAdmin.resume("sharded")).isTrue();
		}
		finally {
			engine.close();
		}
	}

	@Test
	void aRoleWithoutStatisticsRightsStillDatesAnotherUsersHeldSnapshot() throws Exception {
		SchemaName schema = schema();
		QueueFixture.Maintenance maintenance = QueueFixture.Maintenance.of(QueueEngine.builder(runtimePool)
			.settings(EngineSettings.defaults(schema).withNotifications(false, EngineSettings.DEFAULT_NOTIFY_INTERVAL))
			.build());
		maintenance.readOldestTransaction();
		try (Connection holder = TestDatabase.get().connect()) {
			holder.setAutoCommit(false);
			holder.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
			try (Statement sql = holder.createStatement()) {
				sql.execute("SET application_name = 'nightly-export'");
				sql.executeQuery("SELECT count(*) FROM pg_class").close();
			}
			// Work elsewhere assigns transaction ids while the snapshot is held.
			for (int i = 0; i < 3; i++) {
				admin.jdbc().queryForObject("SELECT txid_current()", Long.class);
			}
			await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
				OldestTransaction oldest = maintenance.readOldestTransaction();
				assertThat(oldest.holder()).isEqualTo("nightly-export");
				assertThat(oldest.state()).as("hidden from this role").isNull();
				assertThat(oldest.ageEstimated()).isTrue();
				assertThat(oldest.transactionsSince()).isGreaterThanOrEqualTo(3);
				assertThat(oldest.age()).isPositive();
			});
			holder.rollback();
		}
	}

	private static SchemaName schema() {
		return SchemaName.of(admin.schema().name());
	}

	private static EngineSettings settings(SchemaName schema, boolean notifications) {
		return EngineSettings.defaults(schema)
			.withNotifications(notifications, Duration.ZERO)
			.withWorkers(new WorkerSettings(Duration.ofSeconds(5), false, false))
			.withHeartbeatInterval(Duration.ofMillis(200));
	}

	/** An engine of the runtime role on the first schema, with these handlers and queues. */
	private static QueueEngine engine(JobHandlerRegistry handlers, List<QueueSettings> queues, boolean notifications) {
		return QueueEngine.builder(runtimePool)
			.settings(settings(schema(), notifications))
			.queues(new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE), queues))
			.handlers(handlers)
			.transactionManager(new DataSourceTransactionManager(runtimePool))
			.adminCaller(() -> "runtime")
			.build();
	}

	private static long completed(List<UUID> ids) {
		return admin.jdbc().queryForObject("SELECT count(*) FROM pgqueue_all_jobs WHERE state = 'completed' "
				+ "AND public_id = ANY(?::uuid[])", Long.class, (Object) ids.stream().map(UUID::toString).toArray(String[]::new));
	}

	private static long jobsLeft(List<UUID> ids) {
		return admin.jdbc().queryForObject("SELECT count(*) FROM pgqueue_all_jobs WHERE public_id = ANY(?::uuid[])",
				Long.class, (Object) ids.stream().map(UUID::toString).toArray(String[]::new));
	}

	/** A handler whose listener runs with its {@link JobContext} and returns nothing. */
	private static JobHandler withContext(String kind, String queue, BiConsumer<Job, JobContext> body) {
		return new JobHandler() {

			@Override
			public String kind() {
				return kind;
			}

			@Override
			public String queue() {
				return queue;
			}

			@Override
			public void handle(Job job) {
				throw new IllegalStateException("runs with its context");
			}

			@Override
			public Returned handleForResult(Job job, JobContext context) {
				body.accept(job, context);
				return Returned.NOTHING;
			}

			@Override
			public String description() {
				return "a listener reporting progress until cancelled";
			}

		};
	}

	/** A handler whose listener returns an external effect, run after the job's transaction is prepared. */
	private static JobHandler withEffect(String kind, String queue,
			QueueFixture.ThrowingFunction<Job, ExternalEffect> body) {
		return new JobHandler() {

			@Override
			public String kind() {
				return kind;
			}

			@Override
			public String queue() {
				return queue;
			}

			@Override
			public void handle(Job job) throws Throwable {
				body.apply(job);
			}

			@Override
			public ExternalEffect handleForEffect(Job job) throws Throwable {
				return body.apply(job);
			}

			@Override
			public boolean hasExternalEffect() {
				return true;
			}

			@Override
			public String description() {
				return "a listener with an external effect";
			}

		};
	}

	/** The test URL may carry user and password parameters, which would override the role's. */
	private static String withoutCredentials(String url) {
		int query = url.indexOf('?');
		if (query < 0) {
			return url;
		}
		String kept = java.util.Arrays.stream(url.substring(query + 1).split("&"))
			.filter((parameter) -> !parameter.startsWith("user=") && !parameter.startsWith("password="))
			.collect(java.util.stream.Collectors.joining("&"));
		return url.substring(0, query) + (kept.isEmpty() ? "" : "?" + kept);
	}

	/**
	 * Every event the engine logs, at any level (DEBUG included, where some failures go), that carries a
	 * refused permission, in its message or any of its exceptions. Some log only the exception's
	 * {@code toString()}, in which Spring names a refused permission (SQLSTATE 42501) as "bad SQL grammar"
	 * without the server's message, so that counts too. Events from INFO up still reach the console as
	 * before.
	 */
	private static final class PermissionFailures extends AppenderBase<ILoggingEvent> {

		private static final Pattern REFUSED = Pattern.compile("permission denied|bad SQL grammar|42501");

		private final List<String> refused = new CopyOnWriteArrayList<>();

		private final Logger engine = (Logger) LoggerFactory.getLogger("dev.pgqueue");

		private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);

		private Level level;

		private boolean additive;

		void attach() {
			this.level = this.engine.getLevel();
			this.additive = this.engine.isAdditive();
			setContext(this.engine.getLoggerContext());
			setName("permission-failures");
			start();
			this.engine.addAppender(this);
			this.engine.setLevel(Level.DEBUG);
			this.engine.setAdditive(false);
		}

		void detach() {
			this.engine.detachAppender(this);
			this.engine.setLevel(this.level);
			this.engine.setAdditive(this.additive);
			stop();
		}

		List<String> takeAll() {
			List<String> taken = List.copyOf(this.refused);
			this.refused.removeAll(taken);
			return taken;
		}

		@Override
		protected void append(ILoggingEvent event) {
			if (event.getLevel().isGreaterOrEqual(Level.INFO)) {
				this.root.callAppenders(event);
			}
			StringBuilder text = new StringBuilder(event.getFormattedMessage());
			for (IThrowableProxy thrown = event.getThrowableProxy(); thrown != null; thrown = thrown.getCause()) {
				text.append(" / ").append(thrown.getClassName()).append(": ").append(thrown.getMessage());
			}
			if (REFUSED.matcher(text).find()) {
				this.refused.add(event.getLevel() + " " + event.getLoggerName() + " [" + Instant.now() + "]: " + text);
			}
		}

	}

}
