package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.pgqueue.QueueMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 2: worker processes die of SIGKILL in the middle of their work, four times in one run,
 * each replaced by a fresh process. Transactional batches die with their transaction; leased jobs
 * wait for their lease to expire and are rescued.
 */
class KilledWorkerTests {

	private static final int JOBS = 8_000;

	private static final int KILLS = 4;

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void workersKilledWithSigkillMidBatchLoseNoJob(QueueMode mode) throws Exception {
		String scenario = "kill_" + Scenarios.name(mode);
		// 5 ms of work per job keeps batches open long enough for the kills to land inside them.
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload, Scenarios.options(mode, Map.of("work-ms", "5")))) {
			workload.enqueue(JOBS);
			long start = System.nanoTime();
			List<Worker> running = new ArrayList<>(fleet.startReady("w", 3));
			List<Integer> inFlightAtKill = new ArrayList<>();
			for (int kill = 1; kill <= KILLS; kill++) {
				long progress = (long) JOBS * kill / (KILLS + 2);
				await().atMost(Duration.ofMinutes(1)).until(() -> workload.completed() >= progress);
				// Kill a worker only while it holds work (an open batch, or jobs under its lease): the oldest
				// that does. A worker that joined late may hold little for a while, and waiting for that one
				// would test its share of the work, not what its death leaves behind.
				int[] holding = new int[1];
				Worker[] chosen = new Worker[1];
				await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10)).until(() -> {
					for (Worker candidate : running) {
						holding[0] = workload.inFlight(candidate, mode);
						if (holding[0] > 0) {
							chosen[0] = candidate;
							return true;
						}
					}
					return false;
				});
				Worker victim = chosen[0];
				running.remove(victim);
				victim.kill();
				inFlightAtKill.add(holding[0]);
				running.add(fleet.start("r" + kill));
			}
			workload.awaitDrained(Duration.ofMinutes(3));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Workload.Tally tally = workload.tally(fleet.log());
			String held = (mode == QueueMode.TRANSACTIONAL) ? "open batches" : "leased jobs";
			Figures.print("2. kill -9 x" + KILLS + ", " + Scenarios.name(mode), tally, took,
					held + " of the victim at each kill " + inFlightAtKill);
			Guarantees.assertHeld(mode, tally, JOBS);
			assertThat(inFlightAtKill).hasSize(KILLS).allSatisfy((n) -> assertThat(n).isPositive());
			if (mode == QueueMode.LEASED) {
				assertThat(tally.rescued()).as("the killed workers' jobs came back through the rescuer").isPositive();
				assertThat(tally.extraAttempts()).as("each expired lease counted one attempt").isEqualTo(tally.rescued());
				assertThat(tally.duplicatedUnexplained()).isZero();
			}
		}
	}

}
