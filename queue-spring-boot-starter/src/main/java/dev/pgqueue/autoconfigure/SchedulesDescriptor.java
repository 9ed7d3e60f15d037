package dev.pgqueue.autoconfigure;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

import dev.pgqueue.ScheduleDetails;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * Every recurring job ({@code GET /actuator/pgqueue/schedules}).
 *
 * @param schedules the schedules, by name
 */
public record SchedulesDescriptor(List<ScheduleDescriptor> schedules) implements OperationResponseBody {

	/**
	 * One recurring job ({@code GET /actuator/pgqueue/schedules/{name}}), without the payload it
	 * enqueues.
	 *
	 * @param name its name
	 * @param cron its cron expression
	 * @param zone the zone its expression is read in
	 * @param kind the kind of the jobs it enqueues
	 * @param queue their queue
	 * @param missed what it does with ticks missed while no instance ran
	 * @param overlap what it does when its last job still runs
	 * @param nextTick when it fires next
	 * @param lastTick when it last fired
	 * @param lastJob the job it last enqueued
	 * @param paused whether it is paused
	 * @param pausedBy who paused it
	 * @param pausedAt when
	 * @param declared whether this application's configuration declares it
	 */
	public record ScheduleDescriptor(String name, String cron, String zone, String kind, String queue, String missed,
			String overlap, Instant nextTick, @Nullable Instant lastTick, @Nullable UUID lastJob, boolean paused,
			@Nullable String pausedBy, @Nullable Instant pausedAt, boolean declared) implements OperationResponseBody {

		static ScheduleDescriptor of(ScheduleDetails schedule) {
			return new ScheduleDescriptor(schedule.name(), schedule.cron(), schedule.zone().getId(), schedule.kind(),
					schedule.queue(), schedule.missed().name().toLowerCase(Locale.ROOT),
					schedule.overlap().name().toLowerCase(Locale.ROOT), schedule.nextTick(), schedule.lastTick(),
					schedule.lastJob(), schedule.paused(), schedule.pausedBy(), schedule.pausedAt(),
					schedule.declared());
		}

	}

}
