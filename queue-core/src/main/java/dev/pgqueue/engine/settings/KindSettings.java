package dev.pgqueue.engine.settings;

import java.time.Duration;

import dev.pgqueue.InvalidQueueConfigurationException;
import org.jspecify.annotations.Nullable;

/**
 * What {@code pgqueue.kinds.<kind>.*} says of one job kind, over its listener's annotation.
 *
 * @param kind the job kind
 * @param maxRunning most jobs of the kind running at once across every instance, 0 for no limit;
 * {@code null} keeps the listener's
 * @param timeout time limit of one attempt; {@code null} keeps the listener's
 */
public record KindSettings(String kind, @Nullable Integer maxRunning, @Nullable Duration timeout) {

	public KindSettings {
		if (maxRunning != null && maxRunning < 0) {
			throw new InvalidQueueConfigurationException("pgqueue.kinds." + kind + ".max-running",
					"pgqueue.kinds." + kind + ".max-running must not be negative, was " + maxRunning,
					"Set it to 1 or more, or 0 for no limit.");
		}
		if (timeout != null && (timeout.isZero() || timeout.isNegative())) {
			throw new InvalidQueueConfigurationException("pgqueue.kinds." + kind + ".timeout",
					"pgqueue.kinds." + kind + ".timeout must be positive, was " + timeout,
					"Give a positive duration, or leave it out for the listener's or the queue's.");
		}
	}

}
