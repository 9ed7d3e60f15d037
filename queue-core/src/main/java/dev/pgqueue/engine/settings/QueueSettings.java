package dev.pgqueue.engine.settings;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.QueueAssignment;
import dev.pgqueue.QueueMode;
import dev.pgqueue.RetryPolicy;
import org.jspecify.annotations.Nullable;

/**
 * Settings of one queue: a pool of workers with its own mode, concurrency, batch size and timings.
 *
 * <p>Validation errors name the setting as it is written in {@code application.yml}.
 *
 * @param name queue name
 * @param mode how jobs run relative to the claiming transaction
 * @param concurrency in transactional mode, batches run at once (each holds a connection); in
 * leased mode, jobs run at once
 * @param batchSize most jobs claimed by one statement; in transactional mode, where a batch starts
 * and the least it shrinks to when its size adapts
 * @param maxBatchSize transactional mode: the most jobs a batch grows to while claims come back full
 * and batches stay short ({@code AdaptiveBatchSize}); leased mode with claim-ahead: the most jobs one
 * claim takes while workers start jobs faster than claims return ({@code ClaimAheadEstimate}); equal
 * to {@code batchSize} for a fixed size. Queues with two-phase commit, leased queues without
 * claim-ahead and queues with a {@code batchSize} of 1 do not adapt
 * @param pollInterval pause between polls that found less than a full batch (jittered ±10 %)
 * @param leaseDuration how long a leased job may run without its lease being extended
 * @param maxAttempts attempts a job gets when its request does not say
 * @param retry backoff between attempts
 * @param nonRetryable exception types that fail a job at once, besides
 * {@link NonRetryableJobException}
 * @param claimAhead leased mode: whether the poller may claim a few jobs beyond its free workers
 * while jobs are short, so that a worker that finishes starts the next job without waiting for a
 * claim (see {@code LeasedClaims})
 * @param runAtJitter default spread of a job's {@code run_at}: each job of the queue whose request
 * gives no jitter of its own runs at a random instant in {@code [run_at, run_at + runAtJitter)};
 * zero for none
 * @param assignment how the instances that poll the queue divide its jobs
 * @param buckets how many buckets the queue's jobs are spread over (used by
 * {@link QueueAssignment#BUCKETS}; every job gets one, so a queue can change its assignment without
 * touching its jobs)
 * @param sla how long after its {@code run_at} a job should have started; {@code null} for none.
 * Jobs that start later are counted, and the queue is reported degraded while that count grows
 * @param limits how many of the queue's jobs may run at once across every instance, in all and per
 * concurrency key
 * @param timeout how long one attempt of a job may run before it is interrupted and counted as
 * failed; {@code null} for no limit. A listener may set its own
 * @param twoPhaseCommit transactional mode: whether each job's transaction is prepared
 * ({@code PREPARE TRANSACTION}) before the listener's external step runs, and committed after it;
 * needs a batch size of 1, since a prepared transaction covers the whole batch
 * @param rateLimit at most so many of the queue's jobs start in any window of one period, across every
 * instance; {@code null} for none
 * @param perKeyRateLimit at most so many jobs of one concurrency key start in any window of one period,
 * across every instance; {@code null} for none
 * @param fairness whether claims share the queue's workers fairly across concurrency keys, round robin,
 * and each key's weight; {@code null} for the queue's plain order
 */
