package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The durations of a queue's most recent claims, for their 99th percentile: the last
 * {@link #CAPACITY} claims, of which those that ended within {@link #MAX_AGE} count.
 *
 * <p>Recording runs once per claim, on every claiming thread at once: it takes a slot in a ring with
 * one atomic increment and writes two longs, without locking or allocating. A reading copies what
 * the ring holds and sorts it, so it costs what a sort of a few thousand longs costs; it runs when
 * the stats reader or a health check asks. A reading that races a recording may pair a slot's new
 * duration with its old end time, which moves a percentile by at most one sample.
 */
final class PollCycleWindow {

	/** Claims kept: a few seconds of a busy queue, many minutes of a quiet one. */
	static final int CAPACITY = 2048;

	/** Oldest claim that still counts, so that a quiet queue's figure does not show the past. */
	static final Duration MAX_AGE = Duration.ofMinutes(1);

	private static final int MASK = CAPACITY - 1;

	private final AtomicLong recorded = new AtomicLong();

	private final AtomicLongArray durations = new AtomicLongArray(CAPACITY);

	private final AtomicLongArray endedAt = new AtomicLongArray(CAPACITY);

	/**
	 * Records one claim.
	 * @param endedAtNanos when it ended, on {@link System#nanoTime()}
	 * @param durationNanos how long it took
	 */
	void record(long endedAtNanos, long durationNanos) {
		int slot = (int) (this.recorded.getAndIncrement() & MASK);
		this.durations.set(slot, durationNanos);
		this.endedAt.set(slot, endedAtNanos);
	}

	/**
	 * The 99th percentile of the claims that ended within {@link #MAX_AGE} before {@code nowNanos}
	 * (the smallest duration that at least 99 % of them did not exceed); zero when there were none.
	 */
	Duration p99(long nowNanos) {
		int filled = (int) Math.min(this.recorded.get(), CAPACITY);
		long maxAge = MAX_AGE.toNanos();
		long[] recent = new long[filled];
		int count = 0;
		for (int slot = 0; slot < filled; slot++) {
			long age = nowNanos - this.endedAt.get(slot);
			if (age >= 0 && age <= maxAge) {
				recent[count++] = this.durations.get(slot);
			}
		}
		if (count == 0) {
			return Duration.ZERO;
		}
		Arrays.sort(recent, 0, count);
		int rank = (int) Math.ceil(count * 0.99);
		return Duration.ofNanos(recent[rank - 1]);
	}

}
