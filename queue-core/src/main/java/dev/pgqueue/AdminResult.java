package dev.pgqueue;

import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * What an operation of {@link JobAdmin} on one job did.
 *
 * @param id the job's public id
 * @param outcome whether the operation was applied, and if not, why
 * @param state the job's state after the operation when applied ({@code null} once deleted),
 * else the state that kept it from applying ({@code null} when not found)
 */
public record AdminResult(UUID id, Outcome outcome, @Nullable JobState state) {

	/** Whether the operation changed the job. */
	public boolean applied() {
		return this.outcome == Outcome.APPLIED;
	}

	/** Whether an operation on one job was applied. */
	public enum Outcome {

		/** Done. */
		APPLIED,

		/** No job has this id (never had, or it was pruned or deleted). */
		NOT_FOUND,

		/**
		 * A worker has the job: a leased job running, or a job whose row another transaction holds (a
		 * transactional batch or a prepared transaction running it). Nothing was changed; try again once
		 * it is finished.
		 */
		RUNNING,

		/** The job is in a state the operation does not apply to (say, cancelling a completed job). */
		NOT_ALLOWED,

		/**
		 * The job is running, and the instance running it was asked to cancel it: it stops the job within
		 * a second and the job ends {@link JobState#CANCELLED}, unless its attempt finishes first, in which
		 * case the job's own outcome stands. The request also stops a later attempt of the job.
		 */
		CANCEL_REQUESTED

	}

}
