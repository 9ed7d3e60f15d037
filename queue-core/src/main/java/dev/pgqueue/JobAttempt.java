package dev.pgqueue;

import java.time.Instant;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * One attempt of a job, as its history keeps it ({@link JobAdmin#attempts}): when it ran, how it
 * ended and, when it failed, the failure's class and message. Never the payload, never a stack trace
 * (the job's last error keeps the last one's).
 *
 * @param attempt the attempt's number, 1 for the first; a snooze gives its attempt back, so the next
 * run has the same number
 * @param startedAt when it was claimed, or {@code null} when not known
 * @param finishedAt when it ended, or {@code null} while it runs
 * @param outcome how it ended
 * @param error the class of the failure, or {@code null}
 * @param message the failure's message (or the snooze's reason), bounded, or {@code null}
 */
public record JobAttempt(int attempt, @Nullable Instant startedAt, @Nullable Instant finishedAt, Outcome outcome,
		@Nullable String error, @Nullable String message) {

	/** How an attempt ended. */
	public enum Outcome {

		/** It completed the job. */
		COMPLETED,

		/** It failed, and the job was scheduled to run again. */
		RETRIED,

		/** It failed, and the job failed for good. */
		FAILED,

		/** The listener asked to run the job later ({@link JobSnoozedException}); the attempt was given back. */
		SNOOZED,

		/**
		 * Its lease expired before it finished (the worker stopped or lost the database) and the rescuer
		 * took the job back; leased queues only.
		 */
		EXPIRED,

		/** It was cancelled while it ran. */
		CANCELLED,

		/** It is running now (leased queues; a transactional batch's jobs show once it commits). */
		RUNNING;

		/** The outcome stored as {@code value} in a history entry. */
		public static Outcome fromValue(String value) {
			return valueOf(value.toUpperCase(Locale.ROOT));
		}

	}

}
