package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.pgqueue.QueueMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenarios 9 and 10, bucket assignment: three worker processes split the 64 buckets 22/21/21 and
 * drain a queue, each running only the jobs of its own buckets; then a fourth joins while jobs keep
 * coming and gets its share, 16 each, within three heartbeats of joining.
 */
class BucketSpreadTests {

	private static final int JOBS = 3_000;

	/** Three heartbeats, as documented for a joining member, and one more for a shared machine. */
	private static final Duration JOIN_BOUND = Scenarios.HEARTBEAT.multipliedBy(4);

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void membersSplitTheBucketsEvenlyAndAJoiningOneGetsItsShareUnderLoad(QueueMode mode) throws Exception {
		String scenario = "bucket_spread_" + Scenarios.name(mode);
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload, Scenarios.bucketOptions(mode))) {
			BucketGroup group = new BucketGroup(workload);
			List<Worker> workers = new ArrayList<>(fleet.startReady("w", 3));
			Map<Worker, Set<Integer>> split = group.awaitSettled(workers, List.of(22, 21, 21), Duration.ofSeconds(30));

			workload.enqueue(JOBS);
			long start = System.nanoTime();
			workload.awaitDrained(Duration.ofMinutes(2));
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			Workload.Tally tally = workload.tally(fleet.log());
			Map<Long, Long> perWorker = workload.ledgerRowsPerWorker();
			long outside = group.ranOutsideTheirBucketsOwner(split);
			Figures.print("9. buckets split by three, " + Scenarios.name(mode), tally, took,
					"buckets " + BucketGroup.shares(split) + ", jobs per worker " + perWorker.values()
							+ ", run outside their bucket's owner " + outside);
			Guarantees.assertHeld(mode, tally, JOBS);
			assertThat(tally.duplicates()).as("no lease expired, so nothing ran twice").isZero();
			assertThat(group.settled(workers)).as("nobody joined or left, so no bucket moved").isEqualTo(split);
			assertThat(outside).as("jobs run by a worker that did not own their bucket").isZero();

			// A second workload, due over 10 s: the fourth worker joins while it is being drained. (Over 5 s,
			// a worker whose JVM took 4 s to start on a loaded machine found it drained already.)
			workload.enqueue(JOBS, Duration.ofSeconds(10));
			start = System.nanoTime();
			await().atMost(Duration.ofMinutes(1)).until(() -> workload.completed() >= JOBS + JOBS / 10);
			Worker fourth = fleet.start("w4").awaitReady();
			workers.add(fourth);
			Map<Worker, Set<Integer>> joined = group.awaitSettled(workers, List.of(16, 16, 16, 16),
					Duration.ofSeconds(30));
			Duration sinceJoin = group.sinceJoined(fourth);
			long pendingAtJoin = workload.available();
			workload.awaitDrained(Duration.ofMinutes(2));
			took = Duration.ofNanos(System.nanoTime() - start);

			tally = workload.tally(fleet.log());
			perWorker = workload.ledgerRowsPerWorker();
			Figures.print("10. a fourth member joins, " + Scenarios.name(mode), tally, took,
					"buckets " + BucketGroup.shares(joined) + " " + Figures.seconds(sinceJoin) + " after it joined, "
							+ pendingAtJoin + " jobs waiting then, jobs per worker (both workloads) " + perWorker.values());
			Guarantees.assertHeld(mode, tally, 2L * JOBS);
			assertThat(tally.duplicates()).as("a hand-over runs nothing twice").isZero();
			assertThat(sinceJoin).as("time from the fourth's first heartbeat to its share").isLessThan(JOIN_BOUND);
			assertThat(perWorker).as("the fourth worker ran jobs").containsKey(fourth.pid());
		}
	}

}
