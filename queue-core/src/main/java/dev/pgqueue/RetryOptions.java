package dev.pgqueue;

import java.time.Duration;
import java.util.Objects;

/**
 * How {@link JobAdmin#retryAll(JobQuery, RetryOptions)} retries the failed jobs a query matches: only
 * those that failed long enough ago, how many per statement, and how many at most.
 *
 * <pre>{@code
 * // Once an outage is over: the payment jobs that failed more than ten minutes ago, 200 per
 * // statement, no more than 5,000 this time.
 * admin.retryAll(JobQuery.all().kind("payment.capture"),
 *         RetryOptions.defaults().failedFor(Duration.ofMinutes(10)).batchSize(200).atMost(5_000));
 * }</pre>
 *
 * @param failedFor only jobs that failed at least this long ago, by the database's clock;
 * {@link Duration#ZERO} for every failed job
 * @param batchSize jobs retried per statement, 1 to {@value #MAX_BATCH_SIZE}; each statement commits
 * on its own, so a smaller batch holds fewer row locks for less time, and pollers start on the first
 * batch while the next is retried
 * @param atMost most jobs retried by the call, at least 1; {@link Integer#MAX_VALUE} for no bound. A
 * bounded call may retry failed jobs of every queue (its query need not name one)
 */
public record RetryOptions(Duration failedFor, int batchSize, int atMost) {

	/** Most jobs one statement retries. */
	public static final int MAX_BATCH_SIZE = 10_000;

	/** Jobs retried per statement unless the options say otherwise. */
	public static final int DEFAULT_BATCH_SIZE = 1_000;

	private static final RetryOptions DEFAULTS = new RetryOptions(Duration.ZERO, DEFAULT_BATCH_SIZE,
			Integer.MAX_VALUE);

	public RetryOptions {
		Objects.requireNonNull(failedFor, "failedFor must not be null");
		if (failedFor.isNegative()) {
			throw new IllegalArgumentException("failedFor must be zero or positive, not " + failedFor);
		}
		JobRequest.requireStorable("failedFor", failedFor);
		if (batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
			throw new IllegalArgumentException(
					"batchSize must be 1 to " + MAX_BATCH_SIZE + " jobs per statement, not " + batchSize);
		}
		if (atMost < 1) {
			throw new IllegalArgumentException("atMost must be at least 1 job, not " + atMost);
		}
	}

	/** Every matching failed job, {@value #DEFAULT_BATCH_SIZE} per statement. */
	public static RetryOptions defaults() {
		return DEFAULTS;
	}

	/** These options, for jobs that failed at least {@code age} ago. */
	public RetryOptions failedFor(Duration age) {
		return new RetryOptions(age, this.batchSize, this.atMost);
	}

	/** These options, retrying {@code size} jobs per statement. */
	public RetryOptions batchSize(int size) {
		return new RetryOptions(this.failedFor, size, this.atMost);
	}

	/** These options, retrying {@code count} jobs at most. */
	public RetryOptions atMost(int count) {
		return new RetryOptions(this.failedFor, this.batchSize, count);
	}

	/** Whether the call stops after {@link #atMost()} jobs. */
	public boolean bounded() {
		return this.atMost != Integer.MAX_VALUE;
	}

}
