package dev.pgqueue.engine.schedules;

import java.time.Instant;
import java.util.List;

import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.engine.job.NewJob;
import dev.pgqueue.engine.job.Uniqueness;
import dev.pgqueue.engine.sql.UniqueJobRepository.Enqueued;
import org.jspecify.annotations.Nullable;

/**
 * How the schedules' jobs are born: by the engine, as every other new job is, so that a tick's job and
 * one run now get the engine's ids (which tell their shard), the enqueue's checks, its observation, its
 * event and its wake-ups.
 */
public interface ScheduleJobs {

	/**
	 * The job a schedule makes: its kind, queue and payload, the queue's defaults.
	 * @param runAt when it becomes due (a tick's instant), or {@code null} for now
	 * @param unique the key that makes a tick fire once, or {@code null}
	 * @throws IllegalArgumentException naming the schedule when its payload is over the size limit
	 */
	NewJob of(ScheduleDetails schedule, @Nullable Instant runAt, @Nullable Uniqueness unique);

	/**
	 * Checks, before a schedule is saved, what each of its jobs will be checked for: its kind's and
	 * queue's names and its payload's size, so that a schedule that could never fire is refused at once.
	 * @param payload the payload as JSON
	 * @throws IllegalArgumentException naming the schedule and what to change
	 */
	void check(String schedule, String kind, String queue, String payload);

	/**
	 * Inserts the jobs in the caller's transaction, observed as an enqueue; once it commits, publishes
	 * their events and wakes this application's pollers of their queues.
	 * @return what became of each job, in order: inserted, or its unique key held by another job
	 */
	List<Enqueued> insert(List<NewJob> jobs);

}
