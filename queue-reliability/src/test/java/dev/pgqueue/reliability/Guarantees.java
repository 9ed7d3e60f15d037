package dev.pgqueue.reliability;

import dev.pgqueue.QueueMode;
import org.assertj.core.api.SoftAssertions;

/** What each mode promises, checked against a scenario's tally. */
final class Guarantees {

	private Guarantees() {
	}

	/**
	 * Both modes: every job completed with its ledger row. Transactional mode: each job's work
	 * committed exactly once, and no attempt was counted for a batch that died. Leased mode (at
	 * least once): a job ran again only for a recorded reason (an expired lease in its attempt
	 * history, a failed attempt in the logs, or a return at shutdown), every run after an expired
	 * lease or a failure counted an attempt, and every rescue a rescuer logged is in the job's
	 * history.
	 */
	static void assertHeld(QueueMode mode, Workload.Tally tally, long expectedJobs) {
		SoftAssertions softly = new SoftAssertions();
		softly.assertThat(tally.jobs()).as("jobs in the table").isEqualTo(expectedJobs);
		softly.assertThat(tally.lost()).as("jobs lost (not completed, or completed without their ledger row)").isZero();
		softly.assertThat(tally.unknownLedgerRows()).as("ledger rows of no enqueued job").isZero();
		if (mode == QueueMode.TRANSACTIONAL) {
			softly.assertThat(tally.duplicates()).as("ledger rows beyond one per job").isZero();
			softly.assertThat(tally.extraAttempts()).as("attempts counted beyond the first").isZero();
			softly.assertThat(tally.rescued()).as("rescued jobs (transactional mode has no leases)").isZero();
		}
		else {
			// Only a release at shutdown runs a job again without counting an attempt, and the engine
			// logs how many it released, not which.
			softly.assertThat(tally.rescuesLoggedNotRecorded())
				.as("jobs a rescuer's log names whose attempt history records no expired lease").isZero();
			softly.assertThat(tally.duplicatedUnexplained())
				.as("jobs run twice with neither an expired lease in their history nor a retry in the logs")
				.isLessThanOrEqualTo(tally.released());
			softly.assertThat(tally.sameAttemptTwice()).as("jobs with an attempt that ran twice")
				.isLessThanOrEqualTo(tally.released());
			softly.assertThat(tally.runsBeyondAttempts()).as("jobs that ran more often than attempts were counted")
				.isLessThanOrEqualTo(tally.released());
		}
		softly.assertAll();
	}

}
