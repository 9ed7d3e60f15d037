package dev.pgqueue.autoconfigure;

import java.time.Duration;

import dev.pgqueue.engine.settings.KindSettings;
import dev.pgqueue.engine.settings.RateLimit;

/** Settings of one kind of job. */
public class QueueKindProperties {

	/**
	 * Most jobs of this kind running at once across every instance; overrides
	 * @JobListener(maxRunning). 0 for no limit.
	 */
	private Integer maxRunning;

	/**
	 * How long one attempt of this kind may run; overrides @JobListener(timeout) and the queue's
	 * timeout.
	 */
	private Duration timeout;

	/**
	 * At most so many jobs of this kind start in any window of one period, across every instance;
	 * overrides @JobListener(rateLimit).
	 */
	private final QueueRateLimitProperties rateLimit = new QueueRateLimitProperties();

	/**
	 * Units of each rate limit one job of this kind uses when it starts (the queue's, the kind's and
	 * its key's); overrides @JobListener(rateWeight). At most the smallest of those limits' starts.
	 */
	private Integer rateWeight;

	public QueueRateLimitProperties getRateLimit() {
		return this.rateLimit;
	}

	public Integer getRateWeight() {
		return this.rateWeight;
	}

	public void setRateWeight(Integer rateWeight) {
		this.rateWeight = rateWeight;
	}

	/** The kind's settings; its rate limit's period is checked against its queue's poll interval later. */
	KindSettings toSettings(String kind) {
		RateLimit limit = (this.rateLimit.getStarts() != null) ? RateLimit.of("pgqueue.kinds." + kind + ".rate-limit",
				"of kind '" + kind + "'", this.rateLimit.getStarts(), this.rateLimit.getPeriod(), Duration.ZERO) : null;
		return new KindSettings(kind, this.maxRunning, this.timeout, limit, this.rateWeight);
	}

	public Integer getMaxRunning() {
		return this.maxRunning;
	}

	public void setMaxRunning(Integer maxRunning) {
		this.maxRunning = maxRunning;
	}

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

}
