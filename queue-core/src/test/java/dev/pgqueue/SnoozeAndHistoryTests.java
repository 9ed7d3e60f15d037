package dev.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.JobAttempt.Outcome;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.metrics.MicrometerQueueMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A listener that snoozes sends its job back without using an attempt, as often as
 * {@code pgqueue.max-snoozes} allows; every attempt that did not complete enters the job's history,
 * bounded by {@code pgqueue.attempt-history}, and the attempt that completed it shows last. Both
 * modes, through real pollers on committed rows.
 */
class SnoozeAndHistoryTests {

	private static final int HISTORY = 3;

	private static final int MAX_SNOOZES = 2;

	private static QueueFixture fixture;

	private static QueueFixture.Maintenance maintenance;

	private static final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	/** Runs of each job so far, by public id. */
	private static final Map<UUID, AtomicInteger> runs = new ConcurrentHashMap<>();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("snooze");
		fixture.jdbc().execute("CREATE TABLE snooze_writes (job_id uuid, run int)");
		fixture.workerSettings(new WorkerSettings(Duration.ofSeconds(10), false, false, HISTORY, MAX_SNOOZES,
				WorkerSettings.DEFAULT_MAX_OUTPUT_BYTES));
		fixture.metrics(new MicrometerQueueMetrics(registry, List.of("snooze_tx", "snooze_leased")));
		for (QueueMode mode : QueueMode.values()) {
			String queue = queue(mode);
			fixture.configure(QueueSettings.defaults(queue)
				.withMode(mode)
				.withPollInterval(Duration.ofMillis(50))
				.withMaxAttempts(5)
				.withRetry(new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(20), 2.0, 0.0)));
			// Writes, then snoozes on its first run; completes on its second.
			fixture.handle("snooze.once." + mode, queue, (job) -> {
				int run = run(job);
				fixture.jdbc().update("INSERT INTO snooze_writes VALUES (?, ?)", job.id(), run);
				if (run == 1) {
					throw new JobSnoozedException(Duration.ofMillis(100), "waiting for the report's data");
				}
			});
			fixture.handle("snooze.always." + mode, queue, (job) -> {
				run(job);
				throw new JobSnoozedException(Duration.ZERO);
			});
			fixture.handle("fails.always." + mode, queue, (job) -> {
				throw new IllegalStateException("broken on run " + run(job));
			});
		}
		maintenance = fixture.promotingEvery(Duration.ofMillis(50));
		maintenance.start();
	}

	@AfterAll
	static void tearDown() {
		maintenance.stop();
		fixture.close();
	}

	private static String queue(QueueMode mode) {
		return (mode == QueueMode.TRANSACTIONAL) ? "snooze_tx" : "snooze_leased";
	}

	private static int run(Job job) {
		return runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aSnoozeSpendsNoAttemptAndTheJobRunsAgainLater(QueueMode mode) {
		UUID id = fixture.client().enqueue("snooze.once." + mode, null);
		runUntilFinished(mode, id);

		JobDetails job = fixture.admin().find(id).orElseThrow();
		assertThat(job.state()).isEqualTo(JobState.COMPLETED);
		assertThat(job.attempt()).as("attempts used: the snooze gave its own back").isEqualTo(1);
		assertThat(job.snoozes()).isEqualTo(1);
		assertThat(runs.get(id)).hasValue(2);
		List<JobAttempt> attempts = fixture.admin().attempts(id);
		assertThat(attempts).extracting(JobAttempt::attempt, JobAttempt::outcome)
			.containsExactly(org.assertj.core.groups.Tuple.tuple(1, Outcome.SNOOZED),
					org.assertj.core.groups.Tuple.tuple(1, Outcome.COMPLETED));
		assertThat(attempts.get(0).message()).isEqualTo("waiting for the report's data");
		assertThat(attempts.get(0).error()).isNull();
		assertThat(attempts.get(0).finishedAt()).isAfterOrEqualTo(attempts.get(0).startedAt());
		assertThat(attempts.get(1).startedAt()).isAfterOrEqualTo(attempts.get(0).finishedAt());
		List<Integer> written = fixture.jdbc()
			.queryForList("SELECT run FROM snooze_writes WHERE job_id = ? ORDER BY run", Integer.class, id);
		if (mode == QueueMode.TRANSACTIONAL) {
			assertThat(written).as("the snoozed run's database work is rolled back").containsExactly(2);
		}
		else {
			assertThat(written).as("a leased listener's work commits as it goes").containsExactly(1, 2);
		}
		assertThat(registry.get("pgqueue.jobs.snoozed").tag("queue", queue(mode)).tag("kind", "snooze.once." + mode)
			.counter().count()).isEqualTo(1.0);
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aJobThatSnoozesPastTheBoundFailsSayingWhy(QueueMode mode) {
		UUID id = fixture.client().enqueue("snooze.always." + mode, null);
		runUntilFinished(mode, id);

		JobDetails job = fixture.admin().find(id).orElseThrow();
		assertThat(job.state()).isEqualTo(JobState.FAILED);
		assertThat(job.snoozes()).isEqualTo(MAX_SNOOZES);
		assertThat(runs.get(id)).hasValue(MAX_SNOOZES + 1);
		assertThat(job.lastError()).contains("after " + MAX_SNOOZES + " snoozes", "pgqueue.max-snoozes",
				"snoozed for PT0S", id.toString());
		assertThat(fixture.admin().attempts(id)).extracting(JobAttempt::outcome)
			.containsExactly(Outcome.SNOOZED, Outcome.SNOOZED, Outcome.FAILED);
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void theHistoryKeepsTheNewestAttemptsWithTheirErrors(QueueMode mode) {
		UUID id = fixture.client().enqueue("fails.always." + mode, null);
		runUntilFinished(mode, id);

		List<JobAttempt> attempts = fixture.admin().attempts(id);
		assertThat(attempts).hasSize(HISTORY);
		assertThat(attempts).extracting(JobAttempt::attempt).containsExactly(3, 4, 5);
		assertThat(attempts).extracting(JobAttempt::outcome)
			.containsExactly(Outcome.RETRIED, Outcome.RETRIED, Outcome.FAILED);
		assertThat(attempts).extracting(JobAttempt::error).containsOnly(IllegalStateException.class.getName());
		assertThat(attempts).extracting(JobAttempt::message)
			.containsExactly("broken on run 3", "broken on run 4", "broken on run 5");
		for (JobAttempt attempt : attempts) {
			assertThat(attempt.startedAt()).isNotNull();
			assertThat(attempt.finishedAt()).isAfterOrEqualTo(attempt.startedAt());
		}
		assertThat(fixture.jdbc().queryForObject("SELECT attempts::text FROM " + fixture.allJobs()
				+ " WHERE public_id = ?", String.class, id)).as("no stack trace, no payload").doesNotContain("\tat ");
	}

	private static void runUntilFinished(QueueMode mode, UUID id) {
		JobPoller poller = fixture.poller(queue(mode));
		poller.start();
		try {
			await().atMost(Duration.ofSeconds(30))
				.until(() -> fixture.admin().find(id).map((job) -> job.state().isFinished()).orElse(false));
		}
		finally {
			poller.stop();
		}
	}

}
