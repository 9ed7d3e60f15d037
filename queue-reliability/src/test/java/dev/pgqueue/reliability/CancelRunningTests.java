package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.AdminResult;
import dev.pgqueue.QueueMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 27: an operator cancels 100 running jobs spread over three worker processes, while those
 * processes also run short jobs. Every cancelled job ends {@code cancelled} (none of its work
 * committed, none retried), and every short job completes once.
 */
class CancelRunningTests {

	private static final int LONG = 100;

	private static final int SHORT = 300;

	/** Long enough that only a cancel ends them within the test. */
	private static final long LONG_SLEEP_MS = Duration.ofMinutes(5).toMillis();

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void cancelsAHundredRunningJobsOverThreeProcessesDisturbingNoOther(QueueMode mode) throws Exception {
		String scenario = "cancel_" + Scenarios.name(mode);
		// Room for every long job at once (34 per process), each alone in its batch, and for the short ones.
		Map<String, String> options = Scenarios.options(mode, Map.of("concurrency", "40", "batch-size", "1",
				"max-batch-size", "1", "pool-size", "48", "lease-ms", "5000"));
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload, options)) {
			fleet.startReady("w", 3);
			List<Map<String, Object>> longPayloads = new ArrayList<>();
			for (int i = 0; i < LONG; i++) {
				longPayloads.add(Map.of("n", i, "sleep-ms", LONG_SLEEP_MS));
			}
			List<UUID> longJobs = workload.enqueue(longPayloads);
			await().atMost(Duration.ofSeconds(60)).until(() -> heldByWorkers(workload, mode, longJobs) == LONG);
			List<Map<String, Object>> shortPayloads = new ArrayList<>();
			for (int i = 0; i < SHORT; i++) {
				shortPayloads.add(Map.of("n", LONG + i, "sleep-ms", 5));
			}
			List<UUID> shortJobs = workload.enqueue(shortPayloads);

			long asked = System.nanoTime();
			Map<AdminResult.Outcome, Integer> answers = new EnumMap<>(AdminResult.Outcome.class);
			for (UUID id : longJobs) {
				answers.merge(workload.admin().cancel(id).outcome(), 1, Integer::sum);
			}
			await().atMost(Duration.ofSeconds(30)).until(() -> count(workload, longJobs, "cancelled") == LONG);
			Duration took = Duration.ofNanos(System.nanoTime() - asked);
			await().atMost(Duration.ofMinutes(2)).until(() -> count(workload, shortJobs, "completed") == SHORT);

			long longLedger = ledgerRows(workload, longJobs);
			long shortLedger = ledgerRows(workload, shortJobs);
			long shortRunsBeyondOne = workload.jdbc().queryForObject("SELECT count(*) FROM ledger WHERE job_id = ANY(?::uuid[]) "
					+ "AND (runs > 1 OR attempt > 1)", Long.class, Scenarios.uuidArray(shortJobs));
			Integer retried = workload.jdbc().queryForObject("SELECT max(attempt) FROM " + workload.allJobs()
					+ " WHERE public_id = ANY(?::uuid[])", Integer.class, Scenarios.uuidArray(longJobs));
			System.out.printf("[reliability] 27. cancel 100 running jobs over three workers, %s: answers=%s "
					+ "all cancelled in %d ms, long-job ledger rows=%d, short jobs completed=%d ledger rows=%d "
					+ "runs beyond one=%d%n", Scenarios.name(mode), answers, took.toMillis(), longLedger,
					count(workload, shortJobs, "completed"), shortLedger, shortRunsBeyondOne);

			assertThat(answers).containsOnlyKeys(AdminResult.Outcome.CANCEL_REQUESTED);
			assertThat(longLedger).as("no cancelled job's work was committed").isZero();
			assertThat(retried).as("a cancelled job is never retried").isEqualTo(1);
			assertThat(shortLedger).as("every short job ran").isEqualTo(SHORT);
			assertThat(shortRunsBeyondOne).as("no short job ran twice").isZero();
		}
	}

	/** How many of the jobs the workers hold now: running under a lease, or locked by a batch. */
	private static long heldByWorkers(Workload workload, QueueMode mode, List<UUID> ids) {
		if (mode == QueueMode.LEASED) {
			return count(workload, ids, "running");
		}
		Long free = workload.jdbc().queryForObject("SELECT count(*) FROM (SELECT 1 FROM " + workload.table()
				+ " WHERE public_id = ANY(?::uuid[]) FOR UPDATE SKIP LOCKED) f", Long.class, Scenarios.uuidArray(ids));
		return ids.size() - free;
	}

	private static long count(Workload workload, List<UUID> ids, String state) {
		return workload.jdbc().queryForObject("SELECT count(*) FROM " + workload.allJobs()
				+ " WHERE public_id = ANY(?::uuid[]) AND state = ?", Long.class, Scenarios.uuidArray(ids), state);
	}

	private static long ledgerRows(Workload workload, List<UUID> ids) {
		return workload.jdbc().queryForObject("SELECT count(*) FROM ledger WHERE job_id = ANY(?::uuid[])", Long.class,
				Scenarios.uuidArray(ids));
	}

}
