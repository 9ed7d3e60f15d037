package dev.pgqueue.engine.status;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.metrics.QueueStats;
import org.jspecify.annotations.Nullable;

/**
 * One queue on one database.
 * @param paused whether an operator paused it
 * @param stats its jobs as last counted (depth, scheduled, running, the oldest available's age);
 * {@code null} before the first reading, or where jobs do not run
 * @param poller its poller here; {@code null} where no listener of it runs
 * @param claims what its claims recorded here; {@code null} where it is not polled
 */
public record QueueStatus(String name, boolean paused, @Nullable QueueStats stats, @Nullable PollerStatus poller,
		@Nullable ClaimSignals claims) {

	/**
	 * The queue's poller here.
	 * @param settings the queue's settings as it runs them
	 * @param kinds the kinds it claims
	 * @param busyWorkers batches (transactional) or jobs (leased) running now
	 * @param buckets its share of the queue's buckets, when it takes them by bucket
	 * @param rate the queue's rate limit and its use; {@code null} without one
	 * @param kindRates each of its kinds' rate limits and their use
	 * @param keysHeld the keys the per-key rate limit holds back now
	 */
	public record PollerStatus(QueueSettings settings, List<String> kinds, boolean running, int busyWorkers,
			@Nullable BucketShare buckets, @Nullable RateUse rate, Map<String, RateUse> kindRates, int keysHeld) {
	}

	/**
	 * @param held the buckets this instance claims from
	 * @param ofQueue the buckets the queue's jobs are spread over
	 * @param leadsCoordinator whether this instance hands the buckets out
	 */
	public record BucketShare(int held, int ofQueue, boolean leadsCoordinator) {
	}

	/**
	 * A rate limit and its use in its current period.
	 * @param used units its current period granted
	 * @param heldFor how long it has held claims back without a break
	 */
	public record RateUse(RateLimit limit, int used, Duration heldFor) {
	}

	/**
	 * @param pollCycleP99 the 99th percentile of its recent claims' durations
	 * @param jobsClaimed jobs its claims took in the recent window
	 * @param unproductiveClaims claims that stepped over due jobs held by others and took fewer than asked
	 * @param sla the longest a due job should wait, {@code null} without one
	 * @param slaSlipping whether claims came later than the SLA within the last two stats intervals
	 * @param slaMissed jobs claimed later than the SLA
	 */
	public record ClaimSignals(Duration pollCycleP99, long jobsClaimed, long unproductiveClaims, @Nullable Duration sla,
			boolean slaSlipping, long slaMissed) {
	}

}
