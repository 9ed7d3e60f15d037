package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.QueueAssignment;
import dev.pgqueue.QueueMode;
import dev.pgqueue.RetryPolicy;
import dev.pgqueue.engine.settings.ConcurrencyLimits;
import dev.pgqueue.engine.settings.KeyFairness;
import dev.pgqueue.engine.settings.QueueSettings;

/** Settings of one queue, under {@code pgqueue.queues.<name>}. */
public class QueueSettingsProperties {

	/**
	 * How jobs run: 'transactional' (claim, run and finish in one transaction; database effects
	 * exactly once) or 'leased' (claim with a lease, run outside a transaction; at least once).
	 */
	private QueueMode mode = QueueSettings.DEFAULT_MODE;

	/**
	 * Workers of this queue in each instance. In transactional mode, batches run at once, each
	 * holding a pooled connection for as long as it runs; in leased mode, jobs run at once.
	 */
	private int concurrency = QueueSettings.DEFAULT_CONCURRENCY;

	/**
	 * Most jobs one claim statement takes where claims do not adapt. Defaults to 10, and to 1 for a
	 * queue with two-phase-commit, which accepts no other value. In transactional mode, where a
	 * batch starts and the least it shrinks to when its size adapts (max-batch-size).
	 */
	private Integer batchSize;

	/**
	 * Transactional mode: the most jobs a batch grows to while claims come back full and batches
	 * run shorter than 200 ms. Leased mode with claim-ahead: the most jobs one claim takes while
	 * workers start jobs faster than claims come back. Defaults to 500 (or batch-size, when
	 * larger); set it to batch-size for claims that never grow. Queues with two-phase-commit,
	 * leased queues without claim-ahead and queues with a batch-size of 1 do not adapt.
	 */
	private Integer maxBatchSize;

	/**
	 * Pause after a poll that found less than a full batch, spread by ±10 %.
	 */
	private Duration pollInterval = QueueSettings.DEFAULT_POLL_INTERVAL;

	/**
	 * Leased mode: how long a job may run without its lease being extended. Leases of running
	 * jobs are extended every third of this; a job whose lease expires is rescued.
	 */
	private Duration leaseDuration = QueueSettings.DEFAULT_LEASE_DURATION;

	/**
	 * Attempts a job gets unless its request says otherwise.
	 */
	private int maxAttempts = QueueSettings.DEFAULT_MAX_ATTEMPTS;

	/**
	 * Leased mode: whether the poller may claim a few jobs beyond its free workers while jobs
	 * are short (about what the workers start during two claim round trips, at most batch-size),
	 * so that a worker that finishes starts the next job at once. Jobs claimed ahead keep their
	 * lease extended and go back to the queue if they wait more than a second. While there is a
	 * backlog, up to 4 workers that find nothing claimed ahead also claim for themselves. Turn it
	 * off to never hold a job that no worker is running.
	 */
	private boolean claimAhead = QueueSettings.DEFAULT_CLAIM_AHEAD;

	/**
	 * Exception types that fail a job at once, without retries, besides
	 * NonRetryableJobException and payload mapping errors.
	 */
	private List<Class<? extends Throwable>> nonRetryableExceptions = new ArrayList<>();

	/**
	 * Spread of the run-at of each job enqueued without a jitter of its own: the job runs at a
	 * random instant in [run-at, run-at + jitter), on the database clock. Spreads jobs that fall
	 * due at the same instant, so that pollers do not all scan the same rows; spends part of the
	 * SLA to do it. Zero for none.
	 */
	private Duration runAtJitter = QueueSettings.DEFAULT_RUN_AT_JITTER;

	/**
	 * How the instances that poll this queue divide its jobs: 'shared' (every instance claims
	 * from the whole queue with SKIP LOCKED) or 'buckets' (a coordinator in PostgreSQL spreads
	 * the queue's buckets over the live instances; each claims only from its own).
	 */
	private QueueAssignment assignment = QueueSettings.DEFAULT_ASSIGNMENT;

