package dev.pgqueue.engine.job;

import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Where one claim reads the queue: the whole claim index from its start (a sweep), ranges of each
 * priority level from its floor on ({@code ClaimFloor}), or only the given buckets
 * ({@code BucketScope}).
 *
 * <p>Reading from floors, a claim reads ranges of the index in the order given, each range of one
 * priority level from a key ({@code run_at}, {@code id}) on, up to a {@code run_at} or to the end
 * of the level.
 *
 * @param priorities each range's priority level, highest first; empty unless reading from floors
 * @param fromRunAts the {@code run_at} each range starts at
 * @param fromIds the {@code id} each range starts at, within its first {@code run_at}
 * @param untilRunAts the {@code run_at} each range stops before; {@code null} for the end of the level
 * @param buckets the buckets to read, in the order given; {@code null} for the whole queue
 * @param startedAt the start instant a rate limit granted the claim, which its jobs record; {@code null}
 * for the claim's own {@code now()}
 * @param chosen the only jobs the claim may take, chosen by the rate limits that depend on the job
 * (in claim order); {@code null} to read the queue
 */
public record ClaimStart(int[] priorities, Instant[] fromRunAts, long[] fromIds, @Nullable Instant[] untilRunAts,
		int @Nullable [] buckets, @Nullable Instant startedAt, @Nullable List<Long> chosen) {

	/** The whole claim index from its start. */
	public static final ClaimStart SWEEP = new ClaimStart(new int[0], new Instant[0], new long[0], new Instant[0], null, null, null);

	/** The given ranges of priority levels, in the order given (highest priority first). */
	public static ClaimStart fromFloors(int[] priorities, Instant[] fromRunAts, long[] fromIds,
			@Nullable Instant[] untilRunAts) {
		return new ClaimStart(priorities, fromRunAts, fromIds, untilRunAts, null, null, null);
	}

	/** Only the given buckets, each from its start, in the order given. */
	public static ClaimStart inBuckets(int[] buckets) {
		return new ClaimStart(new int[0], new Instant[0], new long[0], new Instant[0], buckets, null, null);
	}

	/**
	 * The same start, with the instant a rate limit granted the claim's starts and the jobs it chose
	 * ({@code null}: the claim reads the queue itself).
	 */
	public ClaimStart granted(@Nullable Instant startedAt, @Nullable List<Long> chosen) {
		return new ClaimStart(this.priorities, this.fromRunAts, this.fromIds, this.untilRunAts, this.buckets, startedAt,
				chosen);
	}

	/** Whether the claim may take only the jobs a rate limit chose. */
	public boolean isChosen() {
		return this.chosen != null;
	}

	public boolean isSweep() {
		return this.buckets == null && this.priorities.length == 0;
	}

	public boolean isBuckets() {
		return this.buckets != null;
	}

}
