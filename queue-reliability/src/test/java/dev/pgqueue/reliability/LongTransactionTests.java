package dev.pgqueue.reliability;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

import dev.pgqueue.QueueMode;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenario 7: a transaction held open elsewhere in the database (a forgotten session, a long
 * report, a stuck migration) while the queue works. Vacuum cannot remove the rows that finished
 * jobs leave behind while it is open, and a claim that reads the claim index from its start walks
 * past every one of them; the workers' claims start from their floors instead and read only the
 * last seconds' entries. Measured before, during and after a 45-second hold, with jobs arriving at
 * a steady pace: dead tuples, the claim index entries the workers' claims read per scan (from the
 * server's statistics), and once per phase the time of a claim from the start of the index, which
 * shows what the hold would cost without floors.
 */
class LongTransactionTests {

	private static final Duration BEFORE = Duration.ofSeconds(10);

	private static final Duration HOLD = Duration.ofSeconds(45);

	private static final Duration AFTER = Duration.ofSeconds(10);

	private static final int JOBS_PER_SECOND = 250;

	private static final Duration SAMPLE_EVERY = Duration.ofMillis(250);

	@Test
	void aTransactionHeldOpenBloatsTheTableButNeitherSlowsTheWorkersClaimsNorLosesAJob() throws Exception {
		QueueMode mode = QueueMode.TRANSACTIONAL;
		String scenario = "long_transaction";
		// Jobs fall due at a steady pace over the three phases and a margin for the waits between them.
		Duration spread = BEFORE.plus(HOLD).plus(AFTER).plusSeconds(10);
		int jobs = (int) (JOBS_PER_SECOND * spread.toSeconds());
		try (Workload workload = Workload.create(scenario);
				WorkerFleet fleet = new WorkerFleet(scenario, workload, Scenarios.options(mode))) {
			List<Worker> workers = fleet.startReady("w", 2);
			workload.awaitNoOlderTransactions(Instant.now(), Duration.ofMinutes(2));
			long start = System.nanoTime();
			workload.enqueue(jobs, spread);
			Sampler sampler = new Sampler(workload, workers);
			Phase before = sampler.observe("before", BEFORE);
			List<Phase> during = new ArrayList<>();
			long unremovable;
			try (Connection holder = TestDatabase.get().connect()) {
				holder.setAutoCommit(false);
				try (Statement statement = holder.createStatement()) {
					// An xid of its own holds back the horizon of every vacuum in the database.
					statement.execute("SELECT txid_current()");
				}
				// In quarters, to show the trend: every finished job adds rows each claim walks past.
				for (int quarter = 1; quarter <= 4; quarter++) {
					during.add(sampler.observe("hold " + (quarter - 1) * HOLD.toSeconds() / 4 + "-"
							+ quarter * HOLD.toSeconds() / 4 + "s", HOLD.dividedBy(4)));
				}
				unremovable = workload.vacuum();
				holder.rollback();
			}
			// Vacuum and claims recover only once no session in the database still sees those rows.
			Instant released = Instant.now();
			workload.awaitNoOlderTransactions(released, Duration.ofMinutes(2));
			Phase after = sampler.observe("after", AFTER);
			long remaining = workload.vacuum();
			workload.awaitDrained(Duration.ofMinutes(2));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			Workload.Tally tally = workload.tally(fleet.log());
			Figures.print("7. transaction held open " + HOLD.toSeconds() + "s, " + Scenarios.name(mode), tally, took,
					before + "; " + during.stream().map(Phase::toString).collect(Collectors.joining("; ")) + "; " + after
							+ "; VACUUM left " + unremovable
							+ " dead tuples at the end of the hold, " + remaining + " after it");
			Guarantees.assertHeld(mode, tally, jobs);
			assertThat(remaining).as("dead tuples VACUUM could not remove after the transaction ended")
				.isLessThan(unremovable / 10);
			assertThat(unremovable).as("dead tuples VACUUM could not remove while the transaction was open")
				.isGreaterThan(JOBS_PER_SECOND * HOLD.toSeconds() / 2);
			Phase lastQuarter = during.get(during.size() - 1);
			// The hold is real (VACUUM could remove nothing, above); by its last quarter, three quarters of it
			// in claimed jobs lie in the index. A claim from the start reads them all, a claim from the floors
			// the last two seconds' (the mean includes each worker's sweep, one a second). One timed claim
			// from the start per phase is printed, not judged: a single timing is too noisy to compare.
			long claimedSinceHold = JOBS_PER_SECOND * HOLD.toSeconds() * 3 / 4;
			assertThat(lastQuarter.entriesPerScan()).as("claim index entries the workers' claims read per scan")
				.isLessThan(claimedSinceHold / 4.0);
			assertThat(lastQuarter.backlog).as("the workers keep up during the hold").isLessThan(JOBS_PER_SECOND * 5L);
		}
	}

	/** Samples the claim statement's time, dead tuples and backlog while checking the workers live. */
	private static final class Sampler {

		private final Workload workload;

		private final List<Worker> workers;

		private final TransactionTemplate transactions;

		Sampler(Workload workload, List<Worker> workers) {
			this.workload = workload;
			this.workers = workers;
			this.transactions = new TransactionTemplate(new DataSourceTransactionManager(workload.schema().dataSource()));
		}

		Phase observe(String name, Duration duration) {
			Phase phase = new Phase(name);
			long[] reads = this.workload.claimIndexReads();
			await().during(duration)
				.atMost(duration.plusSeconds(30))
				.pollInterval(SAMPLE_EVERY)
				.alias("workers alive during the phase '" + name + "'")
				.until(() -> {
					phase.deadTuples = Math.max(phase.deadTuples, this.workload.deadTuples());
					phase.backlog = Math.max(phase.backlog, this.workload.available());
					return this.workers.stream().allMatch(Worker::isAlive);
				});
			long[] readsAfter = this.workload.claimIndexReads();
			phase.scans = readsAfter[0] - reads[0];
			phase.entriesRead = readsAfter[1] - reads[1];
			// After reading the statistics, so that this one scan from the start is not counted.
			phase.fromStartMillis = timeClaim() / 1e6;
			return phase;
		}

		/** Runs the engine's claim statement and rolls it back, returning how long it took. */
		private long timeClaim() {
			long[] nanos = new long[1];
			this.transactions.executeWithoutResult((status) -> {
				long start = System.nanoTime();
				this.workload.repository()
					.claimLocked(WorkerProcess.QUEUE, new String[] { WorkerProcess.KIND }, 20);
				nanos[0] = System.nanoTime() - start;
				status.setRollbackOnly();
			});
			return nanos[0];
		}

	}

	private static final class Phase {

		private final String name;

		private long deadTuples;

		private long backlog;

		private long scans;

		private long entriesRead;

		private double fromStartMillis;

		Phase(String name) {
			this.name = name;
		}

		double entriesPerScan() {
			return (this.scans > 0) ? this.entriesRead / (double) this.scans : 0;
		}

		@Override
		public String toString() {
			return String.format(Locale.ROOT, "%s: workers' claims read %.0f claim index entries per scan (%d scans), "
					+ "a claim from the start %.2f ms, dead tuples up to %d, backlog up to %d", this.name,
					entriesPerScan(), this.scans, this.fromStartMillis, this.deadTuples, this.backlog);
		}

	}

}
