package dev.pgqueue;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.maintenance.VacuumWatch;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.metrics.MicrometerQueueMetrics;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.metrics.VacuumHealth;
import dev.pgqueue.metrics.VacuumHealth.Verdict;
import dev.pgqueue.schema.SchemaName;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The vacuum check against the real catalog and statistics, on a fresh jobs table per test. The
 * server's own {@code autovacuum} may be on or off wherever these run, and they never change it:
 * what they assert of the server they read from {@code SHOW}, and what they make happen they make
 * on the test's own table.
 */
class VacuumHealthTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

	private QueueFixture fixture;

	private String table;

	@BeforeEach
	void setUp() {
		this.fixture = QueueFixture.create("vacuum");
		this.table = this.fixture.schema().name() + ".pgqueue_jobs";
		this.logs.start();
		((Logger) LoggerFactory.getLogger(VacuumWatch.class)).addAppender(this.logs);
	}

	@AfterEach
	void tearDown() {
		((Logger) LoggerFactory.getLogger(VacuumWatch.class)).detachAppender(this.logs);
		this.fixture.close();
	}

	@Test
	void reportsTheServersAutovacuumAsShowSaysIt() {
		VacuumHealth health = EngineInternals.of(engine(MaintenanceSettings.DEFAULT)).statsReader().checkVacuum();

		boolean autovacuum = show("autovacuum");
		boolean trackCounts = show("track_counts");
		assertThat(health.serverAutovacuum()).isEqualTo(autovacuum);
		assertThat(health.trackCounts()).isEqualTo(trackCounts);
		assertThat(health.findings().contains(Verdict.SERVER_AUTOVACUUM_OFF)).isEqualTo(!autovacuum || !trackCounts);
		assertThat(health.message().contains("ALTER SYSTEM SET autovacuum = on;")).isEqualTo(!autovacuum);
		assertThat(gauge("pgqueue.table.autovacuum.off")).isEqualTo((autovacuum && trackCounts) ? 0 : 1);
	}

	@Test
	void findsAutovacuumDisabledForTheJobsTableAndNamesTheCommandThatTurnsItBackOn() {
		QueueEngine engine = engine(MaintenanceSettings.DEFAULT);
		this.fixture.jdbc().execute("ALTER TABLE " + this.table + " SET (autovacuum_enabled = false)");

		VacuumHealth off = EngineInternals.of(engine).statsReader().checkVacuum();
		assertThat(off.tableAutovacuum()).isFalse();
		assertThat(off.findings()).contains(Verdict.TABLE_AUTOVACUUM_OFF);
		assertThat(off.message()).contains("ALTER TABLE " + this.table + " RESET (autovacuum_enabled);");
		assertThat(gauge("pgqueue.table.autovacuum.off")).isEqualTo(1);
		assertThat(EngineInternals.of(engine).statsReader().lastVacuumHealth()).isEqualTo(off);

		this.fixture.jdbc().execute("ALTER TABLE " + this.table + " RESET (autovacuum_enabled)");

		VacuumHealth reset = EngineInternals.of(engine).statsReader().checkVacuum();
		assertThat(reset.tableAutovacuum()).isTrue();
		assertThat(reset.findings()).doesNotContain(Verdict.TABLE_AUTOVACUUM_OFF);
		assertThat(reset.message()).doesNotContain("RESET (autovacuum_enabled)");
		assertThat(gauge("pgqueue.table.autovacuum.off")).isEqualTo(serverAutovacuumRuns() ? 0 : 1);
	}

	@Test
	void findsDeadRowsThatGrowWithoutVacuumUntilTheTableIsVacuumed() throws Exception {
		assumeThat(show("track_counts")).as("dead rows are counted only with track_counts on").isTrue();
		// Where the server runs autovacuum, it could remove the dead rows before they are read.
		this.fixture.jdbc().execute("ALTER TABLE " + this.table + " SET (autovacuum_enabled = false)");
		QueueEngine engine = engine(MaintenanceSettings.DEFAULT.withDeadRowsWarning(1_000));
		makeDeadRows(2_000);

		await().atMost(WAIT).untilAsserted(() -> {
			VacuumHealth health = EngineInternals.of(engine).statsReader().checkVacuum();
			assertThat(health.deadRows()).isGreaterThanOrEqualTo(2_000);
			assertThat(health.findings()).contains(Verdict.DEAD_ROWS_GROWING);
			assertThat(health.message()).contains("VACUUM " + this.table + ";");
		});
		assertThat(gauge("pgqueue.table.dead.rows")).isGreaterThanOrEqualTo(2_000);
		assertThat(EngineInternals.of(this.fixture.engine()).statsReader().checkVacuum().findings())
			.as("below the default threshold")
			.doesNotContain(Verdict.DEAD_ROWS_GROWING);

		this.fixture.jdbc().execute("VACUUM " + this.table);

		await().atMost(WAIT).untilAsserted(() -> {
			VacuumHealth health = EngineInternals.of(engine).statsReader().checkVacuum();
			assertThat(health.lastVacuum()).isNotNull();
			assertThat(health.findings()).doesNotContain(Verdict.DEAD_ROWS_GROWING);
		});
	}

	@Test
	void warnsOnceAtStartWhenAutovacuumIsDisabledForTheJobsTable() {
		this.fixture.jdbc().execute("ALTER TABLE " + this.table + " SET (autovacuum_enabled = false)");
		AtomicInteger reads = new AtomicInteger();
		QueueEngine engine = engine(MaintenanceSettings.DEFAULT.withStatsInterval(Duration.ofMillis(50)), reads);

		engine.start();
		try {
			assertThat(warnings()).as("logged by start() itself").singleElement()
				.satisfies((message) -> assertThat(message).contains(
						"ALTER TABLE " + this.table + " RESET (autovacuum_enabled);"));
			await().atMost(WAIT).until(() -> reads.get() >= 5);
			assertThat(warnings()).as("the stats reader's readings find the same and stay quiet").hasSize(1);
		}
		finally {
			engine.stop();
		}
	}

	@Test
	void saysNothingAtStartAboutATableThatAutovacuumMayVacuum() {
		AtomicInteger reads = new AtomicInteger();
		QueueEngine engine = engine(MaintenanceSettings.DEFAULT.withStatsInterval(Duration.ofMillis(50)), reads);

		engine.start();
		try {
			await().atMost(WAIT).until(() -> reads.get() >= 5);
			assertThat(warnings()).noneMatch((message) -> message.contains("RESET (autovacuum_enabled)"));
			if (serverAutovacuumRuns()) {
				assertThat(warnings()).isEmpty();
			}
			else {
				assertThat(warnings()).singleElement()
					.satisfies((message) -> assertThat(message).contains("ALTER SYSTEM SET"));
			}
		}
		finally {
			engine.stop();
		}
	}

	@Test
	void startsWhenTheVacuumCheckCannotRead() {
		QueueEngine engine = this.fixture.engineBuilder()
			.settings(EngineSettings.defaults(SchemaName.of("pgqueue_no_such_schema")))
			.processing(false)
			.build();

		assertThatNoException().isThrownBy(engine::start);
		assertThat(engine.isRunning()).isTrue();
		assertThat(EngineInternals.of(engine).statsReader().lastVacuumHealth()).isNull();
		assertThat(warnings()).isEmpty();
		engine.stop();
	}

	private QueueEngine engine(MaintenanceSettings maintenance) {
		return engine(maintenance, null);
	}

	/** An engine on the fixture's table; counts its vacuum readings in {@code reads} when given. */
	private QueueEngine engine(MaintenanceSettings maintenance, AtomicInteger reads) {
		MicrometerQueueMetrics micrometer = new MicrometerQueueMetrics(this.registry, List.of());
		QueueMetrics metrics = (reads == null) ? micrometer : new QueueMetrics() {
			@Override
			public void vacuumHealth(VacuumHealth health) {
				reads.incrementAndGet();
				micrometer.vacuumHealth(health);
			}
		};
		return this.fixture.engineBuilder()
			.settings(this.fixture.engineSettings().withMaintenance(maintenance))
			.metrics(metrics)
			.build();
	}

	/** Inserts and deletes {@code rows} jobs, then makes this session's statistics visible to others now. */
	private void makeDeadRows(int rows) throws Exception {
		try (Connection connection = this.fixture.dataSource().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("INSERT INTO " + this.table + " (public_id, kind, queue, payload, state, max_attempts) "
					+ "SELECT gen_random_uuid(), 'vacuum.test', 'vacuum', '{}', 'available', 1 "
					+ "FROM generate_series(1, " + rows + ")");
			statement.execute("DELETE FROM " + this.table);
			// PostgreSQL 15 flushes a session's statistics at most once a second; this flushes them as soon
			// as the session is idle (older servers had no such function and sent them within half a second).
			if (connection.getMetaData().getDatabaseMajorVersion() >= 15) {
				statement.execute("SELECT pg_stat_force_next_flush()");
			}
		}
	}

	/** The vacuum warnings about this test's table (every message names its table). */
	private List<String> warnings() {
		return this.logs.list.stream()
			.filter((event) -> event.getLevel() == Level.WARN)
			.map(ILoggingEvent::getFormattedMessage)
			.filter((message) -> message.contains(this.table))
			.toList();
	}

	private boolean serverAutovacuumRuns() {
		return show("autovacuum") && show("track_counts");
	}

	private boolean show(String setting) {
		return "on".equals(this.fixture.jdbc().queryForObject("SHOW " + setting, String.class));
	}

	private double gauge(String name) {
		return this.registry.get(name).gauge().value();
	}

}
