package dev.pgqueue.reliability;

import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.JdbcJobAdmin;
import dev.pgqueue.engine.sql.AdminRepository;
import dev.pgqueue.schema.SchemaName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 20: an operator pauses the queue from another process while two worker processes drain
 * it and a producer keeps enqueuing; one worker hears of pauses by notification, the other only by
 * reading the pause table (at most a second apart). From a second after the pause until the resume
 * neither claims a job, while the producer's jobs still go in; after the resume they drain, each
 * job once.
 */
class QueuePauseTests {

	/** How soon after a pause no worker claims any more. */
	private static final Duration WITHIN = Duration.ofSeconds(1);

	private static final Duration PAUSE_WINDOW = Duration.ofSeconds(5);

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void noWorkerClaimsAPausedQueueUntilItIsResumedWhileEnqueuesGoOn(QueueMode mode) throws Exception {
		String scenario = "pause_" + Scenarios.name(mode);
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload, Scenarios.options(mode))) {
			JobAdmin admin = new JdbcJobAdmin(
					new AdminRepository(workload.jdbc(), SchemaName.of(workload.schemaName()), true),
					workload.repository(), null, null, () -> "reliability-operator");
			Worker notified = fleet.start("notified");
			Worker polling = fleet.start("polling", Map.of("pause-notifications", "false"));
			notified.awaitReady();
			polling.awaitReady();
			long start = System.nanoTime();
			Instant pausedAt;
			Instant resumedAt;
			Map<String, Duration> lastClaimAfterPause;
			long enqueuedWhilePaused;
			Producer producer = new Producer(workload);
			try (producer) {
				await().atMost(Duration.ofSeconds(30)).until(() -> workload.completed() > 1_000);

				assertThat(admin.pause(WorkerProcess.QUEUE)).isTrue();
				pausedAt = now(workload);
				await().during(PAUSE_WINDOW)
					.atMost(PAUSE_WINDOW.plusSeconds(5))
					.pollInterval(Duration.ofMillis(100))
					.until(() -> claimsAfter(workload, pausedAt.plus(WITHIN)) == 0);
				lastClaimAfterPause = lastClaims(workload, fleet, pausedAt);
				enqueuedWhilePaused = enqueuedAfter(workload, pausedAt);
				assertThat(enqueuedWhilePaused).as("jobs enqueued while the queue was paused").isPositive();
				assertThat(workload.available()).as("jobs waiting in the paused queue").isPositive();

				assertThat(admin.resume(WorkerProcess.QUEUE)).isTrue();
				resumedAt = now(workload);
			}
			await().atMost(Duration.ofSeconds(30)).until(() -> claimsAfter(workload, resumedAt) > 0);
			Duration firstClaimAfterResume = firstClaimAfter(workload, resumedAt);
			workload.awaitDrained(Duration.ofMinutes(2));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Workload.Tally tally = workload.tally(fleet.log());
			Figures.print("20. pause, " + Scenarios.name(mode), tally, took, String.format(Locale.ROOT,
					"last claim after the pause: %s; %d jobs enqueued during the %s pause, none claimed; first claim "
							+ "%d ms after the resume",
					describe(lastClaimAfterPause), enqueuedWhilePaused, Figures.seconds(PAUSE_WINDOW),
					firstClaimAfterResume.toMillis()));
			Guarantees.assertHeld(mode, tally, producer.enqueued());
			assertThat(tally.duplicates()).as("no lease expired, so nothing ran twice").isZero();
			assertThat(workload.ledgerRowsPerWorker()).as("both workers ran jobs")
				.containsOnlyKeys(notified.pid(), polling.pid());
		}
	}

	private static Instant now(Workload workload) {
		return workload.jdbc().queryForObject("SELECT clock_timestamp()", Timestamp.class).toInstant();
	}

	private static long claimsAfter(Workload workload, Instant instant) {
		return workload.jdbc().queryForObject("SELECT count(*) FROM " + workload.allJobs() + " WHERE started_at > ?",
				Long.class, Timestamp.from(instant));
	}

	private static long enqueuedAfter(Workload workload, Instant instant) {
		return workload.jdbc().queryForObject("SELECT count(*) FROM " + workload.allJobs() + " WHERE created_at > ?",
				Long.class, Timestamp.from(instant));
	}

	private static Duration firstClaimAfter(Workload workload, Instant instant) {
		Timestamp first = workload.jdbc().queryForObject("SELECT min(started_at) FROM " + workload.allJobs()
				+ " WHERE started_at > ?", Timestamp.class, Timestamp.from(instant));
		return Duration.between(instant, first.toInstant());
	}

	/**
	 * For each worker, how long after the pause it claimed its last job before the resume (negative:
	 * its last claim came before the pause), from the claims whose ledger rows it wrote.
	 */
	private static Map<String, Duration> lastClaims(Workload workload, WorkerFleet fleet, Instant pausedAt) {
		Map<Long, String> names = new TreeMap<>();
		fleet.all().forEach((worker) -> names.put(worker.pid(), worker.name()));
		Map<String, Duration> last = new TreeMap<>();
		workload.jdbc().query("SELECT l.worker_pid, max(j.started_at) FROM ledger l JOIN " + workload.allJobs()
				+ " j ON j.public_id = l.job_id GROUP BY l.worker_pid", (ResultSet rs) -> {
					last.put(names.get(rs.getLong(1)), Duration.between(pausedAt, rs.getTimestamp(2).toInstant()));
				});
		return last;
	}

	private static String describe(Map<String, Duration> lastClaims) {
		List<String> parts = new ArrayList<>();
		lastClaims.forEach((worker, after) -> parts.add(worker + " " + after.toMillis() + " ms"));
		return String.join(", ", parts);
	}

	/** Enqueues 20 jobs every 50 ms (400 a second) until closed. */
	private static final class Producer implements AutoCloseable {

		private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();

		private final AtomicInteger enqueued = new AtomicInteger();

		Producer(Workload workload) {
			this.executor.scheduleAtFixedRate(() -> this.enqueued.addAndGet(workload.enqueue(20).size()), 0, 50,
					TimeUnit.MILLISECONDS);
		}

		long enqueued() {
			return this.enqueued.get();
		}

		@Override
		public void close() throws InterruptedException {
			this.executor.shutdown();
			assertThat(this.executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
		}

	}

}
