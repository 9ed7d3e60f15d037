package dev.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * Looks at jobs and acts on them, as an operator would: finds and lists jobs, counts them, retries
 * failed ones, cancels waiting and running ones, deletes finished ones, and pauses and resumes queues
 * across every instance.
 *
 * <p>Every operation on a job names the states it expects and takes the job's row with
 * {@code FOR UPDATE NOWAIT}, so it never overwrites an outcome a worker is writing: a job whose row a
 * transaction holds (a transactional batch running it) answers {@link AdminResult.Outcome#RUNNING}
 * at once instead of waiting for the batch. Each operation is logged with the name the
 * {@link AdminCaller} gives.
 */
public interface JobAdmin {

	/** The job with this public id, without its payload; empty when there is none (or no longer). */
	Optional<JobDetails> find(UUID id);

	/** The job with this public id, with its payload (which may hold personal data). */
	Optional<JobDetails> findWithPayload(UUID id);

	/**
	 * The attempts of a job, oldest first: when each ran, how it ended and why it failed, as many as
	 * {@code pgqueue.attempt-history} keeps (20 by default), then the attempt that completed it or that
	 * runs it under a lease now. A transactional batch's running attempt shows once its batch commits.
	 * @param id the job's public id
	 * @return its attempts; empty when no job has this id, or it has not run yet
	 */
	List<JobAttempt> attempts(UUID id);

	/**
	 * What the listener of a completed job returned, as the JSON its application's mapper wrote; kept
	 * with the job until the completed retention prunes it (nothing is kept when completed jobs are
	 * deleted as they finish). Void listeners, and listeners that returned {@code null}, store nothing.
	 * @param id the job's public id
	 * @return its output; empty when it has none, or no job has this id
	 */
	Optional<String> output(UUID id);

	/**
	 * The progress a running job's listener last reported, and whether a cancel was requested for
	 * it; written at most every 2 seconds per job, deleted when the job ends.
	 * @param id the job's public id
	 * @return its progress; empty when it reported none and no cancel is pending, or it ended
	 */
	Optional<JobProgress> progress(UUID id);

	/**
	 * Jobs matching the query, newest first, one page at a time: pass the page's
	 * {@link JobPage#next()} as the next query's {@link JobQuery#before(String) before}. Without a
	 * payload.
	 */
	JobPage list(JobQuery query);

	/**
	 * How many jobs the query matches, its cursor and limit ignored: what a bulk action on the same
	 * query will touch, as the dashboard's confirmation states it. The count reads every matching row;
	 * docs/operations.md ("Finding jobs") says which index serves each filter.
	 */
	long count(JobQuery query);

	/**
	 * The kinds this schema knows, sorted: those some instance's pollers handle (as they last
	 * reported) and those its schedules enqueue. For suggestions; kinds of jobs enqueued but handled
	 * nowhere are not among them.
	 */
	List<String> kinds();

	/** How many jobs each queue holds in each state (finished ones included, until they are pruned). */
	Map<String, Map<JobState, Long>> counts();

	/**
	 * How many jobs of each queue completed or failed within the last {@code window}, on the database
	 * clock, counted from their rows: jobs deleted as they complete ({@code retention.completed: 0})
	 * leave no row to count. Queues with none are left out.
	 */
	Map<String, Long> finishedWithin(Duration window);

	/**
	 * What each queue did over the last {@code window}, in steps of {@code step}, summed over every
	 * instance: attempts completed, failed and retried, and the mean and longest wait and run time.
	 * Read from the per-minute history the instances write every few seconds
	 * ({@code pgqueue.history.enabled}), so it still counts jobs deleted as they complete; the last
	 * point holds the current minute and lags by up to one flush. Queues that did nothing in the window
	 * are left out.
	 * @param window how far back, at most {@code pgqueue.history.retention}
	 * @param step how long each point covers: whole minutes, at least one; at most
	 * {@value #MAX_HISTORY_POINTS} points per queue
	 * @throws IllegalArgumentException when the window or the step is out of those bounds
	 */
	List<QueueHistory> history(Duration window, Duration step);

	/** Most points {@link #history} returns per queue. */
	int MAX_HISTORY_POINTS = 500;

	/**
	 * Makes a failed job available to run again now, with one attempt more than it has used if it had
	 * used them all. Its attempts so far still count, and its last error stays until it completes.
	 */
	AdminResult retry(UUID id);

	/**
	 * Retries every failed job of a queue, of a kind, or of a kind in a queue ({@code null} for either
	 * leaves it open, not both), as {@link #retry(UUID)} does, in batches. Jobs whose rows another
	 * transaction holds at that moment (the cleaner pruning them) are left as they are. For a minimum
	 * age, a batch size, a bound or other filters, use {@link #retryAll(JobQuery, RetryOptions)}.
	 * @return how many jobs were made available
	 */
	int retryFailed(@Nullable String queue, @Nullable String kind);

	/**
	 * Retries every failed job the query matches (its cursor and limit ignored), as
	 * {@link #retry(UUID)} does, in batches of 1,000, each its own statement. Jobs whose rows another
	 * transaction holds at that moment are left as they are.
	 * @param query the jobs to retry: it must name a queue, a kind, a tag, an error text or a finished
	 * instant, and its state, if any, must be {@link JobState#FAILED}
	 * @return how many jobs were made available
	 * @throws IllegalArgumentException when the query names nothing but a state, or another state
	 */
	default int retryAll(JobQuery query) {
		return retryAll(query, RetryOptions.defaults());
	}

	/**
	 * Retries the failed jobs the query matches (its cursor and limit ignored) as {@link #retry(UUID)}
	 * does, with options: only those that failed at least some time ago (so that jobs failing right
	 * now, during an outage, are left for later), a batch size, and a bound on the whole call.
	 * Each batch is its own statement; jobs whose rows another transaction holds are left as they are.
	 * @param query the jobs to retry: unless the options are {@linkplain RetryOptions#bounded()
	 * bounded}, it must name a queue, a kind, a tag, an error text or a finished instant; its state,
	 * if any, must be {@link JobState#FAILED}
	 * @param options how many, how old, and how many per statement
	 * @return how many jobs were made available
	 * @throws IllegalArgumentException when an unbounded call's query names nothing but a state, or
	 * when the query names another state
	 */
	int retryAll(JobQuery query, RetryOptions options);

	/**
	 * Cancels every waiting job ({@link JobState#AVAILABLE} or {@link JobState#SCHEDULED}) the query
	 * matches (its cursor and limit ignored), in batches of 1,000, each its own statement, publishing
	 * a cancelled event for each. Only jobs enqueued before it starts are cancelled: a producer that
	 * keeps enqueueing matching jobs cannot keep it going. Jobs that pollers are claiming at that moment
	 * are left to run; running jobs are not touched (cancel those one by one with {@link #cancel(UUID)}).
	 * @param query the jobs to cancel: it must name a queue, a kind, a tag or an error text, and its
	 * state, if any, must be available or scheduled
	 * @return how many jobs were cancelled
	 * @throws IllegalArgumentException when the query names nothing but a state, or another state
	 */
	int cancelAll(JobQuery query);

	/**
	 * Cancels a job, waiting or running.
	 * <ul>
	 * <li>A job that waits to run ({@link JobState#AVAILABLE} or {@link JobState#SCHEDULED}, no batch
	 * holding it) is cancelled at once: it will not run, and is kept, {@link JobState#CANCELLED}, for
	 * the failed retention ({@link AdminResult.Outcome#APPLIED}).</li>
	 * <li>A running job (leased and running, or held by a transactional batch) is asked to stop
	 * ({@link AdminResult.Outcome#CANCEL_REQUESTED}): the instance running it cancels its statement and
	 * interrupts its thread within a second (a transactional batch rolls its work back), and the job
	 * ends {@link JobState#CANCELLED}, never retried, unless its attempt finishes first, in which case
	 * its own outcome stands. The request also stops a later attempt of the job.</li>
	 * <li>A finished job is left as it is ({@link AdminResult.Outcome#NOT_ALLOWED}).</li>
	 * </ul>
	 * Cancelling one by one is the only way to stop a running job: {@link #cancelAll} leaves running
	 * jobs alone.
	 */
	AdminResult cancel(UUID id);

	/** Deletes a finished job (completed, failed or cancelled). */
	AdminResult delete(UUID id);

	/**
	 * Pauses a queue in every instance: pollers stop claiming its jobs within a second (at once where
	 * notifications are on); jobs already claimed run to their end; enqueues go on.
	 * @return whether the queue was running until now
	 */
	boolean pause(String queue);

	/**
	 * Resumes a paused queue in every instance.
	 * @return whether the queue was paused until now
	 */
	boolean resume(String queue);

	/** The queues paused now. */
	Set<String> pausedQueues();

}