	/**
	 * Number of buckets the queue's jobs are spread over, whatever the assignment; with
	 * 'buckets' assignment, comfortably more than the instances that will poll the queue.
	 */
	private int buckets = QueueSettings.DEFAULT_BUCKETS;

	/**
	 * How long after its run-at a job should have started. Jobs that start later are counted
	 * (pgqueue.jobs.sla.missed) and the queue is reported degraded while that count grows.
	 * None by default.
	 */
	private Duration sla;

	/**
	 * Most jobs with the same concurrency key (JobRequest.concurrencyKey) running at once across
	 * every instance. No limit by default.
	 */
	private int perKeyConcurrency;

	/**
	 * Whether the jobs of a concurrency key start in enqueue order, each after the previous one
	 * finished (a retry keeps its place); implies one job of a key at a time.
	 */
	private boolean orderedByKey;

	/**
	 * Most jobs of this queue running at once across every instance. No limit by default.
	 */
	private int maxRunning;

	/**
	 * How long one attempt may run before it is interrupted and counted as failed. A listener
	 * may set its own (@JobListener(timeout = ...)). No limit by default.
	 */
	private Duration timeout;

	/**
	 * Transactional mode: whether each job's transaction is prepared (PREPARE TRANSACTION)
	 * before the ExternalEffect its listener returns runs, and committed after it, so that the
	 * effect and the job's database work happen together, once. Runs one job per transaction
	 * and needs max_prepared_transactions above zero on the server and an InDoubtJobResolver
	 * bean.
	 */
	private boolean twoPhaseCommit;

	/**
	 * Whether the queue's workers are shared fairly across concurrency keys (tenants): claims take
	 * the keys with waiting jobs in turn, round robin, so that a key with many waiting jobs cannot
	 * starve one with few. Within a key, jobs start in the queue's order.
	 */
	private boolean fairByKey;

	/**
	 * With fair-by-key: the share of a key's turn, relative to keys not named here (which weigh
	 * 1). A key of weight 3 starts three jobs on its turn where others start one.
	 */
	private Map<String, Integer> keyWeights = new LinkedHashMap<>();

	private final QueueRetryProperties retry = new QueueRetryProperties();

	private final QueueRateLimitProperties rateLimit = new QueueRateLimitProperties();

	/**
	 * At most so many jobs of one concurrency key start in any window of one period, across every
	 * instance; each key has a window of its own. No limit by default.
	 */
	private final QueueRateLimitProperties perKeyRateLimit = new QueueRateLimitProperties();

	public QueueMode getMode() {
		return this.mode;
	}

	public void setMode(QueueMode mode) {
		this.mode = mode;
	}

	public int getConcurrency() {
		return this.concurrency;
	}

	public void setConcurrency(int concurrency) {
		this.concurrency = concurrency;
	}

	public Integer getBatchSize() {
		return this.batchSize;
	}

	public void setBatchSize(Integer batchSize) {
		this.batchSize = batchSize;
	}

	public Integer getMaxBatchSize() {
		return this.maxBatchSize;
	}

	public void setMaxBatchSize(Integer maxBatchSize) {
		this.maxBatchSize = maxBatchSize;
	}

	public Duration getPollInterval() {
		return this.pollInterval;
	}

	public void setPollInterval(Duration pollInterval) {
		this.pollInterval = pollInterval;
	}

	public Duration getLeaseDuration() {
		return this.leaseDuration;
	}

	public void setLeaseDuration(Duration leaseDuration) {
		this.leaseDuration = leaseDuration;
	}

	public int getMaxAttempts() {
		return this.maxAttempts;
	}

	public void setMaxAttempts(int maxAttempts) {
		this.maxAttempts = maxAttempts;
	}

	public boolean isClaimAhead() {
		return this.claimAhead;
	}

	public void setClaimAhead(boolean claimAhead) {
		this.claimAhead = claimAhead;
	}

	public List<Class<? extends Throwable>> getNonRetryableExceptions() {
		return this.nonRetryableExceptions;
	}

	public void setNonRetryableExceptions(List<Class<? extends Throwable>> nonRetryableExceptions) {
		this.nonRetryableExceptions = nonRetryableExceptions;
	}

