package dev.pgqueue.autoconfigure;

import java.time.Duration;

import dev.pgqueue.engine.settings.RateLimit;

/**
 * At most so many of a queue's jobs start in any window of one period, counted across every
 * instance by the database. A job that cannot start yet is not claimed: it stays first in line and
 * starts as soon as the window lets it. No limit by default.
 */
public class QueueRateLimitProperties {

	/**
	 * Most job starts in any window of one period. Leave out for no limit.
	 */
	private Integer starts;

	/**
	 * Length of the window; at least 50ms and at least the queue's poll-interval.
	 */
	private Duration period = Duration.ofSeconds(1);

	public Integer getStarts() {
		return this.starts;
	}

	public void setStarts(Integer starts) {
		this.starts = starts;
	}

	public Duration getPeriod() {
		return this.period;
	}

	public void setPeriod(Duration period) {
		this.period = period;
	}

	RateLimit toRateLimit(String queue, Duration pollInterval) {
		return (this.starts != null) ? RateLimit.of(queue, this.starts, this.period, pollInterval) : null;
	}

	RateLimit toRateLimit(String key, String queue, Duration pollInterval) {
		return (this.starts != null) ? RateLimit.of(key, queue, this.starts, this.period, pollInterval) : null;
	}

}
