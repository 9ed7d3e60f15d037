package dev.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.util.List;
import java.util.Map;

import dev.pgqueue.QueueHistory.Point;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.settings.HistorySettings;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Each queue's per-minute history: attempts run by a real engine come back from
 * {@link JobAdmin#history} with their outcomes, waits and run times; two instances that flush the
 * same minute add up; the cleaner prunes minutes past the retention; a disabled history records
 * nothing; and the read rejects windows and steps it cannot serve.
 */
class QueueHistoryTests {

	private static final Duration SLEEP = Duration.ofMillis(200);

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("history");
		RetryPolicy quickRetry = new RetryPolicy(Duration.ofMillis(50), Duration.ofMillis(50), 1.0, 0);
		fixture.configure(QueueSettings.defaults("hist_main").withPollInterval(Duration.ofMillis(50)).withRetry(quickRetry));
		fixture.handle("hist.ok", "hist_main", (job) -> Thread.sleep(SLEEP.toMillis()));
		fixture.handle("hist.fail", "hist_main", (job) -> {
			throw new IllegalStateException("always fails");
		});
		fixture.handle("hist.flaky", "hist_main", (job) -> {
			if (job.attempt() == 1) {
				throw new IllegalStateException("fails once");
			}
		});
		fixture.handle("pair.short", "hist_pair", (job) -> Thread.sleep(100));
		fixture.handle("pair.long", "hist_pair", (job) -> Thread.sleep(300));
		fixture.handle("off.ok", "hist_off", (job) -> {
		});
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void attemptsRunByAnEngineComeBackWithTheirOutcomesWaitsAndRunTimes() {
		try (QueueEngine engine = fixture.engine()) {
			engine.start();
			JobClient client = engine.client();
			Instant fiveSecondsAgo = Instant.now().minusSeconds(5);
			for (int i = 0; i < 2; i++) {
				client.enqueue(JobRequest.of("hist.ok", Map.of()).queue("hist_main").runAt(fiveSecondsAgo));
				client.enqueue(JobRequest.of("hist.fail", Map.of()).queue("hist_main").maxAttempts(1));
			}
			client.enqueue(JobRequest.of("hist.flaky", Map.of()).queue("hist_main").maxAttempts(2));

			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				EngineInternals.of(engine).historyFlusher().flush();
				Totals totals = Totals.of(history(engine.admin(), "hist_main"));
				assertThat(totals.completed).as("completed").isEqualTo(3);
				assertThat(totals.failed).as("failed for good").isEqualTo(2);
				assertThat(totals.retried).as("retried").isEqualTo(1);
			});
			List<Point> points = history(engine.admin(), "hist_main").points();
			assertThat(points).hasSize(60);
			assertThat(points.get(points.size() - 1).start()).isBefore(Instant.now());
			Totals totals = Totals.of(history(engine.admin(), "hist_main"));
			assertThat(totals.maxWait).as("the jobs due five seconds before they were enqueued")
				.isGreaterThanOrEqualTo(Duration.ofSeconds(5));
			assertThat(totals.maxRun).as("the jobs that slept").isGreaterThanOrEqualTo(SLEEP);
		}
	}

	@Test
	void twoInstancesFlushingTheSameMinuteAddUp() {
		// Far enough from the end of the minute that both flushes land in the same one.
		await().atMost(Duration.ofSeconds(60)).until(() -> LocalTime.now().getSecond() < 40);
		try (QueueEngine first = fixture.engine(); QueueEngine second = fixture.engine()) {
			JobClient client = first.client();
			for (int i = 0; i < 2; i++) {
				client.enqueue(JobRequest.of("pair.short", Map.of()).queue("hist_pair"));
			}
			assertThat(first.runDueHere("hist_pair", 2)).hasSize(2);
			for (int i = 0; i < 3; i++) {
				client.enqueue(JobRequest.of("pair.long", Map.of()).queue("hist_pair"));
			}
			assertThat(second.runDueHere("hist_pair", 3)).hasSize(3);

			// The instance with the longer runs flushes first: the second flush must not lower its maximum.
			assertThat(EngineInternals.of(second).historyFlusher().flush()).isEqualTo(1);
			assertThat(EngineInternals.of(first).historyFlusher().flush()).isEqualTo(1);

			List<Map<String, Object>> rows = fixture.jdbc()
				.queryForList("SELECT completed, runs, run_ms_max FROM " + fixture.schema().name()
						+ ".pgqueue_queue_history WHERE queue = 'hist_pair'");
			assertThat(rows).as("one row for the minute both instances flushed").hasSize(1);
			assertThat(rows.get(0)).containsEntry("completed", 5L).containsEntry("runs", 5L);
			Totals totals = Totals.of(history(first.admin(), "hist_pair"));
			assertThat(totals.completed).isEqualTo(5);
			assertThat(totals.maxRun).as("the larger maximum of the two").isGreaterThanOrEqualTo(Duration.ofMillis(300));
			assertThat(totals.meanRun).as("(2 x 100 ms + 3 x 300 ms) / 5")
				.isGreaterThanOrEqualTo(Duration.ofMillis(220))
				.isLessThan(totals.maxRun);
		}
	}

	@Test
	void theCleanerPrunesMinutesPastTheRetention() {
		String table = fixture.schema().name() + ".pgqueue_queue_history";
		fixture.jdbc().update("INSERT INTO " + table + " (queue, minute, completed) VALUES "
				+ "('hist_old', date_trunc('minute', now()) - interval '3 days', 7), "
				+ "('hist_old', date_trunc('minute', now()) - interval '47 hours', 8), "
				+ "('hist_old', date_trunc('minute', now()) - interval '1 minute', 9)");
		try (QueueEngine engine = fixture.engine()) {
			assertThat(EngineInternals.of(engine).historySettings().retention()).isEqualTo(Duration.ofDays(2));
			EngineInternals.of(engine).cleaner().start();
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(fixture.jdbc()
					.queryForList("SELECT completed FROM " + table + " WHERE queue = 'hist_old' ORDER BY minute",
							Long.class))
					.containsExactly(8L, 9L));
		}
	}

	@Test
	void aDisabledHistoryRecordsAndWritesNothing() {
		try (QueueEngine engine = fixture.engineBuilder().history(new HistorySettings(false, Duration.ofDays(2))).build()) {
			engine.client().enqueue(JobRequest.of("off.ok", Map.of()).queue("hist_off"));
			assertThat(engine.runDueHere("hist_off", 1)).hasSize(1);

			EngineInternals internals = EngineInternals.of(engine);
			assertThat(internals.historyRecorder().enabled()).isFalse();
			assertThat(internals.historyRecorder().drain()).isEmpty();
			assertThat(internals.historyFlusher().flush()).isZero();
			assertThat(internals.services()).doesNotContain(internals.historyFlusher());
			assertThat(fixture.jdbc()
				.queryForObject("SELECT count(*) FROM " + fixture.schema().name()
						+ ".pgqueue_queue_history WHERE queue = 'hist_off'", Long.class)).isZero();
		}
	}

	@Test
	void theReadRejectsStepsAndWindowsItCannotServe() {
		try (QueueEngine engine = fixture.engine()) {
			JobAdmin admin = engine.admin();
			assertThatIllegalArgumentException().isThrownBy(() -> admin.history(Duration.ofHours(1), Duration.ofSeconds(30)))
				.withMessageContaining("whole minutes");
			assertThatIllegalArgumentException().isThrownBy(() -> admin.history(Duration.ofDays(3), Duration.ofHours(1)))
				.withMessageContaining("pgqueue.history.retention");
			assertThatIllegalArgumentException().isThrownBy(() -> admin.history(Duration.ofDays(1), Duration.ofMinutes(1)))
				.withMessageContaining("more than 500")
				.withMessageContaining("PT3M");
			assertThatIllegalArgumentException().isThrownBy(() -> admin.history(Duration.ofMinutes(5), Duration.ofMinutes(10)))
				.withMessageContaining("at least its step");
		}
	}

	private static QueueHistory history(JobAdmin admin, String queue) {
		return admin.history(Duration.ofHours(1), Duration.ofMinutes(1))
			.stream()
			.filter((history) -> history.queue().equals(queue))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no history of queue " + queue));
	}

	/** A queue's points added up: counts summed, maxima the largest, the mean run over every run. */
	private record Totals(long completed, long failed, long retried, Duration maxWait, Duration maxRun,
			Duration meanRun) {

		static Totals of(QueueHistory history) {
			long completed = 0;
			long failed = 0;
			long retried = 0;
			Duration maxWait = Duration.ZERO;
			Duration maxRun = Duration.ZERO;
			Duration meanRun = Duration.ZERO;
			for (Point point : history.points()) {
				completed += point.completed();
				failed += point.failed();
				retried += point.retried();
				maxWait = max(maxWait, point.maxWait());
				maxRun = max(maxRun, point.maxRun());
				meanRun = max(meanRun, point.meanRun());
			}
			return new Totals(completed, failed, retried, maxWait, maxRun, meanRun);
		}

		private static Duration max(Duration a, Duration b) {
			return (a.compareTo(b) >= 0) ? a : b;
		}

	}

}
