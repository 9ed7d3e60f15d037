package dev.pgqueue.engine.buckets;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.LongSupplier;

import dev.pgqueue.engine.job.ClaimStart;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.poll.ClaimScope;
import dev.pgqueue.engine.poll.PollSignals;
import dev.pgqueue.engine.service.EngineService;

/**
 * Bucket assignment's claim scope: claims read only the buckets the coordinator gave this instance
 * in the current generation, one bucket after the other, each claim starting one bucket further on
 * so that every bucket is served and the instance's concurrent claims start in different places.
 *
 * <p>Two rules make a hand-over safe. A new set of buckets replaces the old one only once no claim
 * that read the old one is still running (a write lock against the claims' read locks), so that
 * when the coordinator hands a bucket over, this instance has stopped claiming from it. And an
 * assignment is only good until this instance's membership could have expired: past that, claims
 * read nothing until the coordinator confirms the assignment again, because the leader may already
 * have given the buckets to others.
 */
public final class BucketScope implements ClaimScope {

	private static final Assignment NONE = new Assignment(new int[0], Long.MIN_VALUE);

	private final BucketCoordinator coordinator;

	private final LongSupplier nanoTime;

	private final ReentrantReadWriteLock claiming = new ReentrantReadWriteLock();

	private final AtomicInteger rotation = new AtomicInteger();

	private volatile Assignment assignment = NONE;

	public BucketScope(BucketCoordinator coordinator) {
		this(coordinator, System::nanoTime);
	}

	BucketScope(BucketCoordinator coordinator, LongSupplier nanoTime) {
		this.coordinator = coordinator;
		this.nanoTime = nanoTime;
	}

	@Override
	public List<ClaimedJob> claim(Function<ClaimStart, List<ClaimedJob>> claim) {
		this.claiming.readLock().lock();
		try {
			Assignment current = this.assignment;
			int count = current.buckets().length;
			if (count == 0 || this.nanoTime.getAsLong() - current.validUntilNanos() > 0) {
				return List.of();
			}
			int first = Math.floorMod(this.rotation.getAndIncrement(), count);
			int[] order = new int[count];
			System.arraycopy(current.buckets(), first, order, 0, count - first);
			System.arraycopy(current.buckets(), 0, order, count - first, first);
			return claim.apply(ClaimStart.inBuckets(order));
		}
		finally {
			this.claiming.readLock().unlock();
		}
	}

	/**
	 * Replaces the buckets claims read; returns once no claim that read the previous ones is still
	 * running.
	 * @param buckets the buckets this instance owns and may claim from
	 * @param validUntilNanos until when (by {@link System#nanoTime()}) the assignment may be used
	 * @return whether buckets were added
	 */
	boolean assign(int[] buckets, long validUntilNanos) {
		int[] sorted = buckets.clone();
		Arrays.sort(sorted);
		this.claiming.writeLock().lock();
		try {
			int[] before = this.assignment.buckets();
			this.assignment = new Assignment(sorted, validUntilNanos);
			return Arrays.stream(sorted).anyMatch((bucket) -> Arrays.binarySearch(before, bucket) < 0);
		}
		finally {
			this.claiming.writeLock().unlock();
		}
	}

	/** The buckets claims read now (empty when the assignment has lapsed). */
	public int[] buckets() {
		Assignment current = this.assignment;
		return (this.nanoTime.getAsLong() - current.validUntilNanos() > 0) ? new int[0] : current.buckets().clone();
	}

	/** Returns the coordinator, which assigns this scope its buckets and wakes the poller when it gains some. */
	@Override
	public List<EngineService> prepare(PollSignals signals) {
		this.coordinator.serve(this, signals);
		return List.of(this.coordinator);
	}

	/** Claims read no bucket: the coordinator stopped, and its buckets may go to others. */
	void clear() {
		assign(new int[0], Long.MIN_VALUE);
	}

	public BucketCoordinator coordinator() {
		return this.coordinator;
	}

	private record Assignment(int[] buckets, long validUntilNanos) {
	}

}
