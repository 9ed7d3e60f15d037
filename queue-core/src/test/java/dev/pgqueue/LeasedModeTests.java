package dev.pgqueue;

import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.SchemaName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Leased mode: the claim commits the job as running under a lease, the handler runs outside any
 * transaction, the poller extends the lease, and the rescuer takes back jobs whose lease expired.
 * Each test uses a queue of its own and leaves no job running, because the rescuer sees every
 * queue.
 */
class LeasedModeTests {

	private static final Duration LEASE = Duration.ofSeconds(1);

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final WorkerSettings DEFAULT_WORKERS = new WorkerSettings(Duration.ofSeconds(10), false, false);

	private static QueueFixture fixture;

	private static QueueFixture.Maintenance maintenance;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("leased_mode");
		maintenance = fixture.maintenance((m) -> m);
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	private static QueueSettings leased(String queue) {
		return QueueSettings.defaults(queue).withMode(QueueMode.LEASED).withLeaseDuration(LEASE)
			.withPollInterval(Duration.ofMillis(50));
	}

	@Test
	void runsJobOutsideTheClaimingTransactionAsRunningUnderThePollersLease() throws Exception {
		fixture.configure(leased("visible"));
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger seenAttempt = new AtomicInteger();
		fixture.handle("visible.job", "visible", (job) -> {
			seenAttempt.set(job.attempt());
			started.countDown();
			release.await();
		});
		JobPoller poller = fixture.poller("visible");
		UUID id = fixture.client().enqueue("visible.job", Map.of("n", 1));
		poller.start();
		try {
			assertThat(started.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
			// Read through another pooled connection: the claim must already be committed.
			Map<String, Object> running = fixture.jdbc()
				.queryForMap("SELECT state, lease_owner, attempt, started_at, lease_until > clock_timestamp() AS "
						+ "lease_in_future FROM " + fixture.allJobs() + " WHERE public_id = ?", id);
			assertThat(running).containsEntry("state", "running")
				.containsEntry("lease_owner", poller.owner())
				.containsEntry("attempt", 1)
				.containsEntry("lease_in_future", true);
			assertThat(running.get("started_at")).isNotNull();
			assertThat(seenAttempt).hasValue(1);
			release.countDown();
			await().atMost(WAIT).until(() -> "completed".equals(fixture.row(id).get("state")));
			Map<String, Object> completed = fixture.row(id);
			assertThat(completed).containsEntry("attempt", 1)
				.containsEntry("lease_owner", null)
				.containsEntry("lease_until", null)
				.containsEntry("last_error", null);
			assertThat(completed.get("finished_at")).isNotNull();
		}
		finally {
			release.countDown();
			poller.stop();
		}
	}

	@Test
	void extendsTheLeaseOfALongJobSoThatItIsNeverRescued() throws Exception {
		fixture.configure(leased("extended").withConcurrency(1));
		assertLongJobKeepsItsLease("extended");
	}

	@Test
	void extendsLeasesEvenWhenThePollIntervalIsLongerThanTheLease() throws Exception {
		// Free worker slots send the poll thread into a poll-interval wait; leases must not lapse
		// during it.
		fixture.configure(leased("slow-poll").withConcurrency(4).withPollInterval(Duration.ofSeconds(3)));
		assertLongJobKeepsItsLease("slow-poll");
	}

	private void assertLongJobKeepsItsLease(String queue) throws Exception {
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger calls = new AtomicInteger();
		fixture.handle(queue + ".job", queue, (job) -> {
			calls.incrementAndGet();
			started.countDown();
			release.await();
		});
		JobPoller poller = fixture.poller(queue);
		UUID id = fixture.client().enqueue(queue + ".job", null);
		poller.start();
		AtomicInteger rescued = new AtomicInteger();
		try {
			assertThat(started.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
			List<Timestamp> leases = new ArrayList<>();
			leases.add(leaseUntil(id));
			// About three seconds at a one-second lease: the lease must have been moved forward
			// several times, and the rescuer, run all along, must never find it expired.
			await().atMost(WAIT).pollInterval(Duration.ofMillis(20)).until(() -> {
				rescued.addAndGet(maintenance.rescue());
				Timestamp current = leaseUntil(id);
				if (current != null && current.after(leases.get(leases.size() - 1))) {
					leases.add(current);
				}
				return leases.size() >= 3 && Duration
					.between(leases.get(0).toInstant(), leases.get(leases.size() - 1).toInstant())
					.compareTo(Duration.ofMillis(2500)) >= 0;
			});
			assertThat(rescued).hasValue(0);
			assertThat(fixture.row(id)).containsEntry("state", "running").containsEntry("attempt", 1);
			release.countDown();
			await().atMost(WAIT).until(() -> "completed".equals(fixture.row(id).get("state")));
			rescued.addAndGet(maintenance.rescue());
			assertThat(rescued).hasValue(0);
			assertThat(fixture.row(id)).containsEntry("attempt", 1).containsEntry("last_error", null);
			assertThat(calls).hasValue(1);
		}
		finally {
			release.countDown();
			poller.stop();
		}
	}

	@Test
	void rescuesJobsOfACrashedWorkerOnceTheirLeaseExpiresCountingTheAttempt() {
		fixture.configure(leased("crash"));
		AtomicInteger calls = new AtomicInteger();
		fixture.handle("crash.job", "crash", (job) -> calls.incrementAndGet());
		List<UUID> ids = fixture.client()
			.enqueueAll(List.of(JobRequest.of("crash.job", 1), JobRequest.of("crash.job", 2),
					JobRequest.of("crash.job", 3)));
		// A worker that claims and then dies: nothing extends, finishes or releases these leases.
		List<ClaimedJob> claimed = fixture.repository()
			.claimLeased("crash", new String[] { "crash.job" }, 10, "dead-worker", LEASE);
		assertThat(claimed).hasSize(3).allSatisfy((job) -> assertThat(job.attempt()).isEqualTo(1));
		assertThat(maintenance.rescue()).as("leases still valid").isZero();

		AtomicInteger rescued = new AtomicInteger();
		await().atMost(WAIT).pollInterval(Duration.ofMillis(50))
			.until(() -> rescued.addAndGet(maintenance.rescue()) >= 3);
		assertThat(rescued).hasValue(3);
		for (UUID id : ids) {
			Map<String, Object> row = fixture.row(id);
			assertThat(row).containsEntry("state", "available")
				.containsEntry("attempt", 1)
				.containsEntry("lease_owner", null)
				.containsEntry("lease_until", null);
			assertThat((String) row.get("last_error")).contains("Lease held by dead-worker").contains("expired");
		}
		assertThat(calls).hasValue(0);

		JobPoller poller = fixture.poller("crash");
		poller.start();
		try {
			await().atMost(WAIT).until(() -> ids.stream().allMatch((id) -> "completed".equals(fixture.row(id).get("state"))));
			assertThat(ids).allSatisfy((id) -> assertThat(fixture.row(id)).containsEntry("attempt", 2)
				.containsEntry("last_error", null));
			assertThat(calls).hasValue(3);
			// The history tells the lost attempt from the one that completed.
			assertThat(ids).allSatisfy((id) -> {
				List<JobAttempt> attempts = fixture.admin().attempts(id);
				assertThat(attempts).extracting(JobAttempt::attempt, JobAttempt::outcome)
					.containsExactly(tuple(1, JobAttempt.Outcome.EXPIRED), tuple(2, JobAttempt.Outcome.COMPLETED));
				assertThat(attempts.get(0).message()).contains("lease held by dead-worker expired");
			});
		}
		finally {
			poller.stop();
		}
	}

	@Test
	void failsACrashedJobWhoseExpiredAttemptWasItsLast() {
		fixture.configure(leased("crash-last"));
		fixture.handle("crash-last.job", "crash-last", (job) -> {
		});
		UUID id = fixture.client().enqueue(JobRequest.of("crash-last.job", null).maxAttempts(1));
		assertThat(fixture.repository()
			.claimLeased("crash-last", new String[] { "crash-last.job" }, 10, "dead-worker", LEASE)).hasSize(1);

		await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> maintenance.rescue() > 0);
		Map<String, Object> row = fixture.row(id);
		assertThat(row).containsEntry("state", "failed")
			.containsEntry("attempt", 1)
			.containsEntry("lease_owner", null)
			.containsEntry("lease_until", null);
		assertThat(row.get("finished_at")).isNotNull();
		assertThat((String) row.get("last_error")).contains("Lease held by dead-worker");
	}

	@Test
	void lateCompletionOfAHungHandlerNeverOverwritesTheJobAnotherInstanceCompletedAfterTheRescue() throws Exception {
		Map<String, Object> row = runHungHandlerPastItsRescue("hung", false);
		assertThat(row).containsEntry("state", "completed").containsEntry("attempt", 2);
	}

	@Test
	void lateFailureOfAHungHandlerNeverTouchesTheAttemptAnotherInstanceIsRunning() throws Exception {
		Map<String, Object> row = runHungHandlerPastItsRescue("hung-fail", true);
		assertThat(row).containsEntry("state", "completed").containsEntry("attempt", 2).containsEntry("last_error", null);
	}

	/**
	 * One instance's handler hangs past its lease; the rescuer returns the job and another instance
	 * runs attempt 2. The hung handler then returns (or throws) either after attempt 2 completed or,
	 * with {@code whileOtherRuns}, while attempt 2 is still running. Returns the final row.
	 */
	private Map<String, Object> runHungHandlerPastItsRescue(String queue, boolean whileOtherRuns) throws Exception {
		fixture.configure(leased(queue).withConcurrency(1));
		AtomicInteger calls = new AtomicInteger();
		CountDownLatch firstStarted = new CountDownLatch(1);
		CountDownLatch releaseFirst = new CountDownLatch(1);
		CountDownLatch firstReturned = new CountDownLatch(1);
		CountDownLatch secondStarted = new CountDownLatch(1);
		CountDownLatch releaseSecond = new CountDownLatch(whileOtherRuns ? 1 : 0);
		fixture.handle(queue + ".job", queue, (job) -> {
			if (calls.incrementAndGet() == 1) {
				firstStarted.countDown();
				try {
					releaseFirst.await();
					if (whileOtherRuns) {
						throw new IllegalStateException("late failure of attempt 1");
					}
				}
				finally {
					firstReturned.countDown();
				}
			}
			else {
				secondStarted.countDown();
				releaseSecond.await();
			}
		});
		// The first instance has lost the database for its lease extensions (a partition, a long
		// pause) while its handler goes on: its lease expires although the handler is alive.
		QueueEngine lost = EngineInternals
			.withJobs(fixture.engineBuilder().settings(fixture.engineSettings().withWorkers(DEFAULT_WORKERS)),
					new LeaseExtensionsLost(fixture))
			.metrics(QueueMetrics.NONE)
			.build();
		JobPoller hung = EngineInternals.of(lost).newPoller(queue, null);
		UUID id = fixture.client().enqueue(queue + ".job", null);
		hung.start();
		JobPoller other = null;
		try {
			assertThat(firstStarted.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
			assertThat(fixture.row(id)).containsEntry("lease_owner", hung.owner()).containsEntry("attempt", 1);

			await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> maintenance.rescue() > 0);
			assertThat(fixture.row(id)).containsEntry("state", "available").containsEntry("attempt", 1);

			other = fixture.poller(queue);
			other.start();
			assertThat(secondStarted.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
			Object finishedByOther = null;
			if (!whileOtherRuns) {
				await().atMost(WAIT).until(() -> "completed".equals(fixture.row(id).get("state")));
				assertThat(fixture.row(id)).containsEntry("attempt", 2);
				finishedByOther = fixture.row(id).get("finished_at");
			}

			releaseFirst.countDown();
			assertThat(firstReturned.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
			// Stopping flushes the hung instance's completer: its late outcome has been written or refused.
			CompletableFuture.runAsync(hung::stop).get(WAIT.toSeconds(), TimeUnit.SECONDS);
			if (whileOtherRuns) {
				assertThat(fixture.row(id)).containsEntry("state", "running")
					.containsEntry("attempt", 2)
					.containsEntry("lease_owner", other.owner());
				assertThat((String) fixture.row(id).get("last_error")).as("still the rescuer's, not the late failure")
					.contains("Lease held by")
					.doesNotContain("late failure");
				releaseSecond.countDown();
				await().atMost(WAIT).until(() -> "completed".equals(fixture.row(id).get("state")));
			}
			else {
				assertThat(fixture.row(id)).as("the late completion wrote nothing")
					.containsEntry("finished_at", finishedByOther);
			}
			assertThat(calls).hasValue(2);
			return fixture.row(id);
		}
		finally {
			releaseFirst.countDown();
			releaseSecond.countDown();
			hung.stop();
			if (other != null) {
				other.stop();
			}
		}
	}

	@Test
	void stoppingLetsRunningJobsFinishWithinTheShutdownTimeoutWithoutLosingTheirLease() throws Exception {
		fixture.configure(leased("drain").withConcurrency(2));
		CountDownLatch started = new CountDownLatch(2);
		CountDownLatch release = new CountDownLatch(1);
		fixture.handle("drain.job", "drain", (job) -> {
			started.countDown();
			release.await();
		});
		JobPoller poller = fixture.poller("drain");
		List<UUID> ids = fixture.client().enqueueAll(List.of(JobRequest.of("drain.job", 1), JobRequest.of("drain.job", 2)));
		poller.start();
		assertThat(started.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
		CountDownLatch stopped = new CountDownLatch(1);
		poller.stop(stopped::countDown);
		Timestamp leaseAtStop = leaseUntil(ids.get(0));
		AtomicInteger rescued = new AtomicInteger();
		try {
			// Longer than the lease, well within the 10 s shutdown timeout: the jobs still run, so
			// their leases must still be extended and no rescuer may take them.
			await().atMost(WAIT).pollInterval(Duration.ofMillis(20)).until(() -> {
				rescued.addAndGet(maintenance.rescue());
				Timestamp current = leaseUntil(ids.get(0));
				return current == null
						|| Duration.between(leaseAtStop.toInstant(), current.toInstant()).toMillis() >= 1500;
			});
			assertThat(rescued).hasValue(0);
			assertThat(stopped.getCount()).as("stop waits for the running jobs").isEqualTo(1);
		}
		finally {
			release.countDown();
		}
		assertThat(stopped.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
		assertThat(ids).allSatisfy((id) -> assertThat(fixture.row(id)).containsEntry("state", "completed")
			.containsEntry("attempt", 1));
	}

	@Test
	void stoppingReturnsAJobThatOutlivesTheShutdownTimeoutWithoutUsingAnAttemptAndInterruptsItsHandler()
			throws Exception {
		fixture.configure(leased("abort"));
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch interrupted = new CountDownLatch(1);
		CountDownLatch never = new CountDownLatch(1);
		fixture.handle("abort.job", "abort", (job) -> {
			started.countDown();
			try {
				never.await();
			}
			catch (InterruptedException ex) {
				interrupted.countDown();
				throw ex;
			}
		});
		JobPoller poller;
		fixture.workerSettings(new WorkerSettings(Duration.ofMillis(500), false, false));
		try {
			poller = fixture.poller("abort");
		}
		finally {
			fixture.workerSettings(DEFAULT_WORKERS);
		}
		UUID id = fixture.client().enqueue("abort.job", null);
		ListAppender<ILoggingEvent> runnerLogs = new ListAppender<>();
		runnerLogs.start();
		Logger runnerLogger = (Logger) LoggerFactory.getLogger(JobRunner.class);
		runnerLogger.addAppender(runnerLogs);
		poller.start();
		assertThat(started.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
		assertThat(fixture.row(id)).containsEntry("state", "running").containsEntry("attempt", 1);

		try {
			CompletableFuture.runAsync(poller::stop).get(WAIT.toSeconds(), TimeUnit.SECONDS);
		}
		finally {
			runnerLogger.detachAppender(runnerLogs);
		}
		assertThat(runnerLogs.list).extracting(ILoggingEvent::getFormattedMessage)
			.as("the interrupted handler's exception is not reported as a failed attempt: the job went back unspent")
			.noneMatch((message) -> message.contains(id.toString()));

		Map<String, Object> row = fixture.row(id);
		assertThat(row).containsEntry("state", "available")
			.containsEntry("attempt", 0)
			.containsEntry("lease_owner", null)
			.containsEntry("lease_until", null)
			.containsEntry("started_at", null)
			.containsEntry("finished_at", null);
		assertThat(interrupted.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("handler thread interrupted").isTrue();
		assertThat(fixture.row(id)).as("the interrupted attempt records nothing").containsEntry("state", "available")
			.containsEntry("attempt", 0)
			.containsEntry("last_error", null);
	}

	@Test
	void retriesAFailingJobWithBackoffUntilItFailsForGood() {
		fixture.configure(leased("retry").withMaxAttempts(3)
			.withRetry(new RetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(1), 1.0, 0.0)));
		AtomicInteger calls = new AtomicInteger();
		fixture.handle("retry.job", "retry", (job) -> {
			calls.incrementAndGet();
			throw new IllegalStateException("payment gateway down (attempt " + job.attempt() + ")");
		});
		JobPoller poller = fixture.poller("retry");
		UUID id = fixture.client().enqueue("retry.job", null);
		poller.start();
		try {
			await().atMost(WAIT).until(() -> "scheduled".equals(fixture.row(id).get("state")));
			Map<String, Object> scheduled = fixture.jdbc()
				.queryForMap("SELECT state, attempt, last_error, lease_owner, run_at > clock_timestamp() AS later FROM "
						+ fixture.table() + " WHERE public_id = ?", id);
			assertThat(scheduled).containsEntry("state", "scheduled")
				.containsEntry("attempt", 1)
				.containsEntry("lease_owner", null)
				.containsEntry("later", true);
			assertThat((String) scheduled.get("last_error")).contains("payment gateway down (attempt 1)");

			// The promoter makes each retry available once due.
			await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
				maintenance.promote();
				return "failed".equals(fixture.row(id).get("state"));
			});
			Map<String, Object> failed = fixture.row(id);
			assertThat(failed).containsEntry("attempt", 3).containsEntry("lease_owner", null);
			assertThat(failed.get("finished_at")).isNotNull();
			assertThat((String) failed.get("last_error")).contains("Attempt 3 of 3 was the last")
				.contains("payment gateway down (attempt 3)");
			assertThat(calls).hasValue(3);
		}
		finally {
			poller.stop();
		}
	}

	private static Timestamp leaseUntil(UUID id) {
		return fixture.jdbc()
			.queryForObject("SELECT lease_until FROM " + fixture.allJobs() + " WHERE public_id = ?", Timestamp.class, id);
	}

	/** The real repository, except that lease extensions never reach the database. */
	private static final class LeaseExtensionsLost extends JobRepository {

		LeaseExtensionsLost(QueueFixture fixture) {
			super(new JdbcTemplate(fixture.dataSource()), SchemaName.of(fixture.schema().name()));
		}

		@Override
		public LeaseExtension extendLeases(String owner, Collection<Long> ids, Duration lease) {
			return new LeaseExtension(Set.of(), Set.of());
		}

	}

}
