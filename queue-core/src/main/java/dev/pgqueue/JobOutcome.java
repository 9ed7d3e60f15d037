package dev.pgqueue;

/** The outcome of one attempt. */
public enum JobOutcome {

	/** The job completed. */
	COMPLETED,

	/** The attempt failed and the job will be tried again. */
	RETRIED,

	/** The job failed for good. */
	FAILED,

	/** The attempt was interrupted by shutdown; the job went back without using the attempt. */
	RELEASED,

	/**
	 * The listener asked to run the job later ({@link JobSnoozedException}); the job went back without
	 * using the attempt.
	 */
	SNOOZED,

	/** The job was cancelled while it ran ({@link JobAdmin#cancel}); it is never retried. */
	CANCELLED

}
