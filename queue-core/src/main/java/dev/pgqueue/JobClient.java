package dev.pgqueue;

import java.util.List;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * Enqueues jobs.
 *
 * <p>Every call joins the caller's Spring transaction when there is one, so a job and the business
 * rows it belongs to commit or roll back together; without one, the job commits at once. Payloads
 * are serialized with the application's Jackson mapper.
 */
public interface JobClient {

	/**
	 * Enqueues one job with default options.
	 * @return the job's public id
	 */
	default UUID enqueue(String kind, @Nullable Object payload) {
		return enqueue(JobRequest.of(kind, payload));
	}

	/**
	 * Enqueues one job. A request with a {@link JobRequest#uniqueKey(String) unique key} that another
	 * job holds inserts nothing and returns that job's id (changing it as the request's
	 * {@link OnConflict} says).
	 * @return the job's public id, or that of the job holding the request's unique key
	 */
	UUID enqueue(JobRequest request);

	/**
	 * Enqueues many jobs in one statement (one round trip; requests with unique keys add a statement,
	 * and, when keys are taken, one or two more). Requests for one unique key get the same id.
	 * @return the jobs' public ids, in the order of the requests (for a unique key that was taken, the
	 * holder's)
	 */
	List<UUID> enqueueAll(List<JobRequest> requests);

}
