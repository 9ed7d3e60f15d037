package dev.pgqueue;

import java.time.Instant;
import java.time.ZoneId;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A recurring job as the database holds it.
 *
 * @param name the schedule's name
 * @param cron its cron expression
 * @param zone the time zone the expression reads in
 * @param kind the kind of the job each tick enqueues
 * @param queue the queue of that job
 * @param payload the job's payload, as JSON
 * @param missed what happens to ticks missed while no instance ran it
 * @param overlap whether a tick fires while the previous tick's job is unfinished
 * @param nextTick the next tick to fire
 * @param lastTick the last tick that fired, or {@code null}
 * @param lastJob the id of the job the last tick (or the last run-now) enqueued, or {@code null}
 * @param pausedAt when it was paused, or {@code null} while it runs
 * @param pausedBy who paused it, or {@code null}
 * @param declared {@code true} if it was declared in an application's configuration, {@code false} if
 * created through the API
 * @param updatedAt when its definition last changed
 */
public record ScheduleDetails(String name, String cron, ZoneId zone, String kind, String queue, String payload,
		MissedTicks missed, Overlap overlap, Instant nextTick, @Nullable Instant lastTick, @Nullable UUID lastJob,
		@Nullable Instant pausedAt, @Nullable String pausedBy, boolean declared, Instant updatedAt) {

	/** Whether the schedule is paused: its ticks do not fire until it is resumed. */
	public boolean paused() {
		return this.pausedAt != null;
	}

}
