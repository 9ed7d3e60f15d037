package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.QueueMode;
import dev.pgqueue.reliability.ExternalSystem.Trap;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 14: two-phase commit, with worker processes killed by SIGKILL between
 * {@code PREPARE TRANSACTION} and {@code COMMIT PREPARED}, three times before the job's effect on the
 * external system and three times after it, each replaced by a fresh process. The killed workers
 * leave their jobs prepared, rows locked; the survivors' in-doubt resolvers ask the external system
 * whether each effect happened, and commit or roll back. Every job must complete once, with its
 * ledger row once and its effect once.
 */
class TwoPhaseKillTests {

	private static final int JOBS = 600;

	private static final int TRAPS_PER_PHASE = 3;

	@Test
	void workersKilledBetweenPrepareAndCommitLeaveEveryEffectAndEveryJobOnce() throws Exception {
		String scenario = "two_phase_kill";
		ExternalSystem.createDatabase();
		Map<String, String> options = Scenarios.options(QueueMode.TRANSACTIONAL,
				Map.of("batch-size", "1", "external-url", ExternalSystem.url(), "in-doubt-ms", "1000"));
		try (Workload workload = Workload.create(scenario);
				HikariDataSource externalPool = externalPool();
				WorkerFleet fleet = new WorkerFleet(scenario, workload, options)) {
			ExternalSystem external = new ExternalSystem(externalPool, workload.schemaName());
			external.create();
			try {
				Map<UUID, Trap> traps = enqueueWithTraps(workload);
				long start = System.nanoTime();
				List<Worker> running = new ArrayList<>(fleet.startReady("w", 2));
				Set<String> sprung = new HashSet<>();
				List<String> killedAt = new ArrayList<>();
				for (int kill = 1; sprung.size() < traps.size(); kill++) {
					Worker victim = awaitTrapped(running, sprung);
					victim.kill();
					running.remove(victim);
					List<String> lines = victim.lines(ExternalSystem.TRAPPED);
					sprung.addAll(lines);
					lines.forEach((line) -> killedAt.add(line.substring(line.indexOf(ExternalSystem.TRAPPED)
							+ ExternalSystem.TRAPPED.length()).split(" ")[0]));
					running.add(fleet.start("r" + kill));
				}
				workload.awaitDrained(Duration.ofMinutes(3));
				Duration took = Duration.ofNanos(System.nanoTime() - start);

				Workload.Tally tally = workload.tally(fleet.log());
				Map<String, Object> effects = external.tally();
				List<String> committed = fleet.lines("its external effect happened, so its transaction");
				List<String> rolledBack = fleet.lines("its external effect did not happen, so its transaction");
				Figures.print("14. kill -9 between prepare and commit x" + sprung.size() + ", transactional, two-phase",
						tally, took, "kills at " + killedAt + "; resolver committed " + committed.size()
								+ ", rolled back " + rolledBack.size() + "; effects " + effects.get("effects") + " for "
								+ effects.get("jobs") + " jobs, repeated " + effects.get("repeated"));

				Guarantees.assertHeld(QueueMode.TRANSACTIONAL, tally, JOBS);
				assertThat(sprung).as("traps that stopped a worker, each killed there").hasSize(2 * TRAPS_PER_PHASE);
				assertThat(effects).as("effects on the external system: one per job, none repeated")
					.containsEntry("jobs", (long) JOBS)
					.containsEntry("effects", (long) JOBS)
					.containsEntry("repeated", 0L);
				traps.forEach((job, trap) -> {
					List<String> decided = (trap == Trap.AFTER_EFFECT) ? committed : rolledBack;
					assertThat(decided).as("the resolver's decision on job %s, killed %s", job, trap)
						.anySatisfy((line) -> assertThat(line).contains(job.toString()));
				});
				assertThat(workload.jdbc().queryForObject(
						"SELECT count(*) FROM pg_prepared_xacts WHERE starts_with(gid, ?)", Long.class,
						"pgqueue:" + workload.schemaName() + ":")).as("transactions left prepared").isZero();
			}
			finally {
				fleet.close();
				rollBackLeftovers(workload);
				external.drop();
			}
		}
	}

	/** Enqueues the jobs, with the traps spread evenly among them, alternately before and after the effect. */
	private static Map<UUID, Trap> enqueueWithTraps(Workload workload) {
		List<Map<String, Object>> payloads = new ArrayList<>();
		Map<Integer, Trap> trapAt = new LinkedHashMap<>();
		int traps = 2 * TRAPS_PER_PHASE;
		for (int i = 0; i < traps; i++) {
			trapAt.put(JOBS * (i + 1) / (traps + 2), (i % 2 == 0) ? Trap.BEFORE_EFFECT : Trap.AFTER_EFFECT);
		}
		for (int n = 0; n < JOBS; n++) {
			Map<String, Object> payload = new LinkedHashMap<>();
			payload.put("n", n);
			if (trapAt.containsKey(n)) {
				payload.put("trap", trapAt.get(n).name());
			}
			payloads.add(payload);
		}
		List<UUID> ids = workload.enqueue(payloads);
		Map<UUID, Trap> byJob = new LinkedHashMap<>();
		trapAt.forEach((n, trap) -> byJob.put(ids.get(n), trap));
		return byJob;
	}

	/** Waits until a running worker prints a trap it has not been killed for yet; returns it. */
	private static Worker awaitTrapped(List<Worker> running, Set<String> sprung) {
		Worker[] trapped = new Worker[1];
		await().atMost(Duration.ofMinutes(1))
			.pollInterval(Duration.ofMillis(20))
			.alias("a worker stopped by a trap")
			.until(() -> {
				for (Worker worker : running) {
					if (worker.lines(ExternalSystem.TRAPPED).stream().anyMatch((line) -> !sprung.contains(line))) {
						trapped[0] = worker;
						return true;
					}
				}
				return false;
			});
		return trapped[0];
	}

	/** A failed run must not leave prepared transactions behind: they hold locks and vacuum back. */
	private static void rollBackLeftovers(Workload workload) {
		for (String gid : workload.jdbc().queryForList("SELECT gid FROM pg_prepared_xacts WHERE starts_with(gid, ?)",
				String.class, "pgqueue:" + workload.schemaName() + ":")) {
			workload.jdbc().execute("ROLLBACK PREPARED '" + gid + "'");
		}
	}

	private static HikariDataSource externalPool() {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(ExternalSystem.url());
		TestDatabase database = TestDatabase.get();
		if (database.username() != null) {
			config.setUsername(database.username());
		}
		if (database.password() != null) {
			config.setPassword(database.password());
		}
		config.setMaximumPoolSize(2);
		config.setMinimumIdle(0);
		return new HikariDataSource(config);
	}

}
