package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.List;

import dev.pgqueue.Schedule;
import dev.pgqueue.engine.settings.ScheduleSettings;

/** How recurring jobs' ticks are fired. */
public class QueueSchedulingProperties {

	/** Time between two passes of the ticker, which fires the ticks that fell due. */
	private Duration tickInterval = ScheduleSettings.DEFAULT.tickInterval();

	/**
	 * How late a tick may fire and still be on time; a later one is missed and goes by its schedule's
	 * missed policy. Also how late a due tick may be before health reports it.
	 */
	private Duration grace = ScheduleSettings.DEFAULT.grace();

	/**
	 * The declared schedules with the ticker's timings, validated; errors name the key.
	 * @param declared the schedules of {@code pgqueue.schedules}
	 */
	ScheduleSettings toScheduleSettings(List<Schedule> declared) {
		return new ScheduleSettings(declared, this.tickInterval, this.grace);
	}

	public Duration getTickInterval() {
		return this.tickInterval;
	}

	public void setTickInterval(Duration tickInterval) {
		this.tickInterval = tickInterval;
	}

	public Duration getGrace() {
		return this.grace;
	}

	public void setGrace(Duration grace) {
		this.grace = grace;
	}

}
