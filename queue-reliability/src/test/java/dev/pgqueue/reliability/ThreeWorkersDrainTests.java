package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.pgqueue.QueueMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Scenario 1: three worker processes drain one queue together; each job runs once. */
class ThreeWorkersDrainTests {

	private static final int JOBS = 6_000;

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void threeWorkerProcessesDrainOneQueueRunningEveryJobOnce(QueueMode mode) throws Exception {
		String scenario = "drain_" + Scenarios.name(mode);
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload, Scenarios.options(mode))) {
			// The jobs come once all three poll: enqueued before, they could all be taken by the processes
			// that started first (6 000 jobs drain in a few seconds, about as long as a JVM takes to start
			// on a busy machine), and the spread across processes would say nothing.
			List<Worker> workers = fleet.startReady("w", 3);
			long start = System.nanoTime();
			workload.enqueue(JOBS);
			workload.awaitDrained(Duration.ofMinutes(2));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Workload.Tally tally = workload.tally(fleet.log());
			Map<Long, Long> perWorker = workload.ledgerRowsPerWorker();
			Figures.print("1. three workers, " + Scenarios.name(mode), tally, took, "jobs per worker " + perWorker.values());
			Guarantees.assertHeld(mode, tally, JOBS);
			assertThat(tally.duplicates()).as("no lease expired, so nothing ran twice").isZero();
			assertThat(perWorker).as("every worker process ran jobs")
				.containsOnlyKeys(workers.stream().map(Worker::pid).toList());
		}
	}

}
