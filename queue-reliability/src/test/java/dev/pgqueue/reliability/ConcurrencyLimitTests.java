package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import dev.pgqueue.QueueMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenarios 15 to 19, concurrency limits across three worker processes: one job of a key at a time,
 * a key limit of three, a hot key beside many small ones, keys in enqueue order, and limits on the
 * whole queue and on a kind. Every attempt records when its listener started and ended (the
 * machine's clock, shared by the workers); the checks are about those intervals.
 */
class ConcurrencyLimitTests {

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void aKeyLimitOfOneKeepsEachKeysIntervalsApart(QueueMode mode) throws Exception {
		String scenario = "key_limit_one_" + Scenarios.name(mode);
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload, limited(mode, "per-key", "1"))) {
			workload.enqueueKeyed(keys(20, 30));
			long start = System.nanoTime();
			fleet.startReady("w", 3);
			workload.awaitDrained(Duration.ofMinutes(2));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Workload.Tally tally = workload.tally(fleet.log());
			long overlaps = overlaps(workload);
			int most = mostAtOnce(workload, true);
			Figures.print("15. per-key limit 1, 20 keys, " + Scenarios.name(mode), tally, took,
					"overlapping intervals of one key " + overlaps + ", most jobs of one key at once " + most
							+ ", most jobs at once " + mostAtOnce(workload, false) + ", workers that ran jobs "
							+ workersThatRan(workload));
			Guarantees.assertHeld(mode, tally, 600);
			assertThat(overlaps).as("pairs of intervals of one key that overlap").isZero();
			assertThat(most).isEqualTo(1);
		}
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void aKeyLimitOfThreeIsNeverExceeded(QueueMode mode) throws Exception {
		String scenario = "key_limit_three_" + Scenarios.name(mode);
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload,
						Scenarios.options(mode, Map.of("per-key", "3", "work-ms", "10")))) {
			workload.enqueueKeyed(keys(4, 60));
			long start = System.nanoTime();
			fleet.startReady("w", 3);
			workload.awaitDrained(Duration.ofMinutes(2));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Workload.Tally tally = workload.tally(fleet.log());
			int most = mostAtOnce(workload, true);
			Figures.print("16. per-key limit 3, 4 keys, " + Scenarios.name(mode), tally, took,
					"most jobs of one key at once " + most);
			Guarantees.assertHeld(mode, tally, 240);
			assertThat(most).as("most jobs of one key running at once").isLessThanOrEqualTo(3);
		}
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void aHotKeyDoesNotHoldUpAHundredOthers(QueueMode mode) throws Exception {
		String scenario = "hot_key_" + Scenarios.name(mode);
		int hot = 10_000;
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload, limited(mode, "per-key", "1"))) {
			List<String> keys = new ArrayList<>(Collections.nCopies(hot, "hot"));
			keys.addAll(keys(100, 10));
			workload.enqueueKeyed(keys);
			long start = System.nanoTime();
			fleet.startReady("w", 3);
			await().atMost(Duration.ofMinutes(2))
				.pollInterval(Duration.ofMillis(50))
				.until(() -> completedOf(workload, false) == 1_000);
			Duration others = Duration.ofNanos(System.nanoTime() - start);
			long hotDone = completedOf(workload, true);
			Figures.print("17. hot key (" + hot + " jobs) beside 100 keys of 10, per-key limit 1, " + Scenarios.name(mode),
					"the 1000 jobs of the 100 keys done in " + Figures.seconds(others) + ", when " + hotDone
							+ " hot jobs were done (the hot key alone needs about "
							+ Figures.seconds(Duration.ofMillis((long) (others.toMillis() * (double) hot
									/ Math.max(1, hotDone))))
							+ " at that pace); overlapping intervals of one key " + overlaps(workload));
			assertThat(hotDone).as("hot jobs done when the other keys were all done").isLessThan(hot / 10);
			assertThat(overlaps(workload)).isZero();
		}
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void orderedKeysRunInEnqueueOrder(QueueMode mode) throws Exception {
		String scenario = "ordered_keys_" + Scenarios.name(mode);
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload, limited(mode, "ordered", "true"))) {
			workload.enqueueKeyed(keys(20, 25));
			long start = System.nanoTime();
			fleet.startReady("w", 3);
			workload.awaitDrained(Duration.ofMinutes(2));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Workload.Tally tally = workload.tally(fleet.log());
			long outOfOrder = workload.jdbc().queryForObject("""
					SELECT count(*) FROM (
					    SELECT seq, row_number() OVER (PARTITION BY key ORDER BY started_at) - 1 AS position
					    FROM intervals) s
					WHERE seq <> position""", Long.class);
			Figures.print("18. ordered keys, 20 keys of 25, " + Scenarios.name(mode), tally, took,
					"jobs started out of their key's enqueue order " + outOfOrder + ", overlapping intervals of one key "
							+ overlaps(workload));
			Guarantees.assertHeld(mode, tally, 500);
			assertThat(outOfOrder).as("jobs started out of their key's enqueue order").isZero();
			assertThat(overlaps(workload)).isZero();
		}
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void queueAndKindLimitsHoldAcrossProcesses(QueueMode mode) throws Exception {
		for (String limit : List.of("max-running", "kind-max-running")) {
			String scenario = limit.replace('-', '_') + "_" + Scenarios.name(mode);
			try (Workload workload = Workload.create(scenario);
					WorkerFleet fleet = new WorkerFleet(scenario, workload,
							Scenarios.options(mode, Map.of(limit, "4", "work-ms", "10")))) {
				workload.enqueueKeyed(keys(300, 1));
				long start = System.nanoTime();
				fleet.startReady("w", 3);
				workload.awaitDrained(Duration.ofMinutes(2));
				Duration took = Duration.ofNanos(System.nanoTime() - start);

				Workload.Tally tally = workload.tally(fleet.log());
				int most = mostAtOnce(workload, false);
				Figures.print("19. " + limit + " 4, three workers of " + ((mode == QueueMode.TRANSACTIONAL)
						? "2 batches" : "8 jobs") + ", " + Scenarios.name(mode), tally, took, "most jobs at once " + most);
				Guarantees.assertHeld(mode, tally, 300);
				assertThat(most).as("most jobs running at once under %s 4", limit).isLessThanOrEqualTo(4);
			}
		}
	}

	private static Map<String, String> limited(QueueMode mode, String key, String value) {
		return Scenarios.options(mode, Map.of(key, value, "work-ms", "4"));
	}

	/** {@code perKey} jobs of each of {@code count} keys, the keys interleaved in enqueue order. */
	private static List<String> keys(int count, int perKey) {
		List<String> keys = new ArrayList<>(count * perKey);
		for (int n = 0; n < perKey; n++) {
			for (int key = 0; key < count; key++) {
				keys.add("key-" + key);
			}
		}
		return keys;
	}

	/** Pairs of intervals of one key that overlap. */
	private static long overlaps(Workload workload) {
		return workload.jdbc().queryForObject("""
				SELECT count(*) FROM intervals a JOIN intervals b
				  ON a.key = b.key AND (a.job_id, a.attempt) < (b.job_id, b.attempt)
				 AND a.started_at < b.ended_at AND b.started_at < a.ended_at""", Long.class);
	}

	/** Most intervals open at one instant, per key or in all: ends sort before starts at a tie. */
	private static int mostAtOnce(Workload workload, boolean perKey) {
		String partition = perKey ? "PARTITION BY key" : "";
		return workload.jdbc().queryForObject("""
				SELECT coalesce(max(open), 0) FROM (
				    SELECT sum(delta) OVER (%s ORDER BY at, delta ROWS UNBOUNDED PRECEDING) AS open
				    FROM (SELECT key, started_at AS at, 1 AS delta FROM intervals
				          UNION ALL SELECT key, ended_at, -1 FROM intervals) e) s""".formatted(partition),
				Integer.class);
	}

	private static long workersThatRan(Workload workload) {
		return workload.jdbc().queryForObject("SELECT count(DISTINCT worker_pid) FROM intervals", Long.class);
	}

	private static long completedOf(Workload workload, boolean hot) {
		return workload.jdbc().queryForObject("SELECT count(*) FROM intervals WHERE (key = 'hot') = ?", Long.class,
				hot);
	}

}
