package dev.pgqueue.engine.transactional;

/**
 * Whether shutdown has run out of time for the batches of one queue: set once the shutdown timeout
 * passed with batches still running, read by each batch between its jobs.
 */
public final class BatchStop {

	private volatile boolean aborting;

	/** Whether the running batches must stop: leave their remaining jobs, release interrupted ones. */
	public boolean aborting() {
		return this.aborting;
	}

	void abort() {
		this.aborting = true;
	}

	void reset() {
		this.aborting = false;
	}

}
