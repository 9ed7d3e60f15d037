package dev.pgqueue;

/**
 * What an enqueue with a unique key does when an unfinished job of the same kind already holds that
 * key ({@link JobRequest#uniqueKey(String)}). In every case the enqueue inserts no second job and
 * returns the id of the job that holds the key.
 *
 * <p>{@link #REPLACE} and {@link #DEBOUNCE} change only a job that still waits (available and not
 * claimed, or scheduled). A job that already runs (claimed by a transactional batch or leased) is
 * left as it is: the request is folded into it as with {@link #KEEP}, since its attempt has already
 * read its payload.
 */
public enum OnConflict {

	/** Keeps the waiting or running job as it is (the default). */
	KEEP,

	/**
	 * Gives the waiting job the request's payload, run time (its delay or instant, from now) and rate
	 * weight ({@link JobRequest#rateWeight(int)}, or its kind's when the request gives none), as if it
	 * had been enqueued in its place; it keeps its id, attempts and enqueue time.
	 */
	REPLACE,

	/**
	 * Moves the waiting job's run time to the request's when that is later, and keeps its payload: a
	 * burst of requests, each with a delay, makes one job that runs that delay after the last of them.
	 * Its rate weight stays too.
	 */
	DEBOUNCE

}