public record QueueSettings(String name, QueueMode mode, int concurrency, int batchSize, int maxBatchSize,
		Duration pollInterval,
		Duration leaseDuration, int maxAttempts, RetryPolicy retry, List<Class<? extends Throwable>> nonRetryable,
		boolean claimAhead, Duration runAtJitter, QueueAssignment assignment, int buckets, @Nullable Duration sla,
		ConcurrencyLimits limits, @Nullable Duration timeout, boolean twoPhaseCommit, @Nullable RateLimit rateLimit,
		@Nullable RateLimit perKeyRateLimit, @Nullable KeyFairness fairness) {

	public static final int DEFAULT_CONCURRENCY = 4;

	public static final int DEFAULT_BATCH_SIZE = 10;

	/** How large a transactional batch may grow while claims come back full and batches stay short. */
	public static final int DEFAULT_MAX_BATCH_SIZE = 500;

	public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);

	public static final Duration DEFAULT_LEASE_DURATION = Duration.ofMinutes(5);

	public static final int DEFAULT_MAX_ATTEMPTS = 10;

	public static final QueueMode DEFAULT_MODE = QueueMode.TRANSACTIONAL;

	public static final boolean DEFAULT_CLAIM_AHEAD = true;

	public static final Duration DEFAULT_RUN_AT_JITTER = Duration.ZERO;

	public static final QueueAssignment DEFAULT_ASSIGNMENT = QueueAssignment.SHARED;

	public static final int DEFAULT_BUCKETS = 64;

	/** Most buckets a queue may have: the bucket is a {@code smallint}. */
	public static final int MAX_BUCKETS = 32767;

	/** Shortest lease: a lease is extended every third of its duration. */
	public static final Duration MIN_LEASE_DURATION = Duration.ofSeconds(1);

	public QueueSettings {
		if (name == null || name.isBlank()) {
			throw new IllegalArgumentException("Queue name must not be blank");
		}
		String key = "pgqueue.queues." + name + ".";
		Objects.requireNonNull(mode, key + "mode must be set (transactional or leased)");
		Objects.requireNonNull(retry, key + "retry must be set");
		SettingRules.atLeastOne(key + "concurrency", concurrency);
		SettingRules.atLeastOne(key + "batch-size", batchSize);
		if (maxBatchSize < batchSize) {
			throw new InvalidQueueConfigurationException(key + "max-batch-size", key + "max-batch-size must be at "
					+ "least batch-size (" + batchSize + "), was " + maxBatchSize + ": a batch starts at batch-size and "
					+ "grows to max-batch-size while claims come back full", "Set " + key + "max-batch-size to "
							+ batchSize + " or more; equal to batch-size for a batch that never grows.");
		}
		SettingRules.atLeastOne(key + "max-attempts", maxAttempts);
		SettingRules.positive(key + "poll-interval", pollInterval);
		SettingRules.positive(key + "lease-duration", leaseDuration);
		if (leaseDuration.compareTo(MIN_LEASE_DURATION) < 0) {
			throw new InvalidQueueConfigurationException(key + "lease-duration", key + "lease-duration must be at "
					+ "least 1s, was " + leaseDuration + "; a lease is extended every third of its duration",
					"Set " + key + "lease-duration to 1s or more, comfortably above the database's worst pause.");
		}
		Objects.requireNonNull(assignment, key + "assignment must be set (shared or buckets)");
		SettingRules.notNegative(key + "run-at-jitter", runAtJitter);
		if (buckets < 1 || buckets > MAX_BUCKETS) {
			throw new InvalidQueueConfigurationException(key + "buckets", key + "buckets must be between 1 and "
					+ MAX_BUCKETS + ", was " + buckets, "Set " + key + "buckets to a number comfortably above the most "
					+ "instances that will poll the queue at once, such as 64 or 128.");
		}
		if (sla != null) {
			SettingRules.positive(key + "sla", sla);
		}
		Objects.requireNonNull(limits, key + "limits must be set (ConcurrencyLimits.NONE for none)");
		if (timeout != null) {
			SettingRules.positive(key + "timeout", timeout);
		}
		if (twoPhaseCommit && mode != QueueMode.TRANSACTIONAL) {
			throw new InvalidQueueConfigurationException(key + "two-phase-commit", key + "two-phase-commit needs "
					+ "mode transactional, but the queue is " + mode.name().toLowerCase(java.util.Locale.ROOT),
					"A leased job runs outside a transaction, so there is nothing to prepare: set " + key
							+ "mode to transactional, or turn two-phase-commit off.");
		}
		if (twoPhaseCommit && batchSize != 1) {
			throw new InvalidQueueConfigurationException(key + "batch-size", key + "batch-size must be 1 with "
					+ "two-phase-commit, was " + batchSize + ": one prepared transaction covers everything its "
					+ "transaction did, so the jobs of a batch, and their external effects, would commit or roll back "
					+ "together", "Leave " + key + "batch-size out (it defaults to 1 for queues with two-phase-commit) "
							+ "or set it to 1.");
		}
		if (rateLimit != null) {
			// Checked again against this queue's poll interval, naming its keys.
			RateLimit.of(name, rateLimit.starts(), rateLimit.period(), pollInterval);
		}
		if (perKeyRateLimit != null) {
			RateLimit.of(key + "per-key-rate-limit", name, perKeyRateLimit.starts(), perKeyRateLimit.period(),
					pollInterval);
		}
		if (fairness != null) {
			KeyFairness.of(name, fairness.weights());
			if (limits.orderedByKey() || limits.perKey() > 0) {
				String limit = limits.orderedByKey() ? "ordered-by-key" : "per-key-concurrency";
				throw new InvalidQueueConfigurationException(key + "fair-by-key", key + "fair-by-key cannot be combined "
						+ "with " + key + limit + ": that limit's claims read the queue in its plain order",
						"A limit per key already keeps one key from taking every worker: keep " + key + limit
								+ " and turn fair-by-key off, or the other way round.");
			}
			if (perKeyRateLimit != null) {
				throw new InvalidQueueConfigurationException(key + "fair-by-key", key + "fair-by-key cannot be combined "
						+ "with " + key + "per-key-rate-limit: that limit's claims choose their jobs in the queue's plain "
						+ "order", "Keep one of them: per-key-rate-limit already keeps one key from taking the others' "
								+ "starts.");
			}
		}
		nonRetryable = List.copyOf(nonRetryable);
	}

	/** Settings with every default, for a queue that has no configuration of its own. */
	public static QueueSettings defaults(String name) {
		return new QueueSettings(name, DEFAULT_MODE, DEFAULT_CONCURRENCY, DEFAULT_BATCH_SIZE, DEFAULT_MAX_BATCH_SIZE,
				DEFAULT_POLL_INTERVAL,
				DEFAULT_LEASE_DURATION, DEFAULT_MAX_ATTEMPTS, RetryPolicy.DEFAULT, List.of(), DEFAULT_CLAIM_AHEAD,
				DEFAULT_RUN_AT_JITTER, DEFAULT_ASSIGNMENT, DEFAULT_BUCKETS, null, ConcurrencyLimits.NONE, null, false, null, null, null);
	}

	/**
	 * A retry policy for the queue, from settings that may each be missing (then taken from
	 * {@code defaults}); a bad value is reported with its key under {@code pgqueue.queues.<queue>}.
	 */
	public static RetryPolicy retryPolicy(String queue, RetryPolicy defaults, @Nullable Duration initialDelay,
			@Nullable Duration maxDelay, @Nullable Double multiplier, @Nullable Double jitter) {
		try {
			return new RetryPolicy((initialDelay != null) ? initialDelay : defaults.initialDelay(),
					(maxDelay != null) ? maxDelay : defaults.maxDelay(),
					(multiplier != null) ? multiplier : defaults.multiplier(), (jitter != null) ? jitter : defaults.jitter());
		}
		catch (InvalidQueueConfigurationException ex) {
			throw ex.within("pgqueue.queues." + queue + ".");
		}
	}

	public QueueSettings withName(String name) {
		return new QueueSettings(name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withMode(QueueMode mode) {
		return new QueueSettings(this.name, mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withConcurrency(int concurrency) {
		return new QueueSettings(this.name, this.mode, concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withBatchSize(int batchSize) {
		return new QueueSettings(this.name, this.mode, this.concurrency, batchSize, Math.max(batchSize, this.maxBatchSize), this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	/** Transactional mode: the most jobs a batch grows to; {@link #batchSize()} for a fixed size. */
	public QueueSettings withMaxBatchSize(int maxBatchSize) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead, this.runAtJitter,
				this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	/**
	 * Whether the number of jobs the queue's claims take adapts between {@link #batchSize()} and
	 * {@link #maxBatchSize()}, for queues whose maximum is larger and whose {@code batch-size} is not 1:
	 * transactional queues without two-phase commit (their batches grow and shrink), and leased queues
	 * that claim ahead (a claim takes what their workers start during two claim round trips, up to the
	 * maximum).
	 */
	public boolean adaptsBatchSize() {
		if (this.batchSize <= 1 || this.maxBatchSize <= this.batchSize) {
			return false;
		}
		return (this.mode == QueueMode.TRANSACTIONAL) ? !this.twoPhaseCommit : this.claimAhead;
	}

	public QueueSettings withPollInterval(Duration pollInterval) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withLeaseDuration(Duration leaseDuration) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withMaxAttempts(int maxAttempts) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, maxAttempts, this.retry, this.nonRetryable, this.claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withRetry(RetryPolicy retry) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, retry, this.nonRetryable, this.claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withNonRetryable(List<Class<? extends Throwable>> nonRetryable) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, nonRetryable, this.claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withClaimAhead(boolean claimAhead) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withRunAtJitter(Duration runAtJitter) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead, runAtJitter,
				this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withAssignment(QueueAssignment assignment) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead, this.runAtJitter,
				assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withBuckets(int buckets) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead, this.runAtJitter,
				this.assignment, buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withSla(@Nullable Duration sla) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead, this.runAtJitter,
				this.assignment, this.buckets, sla, this.limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withLimits(ConcurrencyLimits limits) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead, this.runAtJitter,
				this.assignment, this.buckets, this.sla, limits, this.timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withTimeout(@Nullable Duration timeout) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead, this.runAtJitter,
				this.assignment, this.buckets, this.sla, this.limits, timeout, this.twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withTwoPhaseCommit(boolean twoPhaseCommit) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead, this.runAtJitter,
				this.assignment, this.buckets, this.sla, this.limits, this.timeout, twoPhaseCommit, this.rateLimit, this.perKeyRateLimit, this.fairness);
	}

	public QueueSettings withRateLimit(@Nullable RateLimit rateLimit) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead, this.runAtJitter,
				this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit, rateLimit, this.perKeyRateLimit, this.fairness);
	}

	/** These settings with workers shared fairly across concurrency keys ({@code null}: plain order). */
	public QueueSettings withFairness(@Nullable KeyFairness fairness) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize,
				this.pollInterval, this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit,
				this.rateLimit, this.perKeyRateLimit, fairness);
	}

	/** These settings with at most so many jobs of one concurrency key starting per period ({@code null}: none). */
	public QueueSettings withPerKeyRateLimit(@Nullable RateLimit perKeyRateLimit) {
		return new QueueSettings(this.name, this.mode, this.concurrency, this.batchSize, this.maxBatchSize,
				this.pollInterval, this.leaseDuration, this.maxAttempts, this.retry, this.nonRetryable, this.claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla, this.limits, this.timeout, this.twoPhaseCommit,
				this.rateLimit, perKeyRateLimit, this.fairness);
	}

}
