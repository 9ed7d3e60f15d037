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
 * @param rateLimit at most so many jobs of the kind start per period across every instance;
 * {@code null} keeps the listener's. Checked against the queue's poll interval when its poller starts
 * @param rateWeight units of each rate limit one job of the kind uses; {@code null} keeps the listener's
 */
public record KindSettings(String kind, @Nullable Integer maxRunning, @Nullable Duration timeout,
		@Nullable RateLimit rateLimit, @Nullable Integer rateWeight) {

	/** Settings that leave the kind's rate limit and weight to its listener. */
	public KindSettings(String kind, @Nullable Integer maxRunning, @Nullable Duration timeout) {
		this(kind, maxRunning, timeout, null, null);
	}

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
		if (rateWeight != null && rateWeight < 1) {
			throw new InvalidQueueConfigurationException("pgqueue.kinds." + kind + ".rate-weight",
					"pgqueue.kinds." + kind + ".rate-weight must be at least 1, was " + rateWeight,
					"Set it to the units of each rate limit one job of the kind uses, or leave it out for 1.");
		}
	}

}
