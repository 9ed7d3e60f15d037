package dev.pgqueue.engine.settings;

import java.time.Duration;
import java.util.List;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.Schedule;

/**
 * Recurring jobs: the schedules an application declares, and how its ticker runs.
 *
 * @param declared schedules saved at start-up ({@code pgqueue.schedules.<name>})
 * @param tickInterval time between two passes of the ticker, which fires due ticks
 * @param grace how late a tick may fire and still be on time; a later one is missed, and goes by the
 * schedule's missed-ticks policy; also how late a due tick may be before health reports it
 */
public record ScheduleSettings(List<Schedule> declared, Duration tickInterval, Duration grace) {

	public static final ScheduleSettings DEFAULT = new ScheduleSettings(List.of(), Duration.ofSeconds(1),
			Duration.ofMinutes(1));

	public ScheduleSettings {
		declared = List.copyOf(declared);
		SettingRules.positive("pgqueue.scheduling.tick-interval", tickInterval);
		SettingRules.positive("pgqueue.scheduling.grace", grace);
		if (grace.compareTo(tickInterval) <= 0) {
			throw new InvalidQueueConfigurationException("pgqueue.scheduling.grace", "pgqueue.scheduling.grace (" + grace
					+ ") must be longer than pgqueue.scheduling.tick-interval (" + tickInterval
					+ "), or ticks would count as missed before a pass could fire them",
					"Raise pgqueue.scheduling.grace or shorten pgqueue.scheduling.tick-interval.");
		}
	}

	public ScheduleSettings withDeclared(List<Schedule> declared) {
		return new ScheduleSettings(declared, this.tickInterval, this.grace);
	}

}
