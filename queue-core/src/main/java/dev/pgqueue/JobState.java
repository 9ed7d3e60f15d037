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
	FAILED;

	/** The value stored in the {@code state} column. */
	public String sqlValue() {
		return name().toLowerCase(Locale.ROOT);
	}

}
