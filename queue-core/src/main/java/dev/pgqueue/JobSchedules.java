package dev.pgqueue;

import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Recurring jobs, held in the database and shared by every instance on the jobs table: each tick of a
 * schedule enqueues exactly one job, whichever instance fires it, with {@link Job#runAt()} equal to
 * the tick's instant.
 *
 * <p>Schedules declared in configuration ({@code pgqueue.schedules.<name>}) are saved at start-up;
 * the methods here change any schedule at run time. Every change takes effect for all instances at
 * their next tick pass.
 */
public interface JobSchedules {

	/**
	 * Creates the schedule, or updates the one of that name. An update that changes the cron
	 * expression or the time zone moves the next tick to the first tick of the new expression after
	 * now; one that changes only the job (kind, queue, payload) or the policies keeps it. Pausing is
	 * kept either way.
	 * @return the schedule as saved
	 */
	ScheduleDetails save(Schedule schedule);

	/** The schedule of that name, if there is one. */
	Optional<ScheduleDetails> get(String name);

	/** Every schedule, by name. */
	List<ScheduleDetails> list();

	/**
	 * Pauses a schedule: its ticks do not fire until it is resumed; those that fall due meanwhile are
	 * missed ticks then.
	 * @return whether it was running (and is now paused)
	 */
	boolean pause(String name);

	/** Resumes a paused schedule; returns whether it was paused. */
	boolean resume(String name);

	/**
	 * Enqueues the schedule's job now, outside its ticks: the ticks go on as before.
	 * @return the job's id
	 * @throws IllegalArgumentException if no schedule has that name
	 */
	UUID runNow(String name);

	/**
	 * Deletes a schedule; its jobs already enqueued stay. A schedule declared in an application's
	 * configuration comes back when that application starts again, unless it is removed from the
	 * configuration first.
	 * @return whether there was one
	 */
	boolean delete(String name);

}
