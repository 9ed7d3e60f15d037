package dev.pgqueue.engine.job;

import java.time.Duration;
import java.time.Instant;

import dev.pgqueue.JobState;
import org.jspecify.annotations.Nullable;

/**
 * What an attempt that did not complete leaves on its job's row: the state it moves to, when it runs
 * again, its last error, and the entry it adds to the job's attempt history.
 *
 * @param attempt the number of the attempt that ended
 * @param next the state the job moves to: scheduled (retried or snoozed), failed or cancelled
 * @param delay how long until it runs again, when scheduled
 * @param lastError what the job's last error becomes; ignored for a snooze, which keeps the last one
 * @param outcome how the attempt ended, as the history names it ({@code retried}, {@code failed},
 * {@code snoozed}…)
 * @param errorClass the class of the failure, or {@code null}
 * @param message the failure's message, bounded, or {@code null}
 * @param snoozed whether the attempt snoozed, so that the job gets it back and counts the snooze
 * @param startedAt when the attempt started, when the caller knows better than the row (the claim of
 * a transaction that has since ended); {@code null} to take it from the row or the transaction
 */
public record AttemptEnd(int attempt, JobState next, Duration delay, @Nullable String lastError, String outcome,
		@Nullable String errorClass, @Nullable String message, boolean snoozed, @Nullable Instant startedAt) {

	/** The same end, with the attempt's start as the caller knows it. */
	public AttemptEnd startedAt(@Nullable Instant start) {
		return new AttemptEnd(this.attempt, this.next, this.delay, this.lastError, this.outcome, this.errorClass,
				this.message, this.snoozed, start);
	}

}
