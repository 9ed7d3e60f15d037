package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.pgqueue.QueueMode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 5: a transactional queue of concurrency 4 on a pool of 2 connections, one of which the
 * notification listener keeps, with handlers that write to the database in the job's transaction.
 * Batches queue for the one free connection: fewer run at once than configured, but nothing
 * deadlocks or stalls, and the worker says at start-up what is wrong and what to do.
 */
class SmallPoolTests {

	private static final int JOBS = 4_000;

	private static final Duration LONGEST_ACCEPTABLE_PAUSE = Duration.ofSeconds(5);

	@Test
	void poolSmallerThanTheConcurrencyDrainsWithoutStallingAndWarnsAboutTheConfiguration() throws Exception {
		QueueMode mode = QueueMode.TRANSACTIONAL;
		String scenario = "small_pool";
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload,
						Scenarios.options(mode, Map.of("pool-size", "2", "concurrency", "4")))) {
			workload.enqueue(JOBS);
			long start = System.nanoTime();
			List<Worker> workers = fleet.startReady("w", 2);
			Progress progress = new Progress();
			await().atMost(Duration.ofMinutes(2))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> progress.record(workload.completed()) == JOBS);
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Workload.Tally tally = workload.tally(fleet.log());
			List<String> warnings = fleet.lines("connection pool");
			Figures.print("5. pool of 2 < concurrency 4, " + Scenarios.name(mode), tally, took,
					"longest pause without a completion " + Figures.seconds(progress.longestPause()) + ", warnings "
							+ warnings.size());
			Guarantees.assertHeld(mode, tally, JOBS);
			assertThat(progress.longestPause()).as("longest time without a completed job")
				.isLessThan(LONGEST_ACCEPTABLE_PAUSE);
			assertThat(warnings).as("each worker warns once about its pool").hasSize(workers.size());
			assertThat(warnings.get(0)).contains("'reliability'", "concurrency 4", "at most 2 connections",
					"at least 6");
			assertThat(fleet.lines("polling failed")).as("no claim timed out waiting for a connection").isEmpty();
		}
	}

	/** The longest time the completed count stood still. */
	private static final class Progress {

		private long last = -1;

		private long since = System.nanoTime();

		private long longest;

		long record(long completed) {
			long now = System.nanoTime();
			if (completed != this.last) {
				this.last = completed;
				this.since = now;
			}
			this.longest = Math.max(this.longest, now - this.since);
			return completed;
		}

		Duration longestPause() {
			return Duration.ofNanos(this.longest);
		}

	}

}
