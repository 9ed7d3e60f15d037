package dev.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.run.Attempt;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An engine runs a queue's due jobs, or one chosen job, on the calling thread through the claim
 * strategy of the queue's mode, as its poller's workers would: what the test kit's drain builds on.
 * Each test uses a queue of its own.
 */
class CallingThreadRunTests {

	/** A retry that falls due at once: a job whose attempt failed could be claimed again straight away. */
	private static final RetryPolicy AT_ONCE = new RetryPolicy(Duration.ZERO, Duration.ZERO, 1.0, 0.0);

	private static QueueFixture fixture;

	private static final List<Thread> threads = new CopyOnWriteArrayList<>();

	private static final AtomicInteger failures = new AtomicInteger();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("calling_thread")
			.configure(QueueSettings.defaults("tx").withBatchSize(2))
			.configure(QueueSettings.defaults("calling_leased").withMode(QueueMode.LEASED)
				.withLeaseDuration(Duration.ofSeconds(5)))
			.configure(QueueSettings.defaults("failing").withRetry(AT_ONCE));
		fixture.jdbc().execute("CREATE TABLE notes (job_id uuid NOT NULL)");
		fixture.handle("note.write", "tx", (job) -> {
			threads.add(Thread.currentThread());
			fixture.jdbc().update("INSERT INTO notes (job_id) VALUES (?)", job.id());
		});
		fixture.handle("report.render", "calling_leased", (job) -> threads.add(Thread.currentThread()));
		fixture.handle("always.fails", "failing", (job) -> {
			failures.incrementAndGet();
			throw new IllegalStateException("always fails");
		});
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void runsEveryDueJobOfATransactionalQueueOnTheCallingThreadInBatches() {
		QueueEngine engine = fixture.engine();
		threads.clear();
		List<UUID> ids = List.of(enqueue(engine, "note.write"), enqueue(engine, "note.write"),
				enqueue(engine, "note.write"));

		List<Attempt> attempts = engine.runDueHere("tx", 100);

		assertThat(attempts).extracting((attempt) -> attempt.job().id()).containsExactlyInAnyOrderElementsOf(ids);
		assertThat(attempts).allSatisfy((attempt) -> assertThat(attempt.outcome().succeeded()).isTrue());
		assertThat(threads).containsOnly(Thread.currentThread());
		for (UUID id : ids) {
			assertThat(fixture.row(id)).containsEntry("state", "completed");
			assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM notes WHERE job_id = ?", Long.class, id))
				.isOne();
		}
	}

	@Test
	void runsALeasedQueueOnTheCallingThreadAndWritesEveryOutcomeBeforeReturning() {
		QueueEngine engine = fixture.engine();
		threads.clear();
		UUID first = enqueue(engine, "report.render");
		UUID second = enqueue(engine, "report.render");

		assertThat(engine.runDueHere("calling_leased", 100)).hasSize(2);

		assertThat(threads).containsOnly(Thread.currentThread());
		// The run's completer has stopped, once it had written every outcome; its lease keeper stops too.
		assertThat(threadNames()).doesNotContain("pgqueue-calling_leased-completer");
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(threadNames()).doesNotContain("pgqueue-calling_leased-leases"));
		assertThat(fixture.row(first)).containsEntry("state", "completed").containsEntry("lease_owner", null);
		assertThat(fixture.row(second)).containsEntry("state", "completed");
	}

	@Test
	void runsAChosenJobNowEvenScheduledForLaterAndLeavesTheOthers() {
		QueueEngine engine = fixture.engine();
		UUID other = enqueue(engine, "note.write");
		UUID later = engine.client().enqueue(JobRequest.of("note.write", Map.of()).delay(Duration.ofHours(1)));

		Optional<Attempt> attempt = engine.runHere(later);

		assertThat(attempt).hasValueSatisfying((run) -> assertThat(run.job().id()).isEqualTo(later));
		assertThat(fixture.row(later)).containsEntry("state", "completed");
		assertThat(fixture.row(other)).containsEntry("state", "available");
		assertThat(engine.runHere(later)).as("a completed job").isEmpty();
		engine.runDueHere("tx", 100);
	}

	@Test
	void takesAChosenJobOnceEvenWhenItsFailedAttemptFallsDueAtOnce() {
		QueueEngine engine = fixture.engine();
		failures.set(0);
		UUID failing = enqueue(engine, "always.fails");

		Optional<Attempt> attempt = engine.runHere(failing);

		assertThat(attempt).hasValueSatisfying(
				(run) -> assertThat(run.outcome().kind()).isEqualTo(JobOutcome.RETRIED));
		assertThat(failures).hasValue(1);
		assertThat(fixture.row(failing)).containsEntry("attempt", 1);
	}

	@Test
	void runsNothingForAQueueWithoutListenersOrAJobOfAKindWithoutOne() {
		QueueEngine engine = fixture.engine();
		UUID unhandled = engine.client().enqueue(JobRequest.of("nobody.handles", Map.of()).queue("tx"));

		assertThat(engine.runDueHere("nobody", 100)).isEmpty();
		assertThat(engine.runHere(unhandled)).isEmpty();
		assertThat(fixture.row(unhandled)).containsEntry("state", "available").containsEntry("attempt", 0);
	}

	private static List<String> threadNames() {
		return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).toList();
	}

	private static UUID enqueue(QueueEngine engine, String kind) {
		return engine.client().enqueue(kind, Map.of());
	}

}
