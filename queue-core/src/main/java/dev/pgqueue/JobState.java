package dev.pgqueue;

import java.util.Locale;

/** States of a row in the jobs table, stored as lower-case text. */
public enum JobState {

	/** Due and waiting for a worker; the only state the claim index holds. */
	AVAILABLE,

	/** Waiting for its {@code run_at} (a delayed job or a retry); promoted to available when due. */
	SCHEDULED,

	/** Claimed by a leased-mode worker that holds its lease. */
	RUNNING,

	/** Finished successfully; kept for the completed retention period. */
	COMPLETED,

	/** Out of attempts or failed with a non-retryable error; kept with its last error. */
	FAILED,

	/**
	 * Cancelled by an operator ({@link JobAdmin#cancel}) before it ran; kept for the failed retention
	 * period.
	 */
	CANCELLED;

	/** Whether the job is done with: completed, failed or cancelled. */
	public boolean isFinished() {
		return this == COMPLETED || this == FAILED || this == CANCELLED;
	}

	/** The state stored as {@code value} in the {@code state} column. */
	public static JobState fromSqlValue(String value) {
		return valueOf(value.toUpperCase(Locale.ROOT));
	}

	/** The value stored in the {@code state} column. */
	public String sqlValue() {
		return name().toLowerCase(Locale.ROOT);
	}

}
