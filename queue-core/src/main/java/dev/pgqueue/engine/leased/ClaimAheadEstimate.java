package dev.pgqueue.engine.leased;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many jobs a leased poller holds claimed ahead of its free workers: about what its workers
 * start during two claim round trips plus a little slack, from the start rate observed between
 * claims (smoothed), never more than one claim may take. Short jobs get up to a full claim ahead; jobs
 * that take seconds none at all.
 *
 * <p>Workers count the jobs they start; the poll thread updates the estimate after each of its
 * claims; anyone may read the target.
 */
final class ClaimAheadEstimate {

	/** Added to two claim round trips: covers the hand-off to a worker and scheduling. */
	static final long SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

	private final int mostClaimed;

	private final AtomicLong started = new AtomicLong();

	private long lastClaimStart;

	private long startedAtLastClaim;

	private double startsPerNano;

	private double claimNanos;

	private volatile int target;

	/**
	 * @param mostClaimed most jobs one claim takes ({@code max-batch-size} where leased claims adapt,
	 * else {@code batch-size}), and so the largest target
	 */
	public ClaimAheadEstimate(int mostClaimed) {
		this.mostClaimed = mostClaimed;
	}

	/** A worker started a job. */
	public void jobStarted() {
		this.started.incrementAndGet();
	}

	/**
	 * The poll thread made a claim: updates the start rate since its previous claim and the claim's
	 * round trip, both smoothed, and from them the target.
	 * @param claimStart {@link System#nanoTime()} when the claim was sent
	 * @param claimTook how long it took, in nanoseconds
	 */
	public void claimed(long claimStart, long claimTook) {
		long startedNow = this.started.get();
		long elapsed = claimStart - this.lastClaimStart;
		if (this.lastClaimStart != 0 && elapsed > 0) {
			double rate = (double) (startedNow - this.startedAtLastClaim) / elapsed;
			this.startsPerNano = 0.5 * this.startsPerNano + 0.5 * rate;
		}
		this.lastClaimStart = claimStart;
		this.startedAtLastClaim = startedNow;
		this.claimNanos = (this.claimNanos == 0) ? claimTook : 0.8 * this.claimNanos + 0.2 * claimTook;
		double horizon = 2 * this.claimNanos + SLACK_NANOS;
		this.target = (int) Math.min(this.mostClaimed, Math.round(this.startsPerNano * horizon));
	}

	/** Jobs to hold claimed ahead, as last estimated. */
	public int target() {
		return this.target;
	}

}
