package dev.pgqueue.reliability;

import java.sql.Timestamp;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.QueueMode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 6, leased mode: a worker hangs with jobs in its hands for longer than their lease (the
 * whole process stopped with SIGSTOP, as a long GC pause, a frozen VM or a partition from the
 * database would). The other worker's rescuer returns the jobs, counting the expired attempt, and
 * runs them again; when the hung worker comes back, its handlers finish late and their outcomes are
 * refused, so the rescued jobs keep the result of their second run, and the jobs it had claimed
 * ahead but not started are dropped, not run a second time.
 */
class HungWorkerTests {

	private static final int JOBS = 4_000;

	/** Logged for a job whose handler finished after its lease was lost. */
	private static final String LATE_FINISH = "after its lease was lost";

	/** Logged for a job claimed ahead whose lease was lost before a worker could start it. */
	private static final String NOT_STARTED = "was not started: its lease was lost";

	@Test
	void jobsOfAWorkerHungPastTheirLeaseAreRescuedCountedAndNeverOverwrittenByItsLateFinish() throws Exception {
		QueueMode mode = QueueMode.LEASED;
		String scenario = "hung";
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload, Scenarios.options(mode,
						Map.of("work-ms", "20", "lease-ms", "2000", "rescue-ms", "500")))) {
			workload.enqueue(JOBS);
			long start = System.nanoTime();
			List<Worker> workers = fleet.startReady("w", 2);
			Worker hung = workers.get(0);
			await().atMost(Duration.ofMinutes(1)).until(() -> workload.completed() >= JOBS / 3);
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
				.until(() -> workload.inFlight(hung, mode) > 0);

			hung.freeze();
			long frozenAt = System.nanoTime();
			List<UUID> held;
			try {
				held = workload.jdbc().queryForList("SELECT public_id FROM " + workload.allJobs()
						+ " WHERE state = 'running' AND lease_owner LIKE ?", UUID.class, hung.pid() + "@%");
				// The other worker rescues and finishes them while the hung one cannot even extend its leases.
				await().atMost(Duration.ofSeconds(60))
					.until(() -> workload.jdbc().queryForObject("SELECT count(*) FROM " + workload.allJobs()
							+ " WHERE public_id = ANY(?::uuid[]) AND state = 'completed'", Long.class,
							Scenarios.uuidArray(held)) == held.size());
			}
			finally {
				hung.thaw();
			}
			Duration frozen = Duration.ofNanos(System.nanoTime() - frozenAt);
			List<UUID> rescued = workload.jdbc().queryForList("SELECT public_id FROM " + workload.allJobs()
					+ " WHERE public_id = ANY(?::uuid[]) AND attempt > 1", UUID.class, Scenarios.uuidArray(held));
			Map<UUID, Timestamp> finishedBeforeThaw = workload.finishedAt(rescued);

			// Back to life, the hung worker finishes the jobs it was running late, and the guarded completion
			// refuses each; the jobs it had claimed ahead and not started, it drops without running them.
			await().atMost(Duration.ofSeconds(30))
				.until(() -> hung.lines(LATE_FINISH).size() + hung.lines(NOT_STARTED).size() >= rescued.size());
			workload.awaitDrained(Duration.ofMinutes(2));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Workload.Tally tally = workload.tally(fleet.log());
			Figures.print("6. worker hung past its lease, " + Scenarios.name(mode), tally, took, "jobs held by the hung "
					+ "worker " + held.size() + ", rescued " + rescued.size() + ", frozen " + Figures.seconds(frozen)
					+ ", late outcomes refused " + hung.lines(LATE_FINISH).size() + ", dropped unstarted "
					+ hung.lines(NOT_STARTED).size());
			Guarantees.assertHeld(mode, tally, JOBS);
			assertThat(held).as("jobs the hung worker held").isNotEmpty();
			assertThat(rescued).as("every held job whose lease expired ran again").isNotEmpty();
			assertThat(tally.duplicatedUnexplained()).isZero();
			assertThat(tally.extraAttempts()).as("each expired lease counted one attempt").isEqualTo(tally.rescued());
			assertThat(fleet.log().rescued()).as("the rescuer named every rescued job").containsAll(rescued);
			assertThat(workload.finishedAt(rescued)).as("the late finishes changed none of the rescued jobs")
				.isEqualTo(finishedBeforeThaw);
			assertThat(workload.jdbc().queryForList("SELECT DISTINCT attempt FROM " + workload.allJobs()
					+ " WHERE public_id = ANY(?::uuid[])", Integer.class, Scenarios.uuidArray(rescued)))
				.as("attempts of the rescued jobs: the expired one and the one that completed")
				.containsOnly(2);
			assertThat(hung.isAlive()).isTrue();
		}
	}

}
