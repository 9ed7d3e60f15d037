package dev.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Stopping a transactional poller is soft, then hard: running jobs get the shutdown timeout to
 * finish; a job still running after it goes back to the queue as if never claimed.
 */
class GracefulShutdownTests {

	private static QueueFixture fixture;

	private static final CountDownLatch finish = new CountDownLatch(1);

	private static final AtomicInteger started = new AtomicInteger();

	private static final CountDownLatch stuckStarted = new CountDownLatch(1);

	private static final CountDownLatch never = new CountDownLatch(1);

	private static final AtomicBoolean stuckInterrupted = new AtomicBoolean();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("shutdown");
		fixture.jdbc().execute("CREATE TABLE ledger (job_id uuid PRIMARY KEY)");
		fixture.configure(QueueSettings.defaults("finishing")
			.withConcurrency(2)
			.withBatchSize(5)
			.withPollInterval(Duration.ofMillis(50)));
		fixture.configure(QueueSettings.defaults("stuck")
			.withConcurrency(1)
			.withBatchSize(10)
			.withPollInterval(Duration.ofMillis(50)));
		fixture.handle("slow.write", "finishing", (job) -> {
			started.incrementAndGet();
			writeLedger(job);
			finish.await();
		});
		fixture.handle("stuck.neighbour", "stuck", GracefulShutdownTests::writeLedger);
		fixture.handle("stuck.blocking", "stuck", (job) -> {
			writeLedger(job);
			stuckStarted.countDown();
			try {
				never.await();
			}
			catch (InterruptedException ex) {
				stuckInterrupted.set(true);
				throw ex;
			}
		});
	}

	@AfterAll
	static void tearDown() {
		finish.countDown();
		never.countDown();
		fixture.close();
	}

	@Test
	void jobsRunningWhenStoppingFinishWithinTheShutdownTimeout() throws Exception {
		fixture.workerSettings(new WorkerSettings(Duration.ofSeconds(30), false, false));
		List<UUID> ids = fixture.client()
			.enqueueAll(IntStream.range(0, 8).mapToObj((i) -> JobRequest.of("slow.write", i)).toList());
		JobPoller poller = fixture.poller("finishing");
		poller.start();
		await().atMost(Duration.ofSeconds(30)).until(() -> started.get() >= 2);

		CompletableFuture<Void> stopped = stop(poller);
		assertThat(poller.isRunning()).isFalse();
		await().during(Duration.ofMillis(500))
			.atMost(Duration.ofSeconds(5))
			.alias("stop waits for the running jobs")
			.until(() -> !stopped.isDone());
		finish.countDown();
		stopped.get(60, TimeUnit.SECONDS);

		// Both batches had claimed all eight jobs before stopping began; each finished its batch.
		assertThat(ids).allSatisfy((id) -> {
			assertThat(fixture.row(id)).containsEntry("state", "completed").containsEntry("attempt", 1);
			assertThat(ledgerRows(id)).isEqualTo(1);
		});
	}

	@Test
	void jobStillRunningAfterTheShutdownTimeoutGoesBackWithoutUsingAnAttempt() throws Exception {
		fixture.workerSettings(new WorkerSettings(Duration.ofSeconds(1), false, false));
		List<UUID> ids = fixture.client()
			.enqueueAll(List.of(JobRequest.of("stuck.neighbour", "before"), JobRequest.of("stuck.blocking", "stuck"),
					JobRequest.of("stuck.neighbour", "after")));
		JobPoller poller = fixture.poller("stuck");
		poller.start();
		assertThat(stuckStarted.await(30, TimeUnit.SECONDS)).isTrue();

		long start = System.nanoTime();
		CompletableFuture<Void> stopped = stop(poller);
		stopped.get(60, TimeUnit.SECONDS);
		Duration took = Duration.ofNanos(System.nanoTime() - start);

		assertThat(took).as("the running job got the whole timeout").isGreaterThanOrEqualTo(Duration.ofSeconds(1));
		assertThat(stuckInterrupted).as("the handler was interrupted").isTrue();
		// The batch ran without savepoints, so the interrupted listener's half-done writes can only be
		// undone with the whole batch: its neighbour that had finished goes back too, its write undone,
		// and will run again. Nothing is lost, no attempt is used, database effects stay exactly once.
		for (UUID id : ids) {
			assertThat(fixture.row(id)).containsEntry("state", "available")
				.containsEntry("attempt", 0)
				.containsEntry("started_at", null)
				.containsEntry("last_error", null);
			assertThat(ledgerRows(id)).isZero();
		}
	}

	/** Stops the poller asynchronously; the future completes when its callback runs. */
	private static CompletableFuture<Void> stop(JobPoller poller) {
		CompletableFuture<Void> stopped = new CompletableFuture<>();
		poller.stop(() -> stopped.complete(null));
		return stopped;
	}

	private static long ledgerRows(UUID id) {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM ledger WHERE job_id = ?", Long.class, id);
	}

	private static void writeLedger(Job job) {
		fixture.jdbc().update("INSERT INTO ledger (job_id) VALUES (?)", job.id());
	}

}
