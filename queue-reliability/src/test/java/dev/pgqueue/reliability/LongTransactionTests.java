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
 * jobs leave behind while it is open, and every claim walks past them; once it ends, claims recover
 * and vacuum catches up. Measured: dead tuples of the jobs table and the time of the claim
 * statement, before, during and after a one-minute hold, with jobs arriving at a steady pace.
 */
class LongTransactionTests {

	private static final Duration BEFORE = Duration.ofSeconds(10);

	private static final Duration HOLD = Duration.ofSeconds(60);

	private static final Duration AFTER = Duration.ofSeconds(10);

	private static final int JOBS_PER_SECOND = 250;

	private static final Duration SAMPLE_EVERY = Duration.ofMillis(250);

	@Test
	void aTransactionHeldOpenForAMinuteBloatsTheTableAndSlowsClaimsButLosesNoJob() throws Exception {
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
			assertThat(lastQuarter.claimP50Millis()).as("claims walk past the dead rows while the transaction is open")
				.isGreaterThan(before.claimP50Millis());
			assertThat(after.claimP50Millis()).as("claims recover once it ends")
				.isLessThan(lastQuarter.claimP50Millis());
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
			await().during(duration)
				.atMost(duration.plusSeconds(30))
				.pollInterval(SAMPLE_EVERY)
				.alias("workers alive during the phase '" + name + "'")
				.until(() -> {
					phase.claims.add(timeClaim());
					phase.deadTuples = Math.max(phase.deadTuples, this.workload.deadTuples());
					phase.backlog = Math.max(phase.backlog, this.workload.available());
					return this.workers.stream().allMatch(Worker::isAlive);
				});
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

		private final List<Long> claims = new ArrayList<>();

		private long deadTuples;

		private long backlog;

		Phase(String name) {
			this.name = name;
		}

		double claimP50Millis() {
			return percentile(0.50);
		}

		private double percentile(double p) {
			List<Long> sorted = this.claims.stream().sorted().toList();
			return sorted.get((int) Math.min(sorted.size() - 1, Math.floor(p * sorted.size()))) / 1e6;
		}

		@Override
		public String toString() {
			return String.format(Locale.ROOT, "%s: claim p50 %.2f ms p99 %.2f ms, dead tuples up to %d, backlog up to %d",
					this.name, percentile(0.50), percentile(0.99), this.deadTuples, this.backlog);
		}

	}

}
