package dev.pgqueue.engine.limits;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.sql.LimitRepository;
import dev.pgqueue.engine.job.ClaimStart;
import dev.pgqueue.engine.job.ClaimedJob;

/**
 * The claim statements of one queue: plain ones that rely on row locks alone, those of
 * {@code limits.LimitedClaims}, which also respect the queue's concurrency limits, or those of one
 * chosen job ({@link #one}). The claim strategies (one per mode) call them through their
 * {@link ClaimScope}.
 */
public interface JobClaims {

	/**
	 * Locks up to {@code limit} due jobs for the caller's transaction (transactional mode); they stay
	 * available until the caller records their outcomes.
	 */
	List<ClaimedJob> lock(String[] kinds, int limit, ClaimStart start);

	/** Claims up to {@code limit} due jobs as running under a lease held by {@code owner} (leased mode). */
	List<ClaimedJob> lease(String[] kinds, int limit, String owner, Duration lease, ClaimStart start);

	/**
	 * Whether claims respect concurrency limits: a claim may then come back short while jobs wait,
	 * for lack of slots, and a finished batch frees slots its poller can use at once.
	 */
	default boolean limited() {
		return false;
	}

	/**
	 * Whether the last claim on this thread stopped short while more jobs were there to take (at its
	 * batch's share of a limit, or between rounds of fair claims): another claim should follow at once
	 * rather than after the poll interval.
	 */
	default boolean stoppedAtShare() {
		return false;
	}

	/**
	 * Claims limited by row locks alone: one statement each. A claim whose jobs a rate limit chose
	 * ({@link ClaimStart#isChosen()}) takes those that are still available and not locked elsewhere.
	 */
	static JobClaims plain(JobRepository repository, LimitRepository chosen, String queue) {
		return new JobClaims() {

			@Override
			public List<ClaimedJob> lock(String[] kinds, int limit, ClaimStart start) {
				List<Long> ids = start.chosen();
				if (ids != null) {
					return ids.isEmpty() ? List.of() : chosen.lockChosen(ids);
				}
				return repository.claimLocked(queue, kinds, limit, start);
			}

			@Override
			public List<ClaimedJob> lease(String[] kinds, int limit, String owner, Duration lease, ClaimStart start) {
				List<Long> ids = start.chosen();
				if (ids != null) {
					return ids.isEmpty() ? List.of() : chosen.leaseChosen(ids, owner, lease, start.startedAt());
				}
				return repository.claimLeased(queue, kinds, limit, owner, lease, start);
			}

		};
	}

	/**
	 * Claims of one job by its public id, due or scheduled for later, made once: the first claim takes
	 * it if no other transaction holds it, every later one takes nothing, so that a job whose attempt
	 * failed is not taken again by the same run. Concurrency limits are not consulted: the caller
	 * chose this job.
	 */
	public static JobClaims one(JobRepository repository, UUID publicId) {
		AtomicBoolean claimed = new AtomicBoolean();
		return new JobClaims() {

			@Override
			public List<ClaimedJob> lock(String[] kinds, int limit, ClaimStart start) {
				return claimed.getAndSet(true) ? List.of() : repository.claimLockedById(publicId, kinds);
			}

			@Override
			public List<ClaimedJob> lease(String[] kinds, int limit, String owner, Duration lease, ClaimStart start) {
				return claimed.getAndSet(true) ? List.of() : repository.claimLeasedById(publicId, kinds, owner, lease);
			}

		};
	}

}
