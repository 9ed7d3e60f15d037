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
	 * Enqueues one job.
	 * @return the job's public id
	 */
	UUID enqueue(JobRequest request);

	/**
	 * Enqueues many jobs in one statement (one round trip).
	 * @return the jobs' public ids, in the order of the requests
	 */
	List<UUID> enqueueAll(List<JobRequest> requests);

}
