package dev.pgqueue.testkit;

import java.util.Locale;
import java.util.UUID;

import dev.pgqueue.JobOutcome;
import dev.pgqueue.engine.run.Attempt;
import org.jspecify.annotations.Nullable;

/**
 * One attempt a {@link QueueTester} ran on the test thread, and what became of it: completed, failed
 * and retried later, failed for good, snoozed or cancelled. Its outcome is committed by the time the
 * tester returns it.
 *
 * @param id the job's public id
 * @param kind its kind
 * @param queue its queue
 * @param attempt number of this attempt, 1 on the first run
 * @param outcome what became of the job: {@link JobOutcome#COMPLETED}, {@link JobOutcome#RETRIED},
 * {@link JobOutcome#FAILED}, {@link JobOutcome#SNOOZED} or {@link JobOutcome#CANCELLED}; never
 * {@link JobOutcome#RELEASED}, which only a stopping poller gives
 * @param error the failure as stored in the job's last error (exception, message and first frames), or
 * {@code null} when it completed
 */
public record JobRun(UUID id, String kind, String queue, int attempt, JobOutcome outcome, @Nullable String error) {

	static JobRun of(Attempt attempt) {
		return new JobRun(attempt.job().id(), attempt.job().kind(), attempt.job().queue(), attempt.job().attempt(),
				attempt.outcome().kind(), attempt.outcome().error());
	}

	/** Whether the job completed. */
	public boolean completed() {
		return this.outcome == JobOutcome.COMPLETED;
	}

	@Override
	public String toString() {
		String error = EnqueuedJob.firstLine(this.error);
		return this.id + " kind '" + this.kind + "', queue '" + this.queue + "', attempt " + this.attempt + ": "
				+ this.outcome.name().toLowerCase(Locale.ROOT) + ((error != null) ? " (" + error + ")" : "");
	}

}
