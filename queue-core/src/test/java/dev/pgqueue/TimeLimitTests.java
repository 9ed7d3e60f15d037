package dev.pgqueue;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.job.AttemptEnd;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A job that runs past its time limit is stopped and its attempt counted as failed: in
 * transactional mode its statement is cancelled and its work rolled back while its batch goes on;
 * in leased mode its worker moves on even when the listener ignores the interruption, and what the
 * listener returns later is never recorded. The kind's limit beats the listener's, which beats the
 * queue's.
 */
class TimeLimitTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	/** Far longer than any wait here: a listener still sleeping when a test ends was not stopped. */
	private static final long SLEEP_MILLIS = 60_000;

	private static QueueFixture fixture;

	private static final Recorded recorded = new Recorded();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("time_limits").metrics(recorded);
		fixture.jdbc().execute("CREATE TABLE ledger (job_id uuid PRIMARY KEY)");
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	/**
	 * One worker, big batches, and retries an hour away, so that a timed-out attempt stays visible
	 * as 'scheduled'.
	 */
	private static QueueSettings queue(String name, QueueMode mode) {
		return QueueSettings.defaults(name)
			.withMode(mode)
			.withConcurrency(1)
			.withBatchSize(10)
			.withPollInterval(Duration.ofMillis(50))
			.withMaxAttempts(5)
			.withRetry(new RetryPolicy(Duration.ofHours(1), Duration.ofHours(1), 2.0, 0.0));
	}

	@Test
	void transactionalListenerSleepingPastTheQueuesLimitIsInterruptedAndRolledBackWhileItsNeighboursCommit() {
		fixture.configure(queue("tx-sleep", QueueMode.TRANSACTIONAL).withTimeout(Duration.ofMillis(500)));
		fixture.handle("tx-sleep.neighbour", "tx-sleep", TimeLimitTests::writeLedger);
		fixture.handle("tx-sleep.slow", "tx-sleep", (job) -> {
			writeLedger(job);
			Thread.sleep(SLEEP_MILLIS);
		});

		List<UUID> ids = runUntilFinished("tx-sleep", "neighbour", "slow", "neighbour");

		assertTimedOut(ids.get(1), "tx-sleep.slow", "0.5s", "(pgqueue.queues.tx-sleep.timeout)");
		assertThat(ledgerRows(ids.get(1))).isZero();
		assertCompletedWithItsWrite(ids.get(0));
		assertCompletedWithItsWrite(ids.get(2));
	}

	@Test
	void transactionalListenerBlockedInAStatementHasItCancelledAndItsWorkRolledBackWhileItsNeighboursCommit() {
		// No limit on the queue: the listener's own limit applies.
		fixture.configure(queue("tx-statement", QueueMode.TRANSACTIONAL));
		fixture.handle("tx-statement.neighbour", "tx-statement", TimeLimitTests::writeLedger);
		fixture.handle("tx-statement.blocked", "tx-statement", Duration.ofSeconds(1), (job) -> {
			writeLedger(job);
			try {
				fixture.jdbc().execute("SELECT pg_sleep(" + SLEEP_MILLIS / 1000 + ")");
			}
			catch (DataAccessException ex) {
				// Swallowed, as careless listeners do: the batch's transaction stays aborted.
			}
		});

		List<UUID> ids = runUntilFinished("tx-statement", "neighbour", "blocked", "neighbour");

		assertTimedOut(ids.get(1), "tx-statement.blocked", "1s",
				"(@JobListener(timeout) on test handler for tx-statement.blocked)");
		assertThat(ledgerRows(ids.get(1))).isZero();
		assertCompletedWithItsWrite(ids.get(0));
		assertCompletedWithItsWrite(ids.get(2));
		assertThat(fixture.jdbc()
			.queryForObject("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT "
					+ "pg_sleep(" + SLEEP_MILLIS / 1000 + ")%'", Long.class))
			.as("sessions still in the listener's statement")
			.isZero();
	}

	@Test
	void leasedListenerPastItsOwnLimitIsInterruptedAndRetriedThoughItsQueueAllowsLonger() {
		fixture.configure(queue("leased-sleep", QueueMode.LEASED).withTimeout(Duration.ofMinutes(10)));
		fixture.handle("leased-sleep.slow", "leased-sleep", Duration.ofMillis(300),
				(job) -> Thread.sleep(SLEEP_MILLIS));

		UUID id = runUntilFinished("leased-sleep", "slow").get(0);

		assertTimedOut(id, "leased-sleep.slow", "0.3s", "(@JobListener(timeout) on test handler for leased-sleep.slow)");
		// Its worker left the thread at the limit; the interrupted listener then gave the thread back.
		await().atMost(WAIT).until(() -> recorded.abandonedHistory("leased-sleep").equals(List.of(1, 0)));
	}

	@Test
	void kindSettingBeatsTheListenersLimit() {
		fixture.configure(queue("leased-kind", QueueMode.LEASED));
		fixture.handle("leased-kind.slow", "leased-kind", Duration.ofMinutes(10), (job) -> Thread.sleep(SLEEP_MILLIS));
		fixture.handlers().override("leased-kind.slow", null, Duration.ofMillis(300));

		UUID id = runUntilFinished("leased-kind", "slow").get(0);

		assertTimedOut(id, "leased-kind.slow", "0.3s", "(pgqueue.kinds.leased-kind.slow.timeout)");
	}

	@Test
	void timeoutListedAsNonRetryableFailsTheJobAtOnce() {
		fixture.configure(queue("leased-fatal", QueueMode.LEASED).withTimeout(Duration.ofMillis(300))
			.withNonRetryable(List.of(JobTimeoutException.class)));
		fixture.handle("leased-fatal.slow", "leased-fatal", (job) -> Thread.sleep(SLEEP_MILLIS));

		UUID id = runUntilFinished("leased-fatal", "slow").get(0);

		Map<String, Object> row = fixture.row(id);
		assertThat(row).containsEntry("state", "failed").containsEntry("attempt", 1);
		assertThat((String) row.get("last_error")).contains("JobTimeoutException", "ran past its time limit");
	}

	@Test
	void leasedWorkerMovesOnFromAListenerThatIgnoresInterruptionAndItsLateReturnIsNeverRecorded() throws Exception {
		// Without claim-ahead, the next job is claimed only once the one worker slot is free again.
		fixture.configure(queue("stubborn", QueueMode.LEASED).withTimeout(Duration.ofMillis(500)).withClaimAhead(false));
		CountDownLatch release = new CountDownLatch(1);
		AtomicBoolean returned = new AtomicBoolean();
		fixture.handle("stubborn.ignores", "stubborn", (job) -> {
			while (true) {
				try {
					if (release.await(10, TimeUnit.SECONDS)) {
						break;
					}
				}
				catch (InterruptedException ex) {
					// Swallowed: the listener carries on as if nothing happened.
				}
			}
			returned.set(true);
		});
		fixture.handle("stubborn.next", "stubborn", (job) -> {
		});
		UUID stubborn = fixture.client().enqueue(JobRequest.of("stubborn.ignores", "x").priority(10));
		UUID next = fixture.client().enqueue(JobRequest.of("stubborn.next", "x"));
		JobPoller poller = fixture.poller("stubborn");
		poller.start();
		try {
			await().atMost(WAIT).until(() -> "completed".equals(fixture.row(next).get("state")));
			assertThat(returned).as("the stubborn listener is still running").isFalse();
			assertTimedOut(stubborn, "stubborn.ignores", "0.5s", "(pgqueue.queues.stubborn.timeout)");
			assertThat(recorded.abandoned("stubborn")).isEqualTo(1);

			// The completions a late return could reach are guarded by the attempt they ran.
			long rowId = (Long) fixture.row(stubborn).get("id");
			assertThat(fixture.repository().completeLeasedMany(List.of(rowId), List.of(1), false)).isEmpty();
			assertThat(fixture.repository()
				.recordLeasedFailure(rowId, 1, new AttemptEnd(1, JobState.FAILED, Duration.ZERO, "a late failure", "failed",
						null, "a late failure", false, null), 20)).isFalse();

			release.countDown();
			await().atMost(WAIT).until(() -> returned.get() && recorded.abandoned("stubborn") == 0);
			Map<String, Object> row = fixture.row(stubborn);
			assertThat(row).containsEntry("state", "scheduled").containsEntry("attempt", 1);
			assertThat((String) row.get("last_error")).contains("ran past its time limit");
			assertThat(recorded.finished("stubborn.ignores")).containsOnlyKeys(JobOutcome.RETRIED)
				.containsEntry(JobOutcome.RETRIED, 1);
			assertThat(recorded.finished("stubborn.next")).containsOnlyKeys(JobOutcome.COMPLETED);
		}
		finally {
			release.countDown();
			poller.stop();
		}
	}

	/** Enqueues one job of each kind, in order, runs them on one poller until none is left to run. */
	private static List<UUID> runUntilFinished(String queue, String... kinds) {
		List<UUID> ids = fixture.client()
			.enqueueAll(Arrays.stream(kinds).map((kind) -> JobRequest.of(queue + "." + kind, kind)).toList());
		JobPoller poller = fixture.poller(queue);
		poller.start();
		try {
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(ids).allSatisfy(
						(id) -> assertThat(fixture.row(id).get("state")).isIn("completed", "scheduled", "failed")));
		}
		finally {
			poller.stop();
		}
		return ids;
	}

	/**
	 * The job's attempt failed on its time limit, is scheduled again, and its error says which job,
	 * which limit and which setting gave it; the timeout was counted once.
	 */
	private static void assertTimedOut(UUID id, String kind, String limit, String setting) {
		Map<String, Object> row = fixture.row(id);
		assertThat(row).containsEntry("state", "scheduled").containsEntry("attempt", 1);
		assertThat((String) row.get("last_error")).contains("dev.pgqueue.JobTimeoutException: Job " + id,
				"of kind '" + kind + "'", "ran past its time limit of " + limit + " " + setting, "on attempt 1 of 5");
		await().atMost(WAIT).untilAsserted(() -> assertThat(recorded.timedOut(kind)).isEqualTo(1));
	}

	private static void assertCompletedWithItsWrite(UUID id) {
		assertThat(fixture.row(id)).containsEntry("state", "completed").containsEntry("attempt", 1);
		assertThat(ledgerRows(id)).isEqualTo(1);
	}

	private static void writeLedger(Job job) {
		fixture.jdbc().update("INSERT INTO ledger (job_id) VALUES (?)", job.id());
	}

	private static long ledgerRows(UUID id) {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM ledger WHERE job_id = ?", Long.class, id);
	}

	/** What the metrics were told. */
	private static final class Recorded implements QueueMetrics {

		private final Map<String, Map<JobOutcome, Integer>> finished = new ConcurrentHashMap<>();

		private final Map<String, AtomicInteger> timedOut = new ConcurrentHashMap<>();

		private final Map<String, List<Integer>> abandoned = new ConcurrentHashMap<>();

		@Override
		public void jobFinished(String queue, String kind, JobOutcome outcome, long nanos) {
			this.finished.computeIfAbsent(kind, (k) -> new ConcurrentHashMap<>()).merge(outcome, 1, Integer::sum);
		}

		@Override
		public void jobTimedOut(String queue, String kind) {
			this.timedOut.computeIfAbsent(kind, (k) -> new AtomicInteger()).incrementAndGet();
		}

		@Override
		public void abandonedHandlers(String queue, int running) {
			this.abandoned.computeIfAbsent(queue, (q) -> new CopyOnWriteArrayList<>()).add(running);
		}

		Map<JobOutcome, Integer> finished(String kind) {
			return this.finished.getOrDefault(kind, Map.of());
		}

		int timedOut(String kind) {
			AtomicInteger count = this.timedOut.get(kind);
			return (count != null) ? count.get() : 0;
		}

		/** Threads of the queue's listeners past their limit that its workers left, as last reported. */
		int abandoned(String queue) {
			List<Integer> history = abandonedHistory(queue);
			return history.isEmpty() ? 0 : history.get(history.size() - 1);
		}

		List<Integer> abandonedHistory(String queue) {
			return this.abandoned.getOrDefault(queue, List.of());
		}

	}

}
