package dev.pgqueue.engine;

import java.util.List;
import java.util.Objects;

import dev.pgqueue.JobRequest;

/**
 * The largest {@code enqueueAll} call an engine takes ({@code pgqueue.max-jobs-per-enqueue}): one call is
 * one insert in one transaction, whose arrays the driver and the server hold in memory whole, and whose
 * locks and WAL come all at once; a call that is too large is refused before any job is made, so none of
 * its jobs is enqueued.
 *
 * @param max most jobs one call may carry
 */
record EnqueueSize(int max) {

	/**
	 * The requests, checked.
	 * @throws IllegalArgumentException naming the count and the setting when there are more than
	 * {@link #max()}
	 */
	List<JobRequest> check(List<JobRequest> requests) {
		Objects.requireNonNull(requests, "requests must not be null");
		if (requests.size() > this.max) {
			JobRequest first = requests.get(0);
			throw new IllegalArgumentException("An enqueueAll of " + requests.size() + " jobs (the first a '"
					+ ((first != null) ? first.kind() : null) + "' job) is larger than pgqueue.max-jobs-per-enqueue ("
					+ this.max + "); none of them was enqueued. Enqueue them in calls of at most " + this.max
					+ " jobs, in one transaction if they must commit together, or raise pgqueue.max-jobs-per-enqueue.");
		}
		return requests;
	}

}
