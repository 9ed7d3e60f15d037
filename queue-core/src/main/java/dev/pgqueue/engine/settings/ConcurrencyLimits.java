package dev.pgqueue.engine.settings;

import dev.pgqueue.InvalidQueueConfigurationException;

/**
 * How many of a queue's jobs may run at once across every instance: in all, and per concurrency
 * key. Limits per kind come from the kinds' listeners ({@code @JobListener(maxRunning = ...)}).
 *
 * @param perKey most jobs with the same concurrency key running at once; 0 for no limit
 * @param orderedByKey whether a key's jobs start in enqueue order, each after the previous one
 * finished (implies a per-key limit of one)
 * @param maxRunning most jobs of the queue running at once; 0 for no limit
 */
public record ConcurrencyLimits(int perKey, boolean orderedByKey, int maxRunning) {

	/** No limit beyond the queue's own concurrency on each instance. */
	public static final ConcurrencyLimits NONE = new ConcurrencyLimits(0, false, 0);

	/**
	 * Validates the limits of a queue, naming its settings as written in {@code application.yml}.
	 * @throws InvalidQueueConfigurationException when a limit is negative or the order asks for more
	 * than one job of a key at once
	 */
	public static ConcurrencyLimits of(String queue, int perKey, boolean orderedByKey, int maxRunning) {
		String key = "pgqueue.queues." + queue + ".";
		if (perKey < 0) {
			throw new InvalidQueueConfigurationException(key + "per-key-concurrency", key + "per-key-concurrency "
					+ "must not be negative, was " + perKey, "Set it to 1 or more, or leave it out for no limit.");
		}
		if (maxRunning < 0) {
			throw new InvalidQueueConfigurationException(key + "max-running", key + "max-running must not be "
					+ "negative, was " + maxRunning, "Set it to 1 or more, or leave it out for no limit.");
		}
		if (orderedByKey && perKey > 1) {
			throw new InvalidQueueConfigurationException(key + "per-key-concurrency", key + "ordered-by-key runs one "
					+ "job of a key at a time, but " + key + "per-key-concurrency is " + perKey,
					"Leave " + key + "per-key-concurrency out (or set it to 1), or turn ordered-by-key off.");
		}
		return new ConcurrencyLimits(orderedByKey ? 1 : perKey, orderedByKey, maxRunning);
	}

	/** Whether claims must look at concurrency keys or counts at all. */
	public boolean isNone() {
		return this.perKey == 0 && !this.orderedByKey && this.maxRunning == 0;
	}

}
