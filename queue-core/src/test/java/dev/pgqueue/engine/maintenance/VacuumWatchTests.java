package dev.pgqueue.engine.maintenance;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.sql.MaintenanceRepository.VacuumReading;
import dev.pgqueue.metrics.VacuumHealth;
import dev.pgqueue.metrics.VacuumHealth.Verdict;
import dev.pgqueue.schema.SchemaName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How {@link VacuumWatch} judges readings and when it logs, on readings made up for each rule.
 * Reading the real catalog and statistics is in {@code VacuumHealthTests}.
 */
class VacuumWatchTests {

	private static final Duration OVERDUE = MaintenanceSettings.VACUUM_OVERDUE_AFTER;

	private final VacuumWatch watch = new VacuumWatch(SchemaName.of("jobs"), 100_000);

	private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

	@BeforeEach
	void captureLogs() {
		this.logs.start();
		((Logger) LoggerFactory.getLogger(VacuumWatch.class)).addAppender(this.logs);
	}

	@AfterEach
	void releaseLogs() {
		((Logger) LoggerFactory.getLogger(VacuumWatch.class)).detachAppender(this.logs);
	}

	@Test
	void autovacuumOnAndFewDeadRowsIsFine() {
		VacuumHealth health = this.watch.read(reading(true, true, true, 5_000, 20_000, Duration.ofSeconds(30)));

		assertThat(health.verdict()).isEqualTo(Verdict.FINE);
		assertThat(health.findings()).isEmpty();
		assertThat(health.autovacuumOff()).isFalse();
		assertThat(this.logs.list).isEmpty();
	}

	@Test
	void deadRowsFromTheThresholdThatOutnumberTheLiveOnesAndWereNotVacuumedForTenMinutesAreGrowing() {
		VacuumHealth health = this.watch.read(reading(true, true, true, 100_000, 99_999, OVERDUE));

		assertThat(health.verdict()).isEqualTo(Verdict.DEAD_ROWS_GROWING);
		assertThat(health.message()).contains("100000 dead rows", "VACUUM jobs.pgqueue_jobs;", "long transaction",
				"autovacuum_vacuum_cost_limit");
		assertThat(this.watch.read(reading(true, true, true, 300_000, 0, null)).verdict())
			.as("never vacuumed").isEqualTo(Verdict.DEAD_ROWS_GROWING);
	}

	@Test
	void deadRowsBelowTheThresholdFewerThanTheLiveOnesOrRecentlyVacuumedAreNotGrowing() {
		assertThat(this.watch.read(reading(true, true, true, 99_999, 0, null)).findings()).as("below the threshold")
			.isEmpty();
		assertThat(this.watch.read(reading(true, true, true, 200_000, 200_000, null)).findings())
			.as("no more than the live rows")
			.isEmpty();
		assertThat(this.watch.read(reading(true, true, true, 200_000, 0, OVERDUE.minusSeconds(1))).findings())
			.as("vacuumed within ten minutes")
			.isEmpty();
	}

	@Test
	void findsEveryProblemWithTheServersFirstAndNamesWhatToDoForEach() {
		VacuumHealth health = this.watch.read(reading(false, false, false, 300_000, 10, null));

		assertThat(health.verdict()).isEqualTo(Verdict.SERVER_AUTOVACUUM_OFF);
		assertThat(health.findings()).containsExactly(Verdict.SERVER_AUTOVACUUM_OFF, Verdict.TABLE_AUTOVACUUM_OFF,
				Verdict.DEAD_ROWS_GROWING);
		assertThat(health.autovacuumOff()).isTrue();
		assertThat(health.message()).contains("ALTER SYSTEM SET autovacuum = on; SELECT pg_reload_conf();",
				"ALTER SYSTEM SET track_counts = on;", "ALTER TABLE jobs.pgqueue_jobs RESET (autovacuum_enabled);",
				"VACUUM jobs.pgqueue_jobs;");
		assertThat(this.watch.read(reading(true, false, true, 0, 0, null)).verdict())
			.as("autovacuum cannot work without track_counts")
			.isEqualTo(Verdict.SERVER_AUTOVACUUM_OFF);
	}

	@Test
	void warnsWhenAProblemAppearsNotWhileItLastsAndSaysWhenItCleared() {
		this.watch.read(reading(true, true, false, 0, 0, null));
		this.watch.read(reading(true, true, false, 0, 0, null));
		this.watch.read(reading(true, true, false, 10, 0, null));

		assertThat(warnings()).singleElement()
			.satisfies((message) -> assertThat(message).contains("ALTER TABLE jobs.pgqueue_jobs RESET (autovacuum_enabled);"));

		this.watch.read(reading(true, true, false, 200_000, 0, null));
		assertThat(warnings()).as("a new finding warns again").hasSize(2).last()
			.satisfies((message) -> assertThat(message).contains("VACUUM jobs.pgqueue_jobs;"));

		this.watch.read(reading(true, true, false, 0, 0, Duration.ZERO));
		this.watch.read(reading(true, true, true, 0, 0, Duration.ZERO));
		assertThat(warnings()).as("findings that go away do not warn").hasSize(2);
		assertThat(this.logs.list).filteredOn((event) -> event.getLevel() == Level.INFO).singleElement()
			.satisfies((event) -> assertThat(event.getFormattedMessage()).contains("vacuumed again"));
		assertThat(this.watch.last().verdict()).isEqualTo(Verdict.FINE);
	}

	private List<String> warnings() {
		return this.logs.list.stream()
			.filter((event) -> event.getLevel() == Level.WARN)
			.map(ILoggingEvent::getFormattedMessage)
			.toList();
	}

	private static VacuumReading reading(boolean server, boolean trackCounts, boolean table, long dead, long live,
			Duration sinceLastVacuum) {
		Instant lastVacuum = (sinceLastVacuum != null) ? Instant.parse("2026-11-23T12:00:00Z") : null;
		return new VacuumReading(server, trackCounts, table, dead, live, lastVacuum, sinceLastVacuum);
	}

}
