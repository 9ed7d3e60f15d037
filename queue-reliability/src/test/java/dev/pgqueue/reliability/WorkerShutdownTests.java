package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.pgqueue.QueueMode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 8: workers get SIGTERM (a deployment, a scale-down) while they hold jobs, three times in
 * one run, each replaced by a fresh process. Running jobs either finish within the shutdown timeout
 * or go back to the queue without using an attempt.
 */
class WorkerShutdownTests {

	private static final int STOPS = 3;

	@Test
	void transactionalWorkersStoppedWithSigtermFinishTheirBatchesWithinTheShutdownTimeout() throws Exception {
		QueueMode mode = QueueMode.TRANSACTIONAL;
		int jobs = 6_000;
		try (Workload workload = Workload.create("stop_transactional");
				WorkerFleet fleet = new WorkerFleet("stop_transactional", workload,
						Scenarios.options(mode, Map.of("work-ms", "5", "shutdown-ms", "10000")))) {
			workload.enqueue(jobs);
			long start = System.nanoTime();
			List<Integer> inFlight = stopWorkersWhileTheyHoldJobs(workload, fleet, mode, jobs);
			workload.awaitDrained(Duration.ofMinutes(2));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Workload.Tally tally = workload.tally(fleet.log());
			Figures.print("8. SIGTERM x" + STOPS + " within the shutdown timeout, " + Scenarios.name(mode), tally, took,
					"open batches of the stopped worker at each SIGTERM " + inFlight);
			Guarantees.assertHeld(mode, tally, jobs);
			assertThat(fleet.lines("stopped; every running job finished")).as("every stop let its batches finish")
				.hasSize(STOPS);
			assertThat(fleet.lines("shutdown timeout")).isEmpty();
		}
	}

	@Test
	void leasedJobsOutlivingTheShutdownTimeoutGoBackWithoutUsingAnAttempt() throws Exception {
		QueueMode mode = QueueMode.LEASED;
		int jobs = 2_000;
		// Jobs of 150–450 ms against a shutdown timeout of 100 ms: most running jobs outlive it.
		try (Workload workload = Workload.create("stop_leased");
				WorkerFleet fleet = new WorkerFleet("stop_leased", workload,
						Scenarios.options(mode, Map.of("work-ms", "300", "concurrency", "16", "shutdown-ms", "100")))) {
			workload.enqueue(jobs);
			long start = System.nanoTime();
			List<Integer> inFlight = stopWorkersWhileTheyHoldJobs(workload, fleet, mode, jobs);
			workload.awaitDrained(Duration.ofMinutes(2));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Workload.Tally tally = workload.tally(fleet.log());
			Figures.print("8. SIGTERM x" + STOPS + " past the shutdown timeout, " + Scenarios.name(mode), tally, took,
					"leased jobs of the stopped worker at each SIGTERM " + inFlight);
			Guarantees.assertHeld(mode, tally, jobs);
			assertThat(tally.released()).as("jobs returned unfinished at shutdown").isPositive();
			assertThat(tally.extraAttempts()).as("attempts wasted by the stops").isZero();
			assertThat(tally.rescued()).as("nothing waited for a lease to expire").isZero();
		}
	}

	/**
	 * Starts three workers and sends SIGTERM to one of them {@link #STOPS} times, each time while it
	 * holds jobs, replacing it. Returns what each stopped worker held.
	 */
	private static List<Integer> stopWorkersWhileTheyHoldJobs(Workload workload, WorkerFleet fleet, QueueMode mode,
			int jobs) throws Exception {
		List<Worker> running = new ArrayList<>(fleet.startReady("w", 3));
		List<Integer> inFlight = new ArrayList<>();
		for (int stop = 1; stop <= STOPS; stop++) {
			long progress = (long) jobs * stop / (STOPS + 2);
			await().atMost(Duration.ofMinutes(1)).until(() -> workload.completed() >= progress);
			Worker victim = running.remove(0);
			int[] holding = new int[1];
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(10))
				.until(() -> (holding[0] = workload.inFlight(victim, mode)) > 0);
			assertThat(victim.terminate(Duration.ofSeconds(60))).as("exit status after SIGTERM")
				.isEqualTo(Worker.TERMINATED);
			assertThat(victim.lines(WorkerProcess.SUMMARY)).as("%s stopped through its shutdown hook", victim)
				.hasSize(1);
			inFlight.add(holding[0]);
			running.add(fleet.start("r" + stop));
		}
		return inFlight;
	}

}
