package dev.pgqueue;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.metrics.OldestTransaction;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * With migrations applied by an administrator and turned off at runtime, an application role that
 * holds only the grants the README lists (no DDL) can enqueue, poll in both modes and run every
 * background service.
 */
class RuntimeRoleTests {

	private static QueueFixture admin;

	private static String role;

	private static HikariDataSource runtimePool;

	@BeforeAll
	static void setUp() throws Exception {
		admin = QueueFixture.create("runtime_role");
		String schema = admin.schema().name();
		role = "pgqueue_rt_" + UUID.randomUUID().toString().substring(0, 8);
		try (Connection connection = TestDatabase.get().connect(); Statement sql = connection.createStatement()) {
			sql.execute("CREATE ROLE " + role + " LOGIN PASSWORD 'runtime'");
			// The grants the README documents, nothing more.
			sql.execute("GRANT USAGE ON SCHEMA " + schema + " TO " + role);
			sql.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON " + schema + ".pgqueue_jobs, " + schema
					+ ".pgqueue_members, " + schema + ".pgqueue_leaders, " + schema + ".pgqueue_buckets, " + schema
					+ ".pgqueue_queue_pauses, " + schema + ".pgqueue_pollers, " + schema + ".pgqueue_handled_kinds, "
					+ schema + ".pgqueue_unique_periods, " + schema + ".pgqueue_schedules TO " + role);
			sql.execute("CREATE TABLE " + schema + ".ledger (job_id uuid PRIMARY KEY)");
			sql.execute("GRANT SELECT, INSERT ON " + schema + ".ledger TO " + role);
		}
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(withoutCredentials(TestDatabase.get().jdbcUrl()));
		config.setUsername(role);
		config.setPassword("runtime");
		config.setSchema(schema);
		config.setMaximumPoolSize(8);
		runtimePool = new HikariDataSource(config);
	}

	@AfterAll
	static void tearDown() throws Exception {
		runtimePool.close();
		admin.close();
		try (Connection connection = TestDatabase.get().connect(); Statement sql = connection.createStatement()) {
			sql.execute("DROP ROLE IF EXISTS " + role);
		}
	}

	@Test
	void aRoleWithoutDdlRightsRunsTheWholeQueueWhenMigrationsAreOff() {
		SchemaName schema = SchemaName.of(admin.schema().name());
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
			await().atMost(Duration.ofSeconds(30)).until(() -> {
				maintenance.promote();
				return jdbc.queryForObject("SELECT count(*) FROM ledger", Long.class) == 4;
			});
			assertThat(ran).containsExactlyInAnyOrder("tx.job", "leased.job", "bucketed.job");
			assertThat(maintenance.rescue()).isZero();
			assertThat(maintenance.clean()).isZero();
			assertThat(maintenance.readStats()).containsKeys("tx", "leased", "bucketed");
			assertThat(ids).hasSize(3);
			assertThat(engine.pollingHeartbeat().refresh().polled()).contains("tx", "leased", "bucketed");
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
			assertThat(maintenance.clean()).isZero();

			UUID unique = client.enqueue(JobRequest.of("tx.job", 6).uniqueKey("once", Duration.ofHours(1))
				.delay(Duration.ofHours(2)));
			assertThat(client.enqueue(JobRequest.of("tx.job", 7).uniqueKey("once", Duration.ofHours(1)))).isEqualTo(unique);
			assertThat(maintenance.pruneEndedKeys()).isZero();

			engine.schedules().save(Schedule.of("runtime", "0 0 * * * *", "tx.job"));
			jdbc.update("UPDATE " + schema.qualify("pgqueue_schedules") + " SET next_tick = now() - interval '1 second'");
			// Fired by this pass or by the engine's own ticker, both as the runtime role.
			engine.scheduleTicker().pass();
			await().atMost(Duration.ofSeconds(30))
				.until(() -> engine.schedules().get("runtime").orElseThrow().lastTick() != null);
			assertThat(engine.schedules().pause("runtime")).isTrue();
			assertThat(engine.schedules().runNow("runtime")).isNotNull();
			assertThat(engine.schedules().delete("runtime")).isTrue();
		}
		finally {
			engine.close();
		}
	}

	@Test
	void aRoleWithoutStatisticsRightsStillDatesAnotherUsersHeldSnapshot() throws Exception {
		SchemaName schema = SchemaName.of(admin.schema().name());
		JdbcTemplate jdbc = new JdbcTemplate(runtimePool);
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

}
