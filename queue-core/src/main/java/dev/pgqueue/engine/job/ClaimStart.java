package dev.pgqueue.engine.job;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * Where one claim reads the queue: the whole claim index from its start (a sweep), each priority
 * level from its floor on ({@code ClaimFloor}), or only the given buckets ({@code BucketScope}).
 *
 * @param priorities priority levels, highest first; empty unless reading from floors
 * @param runAts the floor of each level
 * @param buckets the buckets to read, in the order given; {@code null} for the whole queue
 */
public record ClaimStart(int[] priorities, Instant[] runAts, int @Nullable [] buckets) {

	/** The whole claim index from its start. */
	public static final ClaimStart SWEEP = new ClaimStart(new int[0], new Instant[0], null);

	/** Each priority level given from its floor on, in the order given (highest priority first). */
	public static ClaimStart fromFloors(int[] priorities, Instant[] runAts) {
		return new ClaimStart(priorities, runAts, null);
	}

	/** Only the given buckets, each from its start, in the order given. */
	public static ClaimStart inBuckets(int[] buckets) {
		return new ClaimStart(new int[0], new Instant[0], buckets);
	}

	public boolean isSweep() {
		return this.buckets == null && this.priorities.length == 0;
	}

	public boolean isBuckets() {
		return this.buckets != null;
	}

}
