package dev.pgqueue;

/** How a queue runs its jobs relative to the database transaction that claims them. */
public enum QueueMode {

	/**
	 * Claim, run and finish each batch in one transaction. The handler's own JDBC work commits
	 * atomically with the job's completion: database effects happen exactly once. Holds a
	 * connection and row locks for as long as the batch runs, so it suits short jobs.
	 */
	TRANSACTIONAL,

	/**
	 * Claim and commit at once with a lease, run outside any transaction, extend the lease while
	 * running, and record the outcome afterwards. Suits long jobs; a job whose worker dies runs
	 * again once its lease expires, so handlers must be idempotent (at-least-once).
	 */
	LEASED

}
