package dev.pgqueue.engine.settings;

import java.time.Duration;

import dev.pgqueue.InvalidQueueConfigurationException;

/**
 * At most {@code starts} job starts in any window of one {@code period}, across every instance
 * (see {@code dev.pgqueue.engine.poll.RateGate}).
 *
 * @param starts the most starts in one period
 * @param period the window's length
 */
public record RateLimit(int starts, Duration period) {

	/** Shortest period: the window is cut into 50 sub-windows of at least a millisecond. */
	public static final Duration MIN_PERIOD = Duration.ofMillis(50);

	/**
	 * Validates a queue's rate limit, naming its settings as written in {@code application.yml}.
	 * @param queue the queue
	 * @param starts {@code pgqueue.queues.<queue>.rate-limit.starts}
	 * @param period {@code pgqueue.queues.<queue>.rate-limit.period}
	 * @param pollInterval the queue's poll interval, which the period must not be shorter than
	 * @throws InvalidQueueConfigurationException when a value cannot make a limit
	 */
	public static RateLimit of(String queue, int starts, Duration period, Duration pollInterval) {
		String key = "pgqueue.queues." + queue + ".rate-limit.";
		if (starts < 1) {
			throw new InvalidQueueConfigurationException(key + "starts", key + "starts must be at least 1, was "
					+ starts + ": a limit that lets nothing start would stop the queue", "Set " + key + "starts to the "
							+ "most jobs that may start in one period, or leave rate-limit out for no limit; pause the "
							+ "queue to stop it.");
		}
		if (period == null || period.compareTo(MIN_PERIOD) < 0) {
			throw new InvalidQueueConfigurationException(key + "period", key + "period must be at least "
					+ MIN_PERIOD.toMillis() + "ms, was " + period, "Set " + key + "period to 50ms or more, such as 1s "
							+ "or 1m; for a finer rate, scale starts and period together.");
		}
		if (period.compareTo(pollInterval) < 0) {
			throw new InvalidQueueConfigurationException(key + "period", key + "period (" + period + ") is shorter "
					+ "than the queue's poll-interval (" + pollInterval + "): a poller that found nothing to start "
					+ "would sleep through whole periods", "Raise " + key + "period (scaling starts with it), or lower "
							+ "pgqueue.queues." + queue + ".poll-interval to " + period + " or less.");
		}
		return new RateLimit(starts, period);
	}

	/** The period in microseconds, as the database counts it. */
	public long periodMicros() {
		return this.period.toNanos() / 1000;
	}

	@Override
	public String toString() {
		return this.starts + " per " + this.period;
	}

}
