package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.pgqueue.QueueMode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 26: a leased worker that joins a deep drain late. Two workers drain 150 000 jobs of 5 ms
 * (eight at once each, more than the machine's cores can run), a third starts once they have
 * completed 5 000; once it is ready, each worker's share of the next 25 000 completions is counted. The late worker takes its share (at least
 * half of the others' average), no statement of a worker deadlocks, and no lease runs out: every job
 * runs one attempt.
 *
 * <p>What it guards: the lease keeper extends the leases of every job a worker holds, those finished
 * and waiting for the completer's next write included, while the completer writes up to a thousand
 * outcomes in one statement. When the keeper waited for the completer's row locks, the two deadlocked
 * on a busy machine, PostgreSQL broke the deadlock only after a second, leases of 3 s ran out, and the
 * rescuers put two thousand jobs back to run again in one run of this scenario's shape; with the
 * keeper waiting, two runs of this scenario logged two deadlocks each.
 */
class LateJoinerTests {

	/** Jobs the first two workers complete before the third starts. */
	private static final long HEAD_START = 5_000;

	/** Completions, of all three workers, over which each one's share is counted. */
	private static final long MEASURED = 25_000;

	@Test
	void aLeasedWorkerThatJoinsLateTakesItsShareAndNoLeaseRunsOut() throws Exception {
		String scenario = "late_joiner_leased";
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload,
						Scenarios.options(QueueMode.LEASED, Map.of("work-ms", "5")))) {
			workload.enqueue(150_000);
			List<Worker> early = fleet.startReady("w", 2);
			// The first two are well into the drain before the third starts.
			await().atMost(Duration.ofMinutes(1)).until(() -> workload.completed() >= HEAD_START);
			Worker late = fleet.startReady("late", 1).get(0);
			Map<Long, Long> before = workload.ledgerRowsPerWorker();
			long counted = before.values().stream().mapToLong(Long::longValue).sum();
			// Counted over the next MEASURED completions of all three.
			await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(50))
				.until(() -> workload.completed() >= counted + MEASURED);
			Map<Long, Long> after = workload.ledgerRowsPerWorker();
			long waiting = workload.jdbc()
				.queryForObject("SELECT count(*) FROM " + workload.allJobs() + " WHERE state = 'available'", Long.class);
			long lateDone = after.getOrDefault(late.pid(), 0L) - before.getOrDefault(late.pid(), 0L);
			double earlyMean = early.stream()
				.mapToLong((worker) -> after.getOrDefault(worker.pid(), 0L) - before.getOrDefault(worker.pid(), 0L))
				.average()
				.orElse(0);
			List<Worker> workers = List.of(early.get(0), early.get(1), late);
			long deadlocks = workers.stream()
				.mapToLong((worker) -> worker.output().lines().filter((line) -> line.contains("deadlock detected")).count())
				.sum();
			long extraAttempts = workload.jdbc()
				.queryForObject("SELECT count(*) FROM " + workload.allJobs() + " WHERE attempt > 1", Long.class);
			Figures.print("26. a leased worker joins a drain of 150 000 late",
					String.format(Locale.ROOT,
							"of the %d completions after it was ready: late %d, early %.0f on average; %d still "
									+ "waiting; jobs on a second attempt: %d; deadlocks in the workers' logs: %d",
							MEASURED, lateDone, earlyMean, waiting, extraAttempts, deadlocks));

			assertThat(waiting).as("jobs still waiting when the count ended (a drain, not its tail)").isPositive();
			assertThat(lateDone).as("the late worker's completions against the others' average %.0f", earlyMean)
				.isGreaterThanOrEqualTo((long) (earlyMean / 2));
			assertThat(deadlocks).as("statements of the workers that deadlocked (the lease keeper with the completer)")
				.isZero();
			assertThat(extraAttempts).as("jobs run again after their lease ran out").isZero();
		}
	}

}
