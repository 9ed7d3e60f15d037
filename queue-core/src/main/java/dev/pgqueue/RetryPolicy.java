package dev.pgqueue;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with jitter between the attempts of a failing job.
 *
 * <p>The delay before attempt {@code n + 1} is {@code initialDelay * multiplier^(n - 1)}, capped at
 * {@code maxDelay}, then spread by up to {@code ±jitter} of itself so that jobs that failed
 * together do not all come back at the same instant.
 *
 * @param initialDelay delay after the first failed attempt
 * @param maxDelay longest delay between two attempts
 * @param multiplier growth of the delay per failed attempt
 * @param jitter fraction (0 to 1) of the delay by which it is randomly spread
 */
public record RetryPolicy(Duration initialDelay, Duration maxDelay, double multiplier, double jitter) {

	public static final RetryPolicy DEFAULT = new RetryPolicy(Duration.ofSeconds(1), Duration.ofHours(1), 2.0, 0.2);

	public RetryPolicy {
		if (initialDelay == null || initialDelay.isNegative()) {
			throw invalid("retry.initial-delay", "must not be negative, was " + initialDelay,
					"to a duration such as 1s");
		}
		if (maxDelay == null || maxDelay.compareTo(initialDelay) < 0) {
			throw invalid("retry.max-delay", "(" + maxDelay + ") must not be shorter than retry.initial-delay ("
					+ initialDelay + ")", "to the initial delay or more");
		}
		if (!(multiplier >= 1.0)) {
			throw invalid("retry.multiplier", "must be at least 1, was " + multiplier,
					"to 1 (a constant delay) or more");
		}
		if (!(jitter >= 0.0 && jitter <= 1.0)) {
			throw invalid("retry.jitter", "must be between 0 and 1, was " + jitter, "to a fraction such as 0.2");
		}
	}

	private static InvalidQueueConfigurationException invalid(String key, String problem, String fix) {
		return new InvalidQueueConfigurationException(key, key + " " + problem, "Set " + key + " " + fix + ".");
	}

	/** Delay after the given failed attempt (1 for the first). */
	public Duration delayAfter(int failedAttempt) {
		double base = this.initialDelay.toMillis() * Math.pow(this.multiplier, Math.max(0, failedAttempt - 1));
		double capped = Math.min(base, this.maxDelay.toMillis());
		double spread = (this.jitter == 0.0) ? 0.0
				: capped * this.jitter * (ThreadLocalRandom.current().nextDouble() * 2.0 - 1.0);
		return Duration.ofMillis(Math.max(0L, Math.round(capped + spread)));
	}

}
