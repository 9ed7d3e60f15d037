package dev.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

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
 * In transactional mode a job's work commits with its completion, or not at all: a failed attempt
 * rolls back to the job's savepoint, counts the attempt and leaves the batch's other jobs committed.
 */
class TransactionalRollbackTests {

	private static QueueFixture fixture;

	private static final Map<UUID, AtomicInteger> runs = new ConcurrentHashMap<>();

	/** Finished jobs as the metrics count them, by queue and outcome. */
	private static final Map<String, Map<JobOutcome, AtomicInteger>> counted = new ConcurrentHashMap<>();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("tx_rollback").metrics(new QueueMetrics() {
			@Override
			public void jobFinished(String queue, String kind, JobOutcome outcome, long nanos) {
				counted.computeIfAbsent(queue, (name) -> new ConcurrentHashMap<>())
					.computeIfAbsent(outcome, (name) -> new AtomicInteger())
					.incrementAndGet();
			}
		});
		fixture.jdbc()
			.execute("CREATE TABLE ledger (job_id uuid PRIMARY KEY, txid bigint NOT NULL DEFAULT txid_current())");
		fixture.jdbc().execute("CREATE TABLE notes (job_id uuid NOT NULL, note text NOT NULL)");
		// Each test has a queue of its own, so that a job one test leaves behind cannot end up in
		// another test's batch.
		queue("throwing", (job) -> {
			writeLedger(job);
			throw new IllegalStateException("refused after writing");
		});
		queue("nested", (job) -> {
			writeLedger(job);
			try {
				// Joins the batch transaction, as a nested @Transactional(propagation = REQUIRED) call would.
				fixture.transactionTemplate().executeWithoutResult((status) -> {
					fixture.jdbc().update("INSERT INTO notes (job_id, note) VALUES (?, 'nested')", job.id());
					throw new IllegalStateException("nested call failed");
				});
			}
			catch (IllegalStateException ex) {
				// Swallowed, as careless handlers do; the transaction stays marked rollback-only.
			}
		});
		queue("swallowing", TransactionalRollbackTests::writeTwiceSwallowingTheFailure);
		queue("swallowing-last", TransactionalRollbackTests::writeTwiceSwallowingTheFailure);
	}

	/**
	 * Configures a queue whose kind {@code <queue>.neighbour} writes to the ledger and whose kind
	 * {@code <queue>.failing} runs the given body. One batch at a time, big enough for a test's jobs;
	 * a retry waits an hour, so a failed attempt stays visible as 'scheduled'.
	 */
	private static void queue(String queue, QueueFixture.ThrowingConsumer<Job> failing) {
		fixture.configure(QueueSettings.defaults(queue)
			.withConcurrency(1)
			.withBatchSize(10)
			.withPollInterval(Duration.ofMillis(50))
			.withMaxAttempts(5)
			.withRetry(new RetryPolicy(Duration.ofHours(1), Duration.ofHours(1), 2.0, 0.0)));
		fixture.handle(queue + ".neighbour", queue, (job) -> {
			runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
			writeLedger(job);
		});
		fixture.handle(queue + ".failing", queue, failing);
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void handlerThatThrowsAfterWritingLosesItsWriteAndIsScheduledAgainWhileNeighboursCommit() {
		List<UUID> ids = runBatch("throwing");
		UUID failing = ids.get(1);

		Map<String, Object> row = fixture.row(failing);
		assertThat(row.get("state")).isEqualTo("scheduled");
		assertThat(row.get("attempt")).isEqualTo(1);
		assertThat((String) row.get("last_error")).contains("IllegalStateException: refused after writing");
		assertThat(runAtIsAtLeastMinutesAhead(failing, 50)).isTrue();
		assertThat(ledgerRows(failing)).isZero();
		assertNeighboursCommittedTogether(ids.get(0), ids.get(2));
	}

	@Test
	void handlerThatSwallowsARollbackOnlyNestedTransactionCountsAsAFailedAttemptWhileNeighboursCommit() {
		List<UUID> ids = runBatch("nested");
		UUID failing = ids.get(1);

		Map<String, Object> row = fixture.row(failing);
		assertThat(row.get("state")).isEqualTo("scheduled");
		assertThat(row.get("attempt")).isEqualTo(1);
		assertThat((String) row.get("last_error")).contains("rollback-only");
		assertThat(ledgerRows(failing)).isZero();
		assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM notes WHERE job_id = ?", Long.class, failing))
			.isZero();
		assertNeighboursCommittedTogether(ids.get(0), ids.get(2));
	}

	@Test
	void handlerThatSwallowsAFailedStatementCountsAsAFailedAttemptWhileNeighboursCommit() {
		List<UUID> ids = runBatch("swallowing");
		UUID failing = ids.get(1);

		Map<String, Object> row = fixture.row(failing);
		assertThat(row.get("state")).isEqualTo("scheduled");
		assertThat(row.get("attempt")).isEqualTo(1);
		assertThat((String) row.get("last_error")).contains("aborted the transaction");
		assertThat(ledgerRows(failing)).isZero();
		assertNeighboursCommittedTogether(ids.get(0), ids.get(2));
	}

	@Test
	void handlerThatSwallowsAFailedStatementLastInItsBatchCountsAsAFailedAttemptWhileNeighboursCommit() {
		List<UUID> ids = runBatch("swallowing-last", "neighbour", "neighbour", "failing");
		UUID failing = ids.get(2);

		Map<String, Object> row = fixture.row(failing);
		assertThat(row.get("state")).isEqualTo("scheduled");
		assertThat(row.get("attempt")).isEqualTo(1);
		assertThat((String) row.get("last_error")).contains("aborted the transaction");
		assertThat(ledgerRows(failing)).isZero();
		assertNeighboursCommittedTogether(ids.get(0), ids.get(1));
	}

	/**
	 * Enqueues a neighbour, a failing job and another neighbour on the queue, lets one poller run them
	 * as one batch, and waits until none of them is available any more.
	 */
	private static List<UUID> runBatch(String queue) {
		return runBatch(queue, "neighbour", "failing", "neighbour");
	}

	/** Enqueues jobs of the queue's kinds in this order and runs them as one batch. */
	private static List<UUID> runBatch(String queue, String... kinds) {
		List<UUID> ids = fixture.client()
			.enqueueAll(java.util.Arrays.stream(kinds).map((kind) -> JobRequest.of(queue + "." + kind, kind)).toList());
		JobPoller poller = fixture.poller(queue);
		poller.start();
		try {
			await().atMost(Duration.ofSeconds(30))
				.untilAsserted(() -> assertThat(ids).allSatisfy(
						(id) -> assertThat(fixture.row(id).get("state")).isIn("completed", "scheduled", "failed")));
		}
		finally {
			poller.stop();
		}
		return ids;
	}

	private static void assertNeighboursCommittedTogether(UUID before, UUID after) {
		for (UUID id : List.of(before, after)) {
			assertThat(fixture.row(id)).containsEntry("state", "completed").containsEntry("attempt", 1);
			assertThat(ledgerRows(id)).isEqualTo(1);
		}
		// The batch first runs without savepoints; the failure rolls it back and it runs again, each job
		// behind a savepoint. So the neighbour before the failing job runs twice (its first run's write
		// rolled back); the one after it runs once, or twice when the failure only showed in its own
		// statements (a transaction the failing listener had left aborted).
		assertThat(runs.get(before)).hasValue(2);
		assertThat(runs.get(after).get()).isBetween(1, 2);
		// Counted by what stands, not by how often the listeners ran: two completed, one retried.
		String queue = (String) fixture.row(before).get("queue");
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(counted.get(queue)).hasSize(2)
				.hasEntrySatisfying(JobOutcome.COMPLETED, (count) -> assertThat(count).hasValue(2))
				.hasEntrySatisfying(JobOutcome.RETRIED, (count) -> assertThat(count).hasValue(1)));
		Long[] transactions = List.of(before, after)
			.stream()
			.map((id) -> fixture.jdbc().queryForObject("SELECT txid FROM ledger WHERE job_id = ?", Long.class, id))
			.toArray(Long[]::new);
		assertThat(transactions[0]).as("the batch's jobs commit in one transaction").isEqualTo(transactions[1]);
	}

	private static boolean runAtIsAtLeastMinutesAhead(UUID id, int minutes) {
		return Boolean.TRUE.equals(fixture.jdbc()
			.queryForObject("SELECT run_at > now() + ? * interval '1 minute' FROM " + fixture.allJobs()
					+ " WHERE public_id = ?", Boolean.class, minutes, id));
	}

	private static long ledgerRows(UUID id) {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM ledger WHERE job_id = ?", Long.class, id);
	}

	private static void writeTwiceSwallowingTheFailure(Job job) {
		writeLedger(job);
		try {
			writeLedger(job);
		}
		catch (DataAccessException ex) {
			// Swallowed; PostgreSQL has aborted the transaction all the same.
		}
	}

	private static void writeLedger(Job job) {
		fixture.jdbc().update("INSERT INTO ledger (job_id) VALUES (?)", job.id());
	}

}
