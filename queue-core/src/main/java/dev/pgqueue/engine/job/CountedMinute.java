package dev.pgqueue.engine.job;

/**
 * What one queue counted in one minute on one instance ({@code QueueHistoryRecorder}), or, once
 * merged, what is still to be written. Durations in nanoseconds; {@code waits} and {@code runs} count the measurements their
 * sums add up.
 * @param minute minutes since the epoch
 */
public record CountedMinute(String queue, long minute, long completed, long failed, long retried, long waits,
		long waitNanosSum, long waitNanosMax, long runs, long runNanosSum, long runNanosMax) {

	/** Both counts together: sums added, maxima the larger. */
	public CountedMinute plus(CountedMinute other) {
		return new CountedMinute(this.queue, this.minute, this.completed + other.completed,
				this.failed + other.failed, this.retried + other.retried, this.waits + other.waits,
				this.waitNanosSum + other.waitNanosSum, Math.max(this.waitNanosMax, other.waitNanosMax),
				this.runs + other.runs, this.runNanosSum + other.runNanosSum,
				Math.max(this.runNanosMax, other.runNanosMax));
	}

}
