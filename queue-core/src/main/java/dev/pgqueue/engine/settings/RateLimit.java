package dev.pgqueue.engine.settings;

import java.time.Duration;

import dev.pgqueue.InvalidQueueConfigurationException;
import org.jspecify.annotations.Nullable;

import org.springframework.format.datetime.standard.DurationFormatterUtils;

/**
 * At most {@code starts} job starts in any window of one {@code period}, across every instance
 * (see {@code dev.pgqueue.engine.limits.RateGate}).
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
		return of("pgqueue.queues." + queue + ".rate-limit", queue, starts, period, pollInterval);
	}

	/**
	 * Validates a rate limit, naming its settings as written in {@code application.yml}.
	 * @param key where the limit is configured, such as {@code pgqueue.queues.<queue>.per-key-rate-limit}
	 * or {@code pgqueue.kinds.<kind>.rate-limit}
	 * @param queue the queue whose jobs the limit applies to
	 * @param starts the most starts in one period
	 * @param period the period
	 * @param pollInterval the queue's poll interval, which the period must not be shorter than
	 * @throws InvalidQueueConfigurationException when a value cannot make a limit
	 */
	public static RateLimit of(String key, String queue, int starts, Duration period, Duration pollInterval) {
		String prefix = key + ".";
		if (starts < 1) {
			throw new InvalidQueueConfigurationException(prefix + "starts", prefix + "starts must be at least 1, was "
					+ starts + ": a limit that lets nothing start would stop its jobs", "Set " + prefix + "starts to "
							+ "the most jobs that may start in one period, or leave " + key + " out for no limit; pause "
							+ "the queue to stop it.");
		}
		if (period == null || period.compareTo(MIN_PERIOD) < 0) {
			throw new InvalidQueueConfigurationException(prefix + "period", prefix + "period must be at least "
					+ MIN_PERIOD.toMillis() + "ms, was " + period, "Set " + prefix + "period to 50ms or more, such as "
							+ "1s or 1m; for a finer rate, scale starts and period together.");
		}
		if (period.compareTo(pollInterval) < 0) {
			throw new InvalidQueueConfigurationException(prefix + "period", prefix + "period (" + period + ") is "
					+ "shorter than the poll-interval of queue '" + queue + "' (" + pollInterval + "): a poller that found "
					+ "nothing to start would sleep through whole periods", "Raise " + prefix + "period (scaling starts "
							+ "with it), or lower pgqueue.queues." + queue + ".poll-interval to " + period + " or less.");
		}
		return new RateLimit(starts, period);
	}

	/**
	 * Reads a limit written as {@code "<starts>/<period>"}, such as {@code "100/1m"} or {@code "5/PT1S"}
	 * ({@code @JobListener(rateLimit = ...)}); the period is read as Spring reads durations.
	 * @return the limit, not yet checked against a queue's poll interval; {@code null} for empty text
	 * @throws IllegalArgumentException when the text is not of that form
	 */
	public static @Nullable RateLimit parse(String text) {
		String trimmed = text.strip();
		if (trimmed.isEmpty()) {
			return null;
		}
		int slash = trimmed.indexOf('/');
		if (slash <= 0 || slash == trimmed.length() - 1) {
			throw new IllegalArgumentException("'" + text + "' is not <starts>/<period>, such as 100/1m");
		}
		int starts;
		try {
			starts = Integer.parseInt(trimmed.substring(0, slash).strip());
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("'" + text + "' does not start with a whole number of starts", ex);
		}
		Duration period = DurationFormatterUtils.detectAndParse(trimmed.substring(slash + 1).strip());
		if (starts < 1 || period.compareTo(MIN_PERIOD) < 0) {
			throw new IllegalArgumentException("'" + text + "' needs at least 1 start and a period of at least "
					+ MIN_PERIOD.toMillis() + "ms");
		}
		return new RateLimit(starts, period);
	}

	/**
	 * How long this limit may hold claims without a break before health warns that jobs arrive faster
	 * than it lets them start: two periods, and at least a minute.
	 */
	public Duration holdingBackAfter() {
		Duration twoPeriods = this.period.multipliedBy(2);
		return (twoPeriods.compareTo(Duration.ofMinutes(1)) > 0) ? twoPeriods : Duration.ofMinutes(1);
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
