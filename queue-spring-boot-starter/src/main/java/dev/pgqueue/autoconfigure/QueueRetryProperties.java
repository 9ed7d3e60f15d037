package dev.pgqueue.autoconfigure;

import java.time.Duration;

import dev.pgqueue.RetryPolicy;

/**
 * Backoff between attempts. A key left out comes from the application's RetryPolicy bean, if it
 * defines one, else from the defaults: initial-delay 1s, max-delay 1h, multiplier 2, jitter 0.2.
 */
public class QueueRetryProperties {

	/**
	 * Delay after the first failed attempt.
	 */
	private Duration initialDelay;

	/**
	 * Longest delay between two attempts.
	 */
	private Duration maxDelay;

	/**
	 * Factor by which the delay grows after each failed attempt.
	 */
	private Double multiplier;

	/**
	 * Fraction (0 to 1) of each delay by which it is randomly spread, so that jobs that failed
	 * together do not come back together.
	 */
	private Double jitter;

	public Duration getInitialDelay() {
		return this.initialDelay;
	}

	public void setInitialDelay(Duration initialDelay) {
		this.initialDelay = initialDelay;
	}

	public Duration getMaxDelay() {
		return this.maxDelay;
	}

	public void setMaxDelay(Duration maxDelay) {
		this.maxDelay = maxDelay;
	}

	public Double getMultiplier() {
		return this.multiplier;
	}

	public void setMultiplier(Double multiplier) {
		this.multiplier = multiplier;
	}

	public Double getJitter() {
		return this.jitter;
	}

	public void setJitter(Double jitter) {
		this.jitter = jitter;
	}

}