	public Duration getRunAtJitter() {
		return this.runAtJitter;
	}

	public void setRunAtJitter(Duration runAtJitter) {
		this.runAtJitter = runAtJitter;
	}

	public QueueAssignment getAssignment() {
		return this.assignment;
	}

	public void setAssignment(QueueAssignment assignment) {
		this.assignment = assignment;
	}

	public int getBuckets() {
		return this.buckets;
	}

	public void setBuckets(int buckets) {
		this.buckets = buckets;
	}

	public Duration getSla() {
		return this.sla;
	}

	public void setSla(Duration sla) {
		this.sla = sla;
	}

	public int getPerKeyConcurrency() {
		return this.perKeyConcurrency;
	}

	public void setPerKeyConcurrency(int perKeyConcurrency) {
		this.perKeyConcurrency = perKeyConcurrency;
	}

	public boolean isOrderedByKey() {
		return this.orderedByKey;
	}

	public void setOrderedByKey(boolean orderedByKey) {
		this.orderedByKey = orderedByKey;
	}

	public int getMaxRunning() {
		return this.maxRunning;
	}

	public void setMaxRunning(int maxRunning) {
		this.maxRunning = maxRunning;
	}

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

	public boolean isTwoPhaseCommit() {
		return this.twoPhaseCommit;
	}

	public boolean isFairByKey() {
		return this.fairByKey;
	}

	public void setFairByKey(boolean fairByKey) {
		this.fairByKey = fairByKey;
	}

	public Map<String, Integer> getKeyWeights() {
		return this.keyWeights;
	}

	public void setKeyWeights(Map<String, Integer> keyWeights) {
		this.keyWeights = keyWeights;
	}

	public void setTwoPhaseCommit(boolean twoPhaseCommit) {
		this.twoPhaseCommit = twoPhaseCommit;
	}

	public QueueRetryProperties getRetry() {
		return this.retry;
	}

	public QueueRateLimitProperties getRateLimit() {
		return this.rateLimit;
	}

	public QueueRateLimitProperties getPerKeyRateLimit() {
		return this.perKeyRateLimit;
	}

	QueueSettings toSettings(String name, RetryPolicy defaultRetry) {
		RetryPolicy policy = QueueSettings.retryPolicy(name, defaultRetry, this.retry.getInitialDelay(),
				this.retry.getMaxDelay(), this.retry.getMultiplier(), this.retry.getJitter());
		int batchSize = (this.batchSize != null) ? this.batchSize
				: this.twoPhaseCommit ? 1 : QueueSettings.DEFAULT_BATCH_SIZE;
		int maxBatchSize = (this.maxBatchSize != null) ? this.maxBatchSize
				: Math.max(batchSize, QueueSettings.DEFAULT_MAX_BATCH_SIZE);
		return new QueueSettings(name, this.mode, this.concurrency, batchSize, maxBatchSize, this.pollInterval,
				this.leaseDuration, this.maxAttempts, policy, this.nonRetryableExceptions, this.claimAhead,
				this.runAtJitter, this.assignment, this.buckets, this.sla,
				ConcurrencyLimits.of(name, this.perKeyConcurrency, this.orderedByKey, this.maxRunning), this.timeout,
				this.twoPhaseCommit, this.rateLimit.toRateLimit(name, this.pollInterval),
				this.perKeyRateLimit.toRateLimit("pgqueue.queues." + name + ".per-key-rate-limit", name,
						this.pollInterval), fairness(name));
	}

	private KeyFairness fairness(String name) {
		if (!this.fairByKey) {
			if (!this.keyWeights.isEmpty()) {
				String key = "pgqueue.queues." + name + ".key-weights";
				throw new InvalidQueueConfigurationException(key, key + " weighs keys, but the queue does not "
						+ "share its workers across keys", "Set pgqueue.queues." + name + ".fair-by-key to true, "
								+ "or remove " + key + ".");
			}
			return null;
		}
		return KeyFairness.of(name, this.keyWeights);
	}

}
