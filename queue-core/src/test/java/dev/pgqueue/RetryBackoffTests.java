package dev.pgqueue;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A job that keeps failing waits out its queue's backoff between attempts, measured on the
 * database clock, and fails for good after its last attempt.
 */
class RetryBackoffTests {

	private static final int MAX_ATTEMPTS = 4;

	/** Delays after attempts 1, 2 and 3: doubling from 200 ms, capped at 600 ms, no jitter. */
	private static final List<Duration> DELAYS = List.of(Duration.ofMillis(200), Duration.ofMillis(400),
			Duration.ofMillis(600));

	private static QueueFixture fixture;

	private static QueueFixture.Maintenance maintenance;

	private static final List<Attempt> attempts = new CopyOnWriteArrayList<>();

	private static final AtomicInteger patientRuns = new AtomicInteger();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("backoff");
		fixture.configure(QueueSettings.defaults("backoff")
			.withConcurrency(1)
			.withPollInterval(Duration.ofMillis(50))
			.withMaxAttempts(MAX_ATTEMPTS)
			.withRetry(new RetryPolicy(Duration.ofMillis(200), Duration.ofMillis(600), 2.0, 0.0)));
		fixture.configure(QueueSettings.defaults("patient")
			.withConcurrency(1)
			.withPollInterval(Duration.ofMillis(50))
			.withRetry(new RetryPolicy(Duration.ofHours(1), Duration.ofHours(2), 2.0, 0.0)));
		fixture.handle("always.fails", "backoff", (job) -> {
			Instant now = fixture.jdbc().queryForObject("SELECT clock_timestamp()", Timestamp.class).toInstant();
			attempts.add(new Attempt(job.attempt(), job.runAt(), now));
			throw new IllegalStateException("still broken on attempt " + job.attempt());
		});
		fixture.handle("fails.once", "patient", (job) -> {
			patientRuns.incrementAndGet();
			throw new IllegalStateException("not yet");
		});
		maintenance = fixture.promotingEvery(Duration.ofMillis(50));
		maintenance.start();
	}

	@AfterAll
	static void tearDown() {
		maintenance.stop();
		fixture.close();
	}

	@Test
	void failingJobWaitsOutEachBackoffThenFailsAfterItsLastAttempt() {
		UUID id = fixture.client().enqueue("always.fails", Map.of("order", 7));
		JobPoller poller = fixture.poller("backoff");
		poller.start();
		try {
			await().atMost(Duration.ofSeconds(60)).until(() -> "failed".equals(fixture.row(id).get("state")));
		}
		finally {
			poller.stop();
		}

		assertThat(attempts).extracting(Attempt::number).containsExactly(1, 2, 3, 4);
		for (int i = 1; i < attempts.size(); i++) {
			Attempt previous = attempts.get(i - 1);
			Attempt next = attempts.get(i);
			Duration delay = DELAYS.get(i - 1);
			// The retry is due its delay after the failure was recorded, which follows the handler's clock reading.
			assertThat(Duration.between(previous.ranAt(), next.dueAt())).as("due time of attempt %d", next.number())
				.isGreaterThanOrEqualTo(delay)
				.isLessThan(delay.plusSeconds(10));
			assertThat(next.ranAt()).as("attempt %d did not run before it was due", next.number())
				.isAfterOrEqualTo(next.dueAt());
		}
		Map<String, Object> row = fixture.row(id);
		assertThat(row).containsEntry("state", "failed").containsEntry("attempt", MAX_ATTEMPTS);
		assertThat(row.get("finished_at")).isNotNull();
		assertThat((String) row.get("last_error")).contains("Attempt 4 of 4 was the last")
			.contains("still broken on attempt 4");
	}

	@Test
	void failedAttemptIsScheduledForItsBackoffAndNotPromotedEarly() {
		UUID id = fixture.client().enqueue("fails.once", null);
		JobPoller poller = fixture.poller("patient");
		poller.start();
		try {
			await().atMost(Duration.ofSeconds(30)).until(() -> "scheduled".equals(fixture.row(id).get("state")));
			// The promoter runs every 50 ms meanwhile; the job must stay put.
			await().during(Duration.ofSeconds(1))
				.atMost(Duration.ofSeconds(5))
				.until(() -> "scheduled".equals(fixture.row(id).get("state")));
		}
		finally {
			poller.stop();
		}

		assertThat(patientRuns).hasValue(1);
		Map<String, Object> row = fixture.row(id);
		assertThat(row).containsEntry("attempt", 1);
		assertThat((String) row.get("last_error")).contains("not yet");
		assertThat(row.get("finished_at")).isNull();
		Map<String, Object> due = fixture.jdbc()
			.queryForMap("SELECT run_at > now() + interval '59 minutes' AS not_before, "
					+ "run_at < now() + interval '61 minutes' AS not_after FROM " + fixture.allJobs()
					+ " WHERE public_id = ?", id);
		assertThat(due).containsEntry("not_before", true).containsEntry("not_after", true);
	}

	private record Attempt(int number, Instant dueAt, Instant ranAt) {
	}

}
