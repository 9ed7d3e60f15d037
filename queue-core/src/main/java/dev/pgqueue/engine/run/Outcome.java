package dev.pgqueue.engine.run;

import java.time.Duration;
import java.util.Locale;

import dev.pgqueue.Job;
import dev.pgqueue.JobOutcome;
import dev.pgqueue.JobState;
import dev.pgqueue.engine.job.AttemptEnd;
import org.jspecify.annotations.Nullable;

/**
 * What became of one attempt, before it is recorded.
 *
 * @param kind completed, retried, snoozed or failed
 * @param retryDelay delay before the next attempt when retried or snoozed
 * @param error description of the failure, stored as the job's last error (for a snooze, its reason,
 * which leaves the last error as it was)
 * @param cause the failure, or {@code null}
 */
public record Outcome(JobOutcome kind, Duration retryDelay, @Nullable String error, @Nullable Throwable cause) {

	static final Outcome COMPLETED = new Outcome(JobOutcome.COMPLETED, Duration.ZERO, null, null);

	static Outcome retry(Duration delay, String error, @Nullable Throwable cause) {
		return new Outcome(JobOutcome.RETRIED, delay, error, cause);
	}

	static Outcome snooze(Duration delay, String reason) {
		return new Outcome(JobOutcome.SNOOZED, delay, reason, null);
	}

	static Outcome cancel(String reason) {
		return new Outcome(JobOutcome.CANCELLED, Duration.ZERO, reason, null);
	}

	static Outcome fail(String error, @Nullable Throwable cause) {
		return new Outcome(JobOutcome.FAILED, Duration.ZERO, error, cause);
	}

	public boolean succeeded() {
		return this.kind == JobOutcome.COMPLETED;
	}

	/** The state the job moves to after an attempt that did not complete. */
	public JobState nextState() {
		return switch (this.kind) {
			case RETRIED, SNOOZED -> JobState.SCHEDULED;
			case CANCELLED -> JobState.CANCELLED;
			default -> JobState.FAILED;
		};
	}

	/**
	 * What this outcome of an attempt that did not complete leaves on the job's row, its history entry
	 * included: the failure's class and message (never the stack, never the payload), bounded.
	 */
	public AttemptEnd end(Job job) {
		boolean snoozed = this.kind == JobOutcome.SNOOZED;
		String errorClass = (this.cause != null && !snoozed) ? this.cause.getClass().getName() : null;
		String message = (this.cause != null && !snoozed) ? this.cause.getMessage() : this.error;
		return new AttemptEnd(job.attempt(), nextState(), this.retryDelay, this.error,
				this.kind.name().toLowerCase(Locale.ROOT), errorClass, bounded(message), snoozed, null);
	}

	/** Longest message an entry of the attempt history keeps, in characters. */
	static final int MAX_HISTORY_MESSAGE = 1000;

	private static @Nullable String bounded(@Nullable String message) {
		return (message == null || message.length() <= MAX_HISTORY_MESSAGE) ? message
				: message.substring(0, MAX_HISTORY_MESSAGE - 1) + "…";
	}

}
