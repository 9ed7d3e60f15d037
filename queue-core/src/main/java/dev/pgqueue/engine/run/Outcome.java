package dev.pgqueue.engine.run;

import java.time.Duration;

import dev.pgqueue.JobOutcome;
import dev.pgqueue.JobState;
import org.jspecify.annotations.Nullable;

/**
 * What became of one attempt, before it is recorded.
 *
 * @param kind completed, retried or failed
 * @param retryDelay delay before the next attempt when retried
 * @param error description of the failure, stored as the job's last error
 * @param cause the failure, or {@code null}
 */
public record Outcome(JobOutcome kind, Duration retryDelay, @Nullable String error, @Nullable Throwable cause) {

	static final Outcome COMPLETED = new Outcome(JobOutcome.COMPLETED, Duration.ZERO, null, null);

	static Outcome retry(Duration delay, String error, @Nullable Throwable cause) {
		return new Outcome(JobOutcome.RETRIED, delay, error, cause);
	}

	static Outcome fail(String error, @Nullable Throwable cause) {
		return new Outcome(JobOutcome.FAILED, Duration.ZERO, error, cause);
	}

	public boolean succeeded() {
		return this.kind == JobOutcome.COMPLETED;
	}

	/** The state the job moves to after a failed attempt. */
	public JobState nextState() {
		return (this.kind == JobOutcome.RETRIED) ? JobState.SCHEDULED : JobState.FAILED;
	}

}
