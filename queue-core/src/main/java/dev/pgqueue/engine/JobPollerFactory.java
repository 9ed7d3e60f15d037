package dev.pgqueue.engine;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Executor;

import dev.pgqueue.InvalidJobListenerException;
import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.buckets.BucketCoordinator;
import dev.pgqueue.engine.buckets.BucketScope;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.leased.LeasedClaims;
import dev.pgqueue.engine.limits.FairClaims;
import dev.pgqueue.engine.limits.LimitedClaims;
import dev.pgqueue.engine.limits.RateGate;
import dev.pgqueue.engine.poll.CallingThreadRun;
import dev.pgqueue.engine.poll.ClaimFloor;
import dev.pgqueue.engine.poll.ClaimProgress;
import dev.pgqueue.engine.poll.ClaimScope;
import dev.pgqueue.engine.poll.ClaimStrategy;
import dev.pgqueue.engine.limits.JobClaims;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.poll.RunContext;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.service.PooledConnections;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.KeyFairness;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.sql.Repositories;
import dev.pgqueue.engine.transactional.TransactionalBatchRunner;
import dev.pgqueue.engine.transactional.TransactionalClaims;
import dev.pgqueue.engine.twophase.PreparedTransactionsCheck;
import dev.pgqueue.engine.twophase.TwoPhaseJobRunner;
import dev.pgqueue.metrics.QueueMetrics;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Creates the poller of each queue that has listeners, with the claim strategy of its mode. */
final class JobPollerFactory {

	private final QueueCatalog queues;

	private final Repositories sql;

	private final JobRepository repository;

	private final JobRunner runner;

	private final @Nullable TransactionTemplate transactionTemplate;

	private final QueueMetrics metrics;

	private final WorkerSettings workerSettings;

	private final Duration heartbeatInterval;

	private final QueueSignals signals;

	private final @Nullable Executor workerExecutor;

	private final PooledConnections connections;

	private final boolean claimFloors;

	/**
	 * @param settings the engine's settings: workers and bucket heartbeats
	 * @param queues the settings of each queue
	 * @param sql every statement of the engine
	 * @param runner runs one attempt
	 * @param transactionTemplate the transactions of transactional queues and limited claims; {@code null}
	 * when the application has no transaction manager
	 * @param signals where the pollers record what their claims achieve, one {@link ClaimProgress} per
	 * queue
	 * @param workerExecutor runs the workers of every queue, or {@code null} for a pool per queue
	 * @param claimFloors whether claims of shared queues start from floors
	 * @param connections the application's pool, whose idle connections are replaced after a lost one
	 */
	JobPollerFactory(EngineSettings settings, QueueCatalog queues, Repositories sql, JobRunner runner,
			@Nullable TransactionTemplate transactionTemplate, QueueMetrics metrics, QueueSignals signals,
			@Nullable Executor workerExecutor, boolean claimFloors, PooledConnections connections) {
		this.queues = queues;
		this.sql = sql;
		this.repository = sql.jobs();
		this.runner = runner;
		this.transactionTemplate = transactionTemplate;
		this.metrics = metrics;
		this.workerSettings = settings.workers();
		this.heartbeatInterval = settings.heartbeatInterval();
		this.signals = signals;
		this.workerExecutor = workerExecutor;
		this.claimFloors = claimFloors;
		this.connections = connections;
	}

	/**
	 * A poller for the queue that claims the given kinds. Warns when a transactional queue's batches
	 * would not all get a connection from the pool.
	 */
	JobPoller create(String queue, String[] kinds, @Nullable QueuePauses pauses) {
		QueueSettings settings = this.queues.settings(queue);
		requireTwoPhaseCommitForEffects(settings, kinds);
		JobHandlerRegistry handlers = this.runner.handlers();
		checkRateLimits(settings, kinds, handlers);
		boolean limited = LimitedClaims.needed(settings.limits(), kinds, handlers::maxRunningOf);
		RateGate rate = RateGate.of(settings, kinds, handlers::rateLimitOf, handlers::rateWeightOf, this.sql.limits(),
				this.sql.rates(), this.metrics);
		requireFairnessAlone(settings, limited, rate);
		String owner = owner(queue);
		ClaimScope scope = switch (settings.assignment()) {
			// Limited claims, claims of jobs a rate limit chose and fair claims read past full keys from the
			// head of the queue, or key by key, so they do without floors.
			case SHARED -> (this.claimFloors && !limited && !rate.choosesJobs() && settings.fairness() == null)
					? new ClaimFloor(sweepInterval(settings), ClaimFloor.DEFAULT_MARGIN) : ClaimFloor.none();
			case BUCKETS -> buckets(settings, kinds, owner);
		};
		JobClaims claims = limited ? limitedClaims(settings, handlers) : claims(settings);
		RunContext context = context(settings, kinds, owner, scope, claims, rate);
		if (settings.mode() == QueueMode.TRANSACTIONAL) {
			checkTransactional(settings);
		}
		return new JobPoller(context, strategy(context), this.workerExecutor,
				(pauses != null) ? () -> pauses.isPaused(queue) : () -> false);
	}

	/**
	 * A run of the queue's jobs of the given kinds on the calling thread, with the claims and the
	 * strategy its poller would have, reading the whole queue whatever its assignment: every due job
	 * of those kinds, or only the job with public id {@code job} (due or scheduled), once.
	 */
	CallingThreadRun callingThreadRun(String queue, String[] kinds, @Nullable UUID job) {
		QueueSettings settings = this.queues.settings(queue);
		requireTwoPhaseCommitForEffects(settings, kinds);
		JobHandlerRegistry handlers = this.runner.handlers();
		JobClaims claims = (job != null) ? JobClaims.one(this.repository, job)
				: LimitedClaims.needed(settings.limits(), kinds, handlers::maxRunningOf)
						? limitedClaims(settings, handlers) : claims(settings);
		// A run on the calling thread (a test's, an operator's chosen job) does not wait for the rate limit.
		return new CallingThreadRun(context(settings, kinds, owner(queue), ClaimFloor.none(), claims, RateGate.NONE),
				this::strategy);
	}

	private RunContext context(QueueSettings settings, String[] kinds, String owner, ClaimScope scope,
			JobClaims claims, RateGate rate) {
		return new RunContext(settings, kinds, owner, this.repository, scope, claims, this.signals.of(settings),
				this.runner, this.metrics, this.workerSettings, this.connections, rate);
	}

	/** The claims of a queue without concurrency limits: fair across keys, or plain. */
	private JobClaims claims(QueueSettings settings) {
		KeyFairness fairness = settings.fairness();
		return (fairness != null) ? new FairClaims(settings.name(), fairness, this.sql.limits())
				: JobClaims.plain(this.repository, this.sql.limits(), settings.name());
	}

	/**
	 * Fails when a queue that shares its workers fairly across keys also has limits whose claims read the
	 * queue in its plain order: concurrency limits, or rate limits per kind or per key, or weights.
	 */
	private static void requireFairnessAlone(QueueSettings settings, boolean limited, RateGate rate) {
		if (settings.fairness() == null) {
			return;
		}
		String key = "pgqueue.queues." + settings.name() + ".fair-by-key";
		if (limited) {
			throw new InvalidQueueConfigurationException(key, key + " cannot be combined with the concurrency limits of "
					+ "queue '" + settings.name() + "' or of its kinds (max-running): their claims read the queue in its "
					+ "plain order", "Keep the limits and turn " + key + " off, or drop max-running from the queue and "
							+ "its kinds (pgqueue.kinds.<kind>.max-running, @JobListener(maxRunning)).");
		}
		if (rate.choosesJobs()) {
			throw new InvalidQueueConfigurationException(key, key + " cannot be combined with rate limits per kind, "
					+ "per key, or weights above 1 on queue '" + settings.name() + "': their claims choose jobs in the "
					+ "queue's plain order", "Keep the queue's own rate-limit only (it works with " + key + "), or "
							+ "turn " + key + " off.");
		}
	}

	/**
	 * Fails when a kind's rate limit cannot work on its queue (a period under the poll interval), or when
	 * a kind's jobs weigh more than a limit they fall under could ever grant, naming the settings.
	 */
	private static void checkRateLimits(QueueSettings settings, String[] kinds, JobHandlerRegistry handlers) {
		String queueKey = "pgqueue.queues." + settings.name() + ".";
		for (String kind : kinds) {
			String kindKey = "pgqueue.kinds." + kind + ".";
			RateLimit kindLimit = handlers.rateLimitOf(kind);
			if (kindLimit != null) {
				RateLimit.of(kindKey + "rate-limit", settings.name(), kindLimit.starts(), kindLimit.period(),
						settings.pollInterval());
			}
			int weight = handlers.rateWeightOf(kind);
			String weightKey = handlers.rateWeightOverridden(kind) ? kindKey + "rate-weight"
					: "@JobListener(rateWeight) of kind '" + kind + "'";
			requireWeightFits(weightKey, kind, weight, settings.rateLimit(), queueKey + "rate-limit.starts");
			requireWeightFits(weightKey, kind, weight, kindLimit, kindKey + "rate-limit.starts");
			requireWeightFits(weightKey, kind, weight, settings.perKeyRateLimit(), queueKey + "per-key-rate-limit.starts");
		}
	}

	private static void requireWeightFits(String weightKey, String kind, int weight, @Nullable RateLimit limit,
			String limitKey) {
		if (limit != null && weight > limit.starts()) {
			throw new InvalidQueueConfigurationException(weightKey, weightKey + " is " + weight + ", above " + limitKey
					+ " (" + limit.starts() + "): a job of kind '" + kind + "' uses " + weight + " units of that limit "
					+ "when it starts, more than one period ever grants, so it could never start", "Lower the weight to "
							+ limit.starts() + " or less, or raise " + limitKey + " (scaling the period with it).");
		}
	}

	/** Identifies a poller (or a run on the calling thread) in lease columns and logs. */
	private static String owner(String queue) {
		return ManagementFactory.getRuntimeMXBean().getName() + "/" + queue + "/"
				+ UUID.randomUUID().toString().substring(0, 8);
	}

	private ClaimStrategy strategy(RunContext context) {
		return switch (context.settings().mode()) {
			case TRANSACTIONAL -> transactional(context);
			case LEASED -> new LeasedClaims(context);
		};
	}

	private ClaimScope buckets(QueueSettings settings, String[] kinds, String owner) {
		return new BucketScope(new BucketCoordinator(this.sql.coordination(), settings.name(), kinds, owner,
				settings.buckets(), this.heartbeatInterval, this.workerSettings, this.connections));
	}

	/** The queue's poll interval, but no shorter than {@link ClaimFloor#MIN_SWEEP_INTERVAL}. */
	private static Duration sweepInterval(QueueSettings settings) {
		return (settings.pollInterval().compareTo(ClaimFloor.MIN_SWEEP_INTERVAL) > 0) ? settings.pollInterval()
				: ClaimFloor.MIN_SWEEP_INTERVAL;
	}

	private JobClaims limitedClaims(QueueSettings settings, JobHandlerRegistry handlers) {
		if (this.transactionTemplate == null) {
			throw new IllegalStateException("Queue '" + settings.name() + "' has concurrency limits, whose claims take "
					+ "several statements in one transaction; define a PlatformTransactionManager bean");
		}
		return new LimitedClaims(this.repository.schema().value(), settings.name(), settings.limits(),
				settings.concurrency(), handlers::maxRunningOf, this.sql.limits(),
				this.transactionTemplate);
	}

	/**
	 * Checks a transactional queue's poller before it starts: warns when its batches would not all get
	 * a connection from the pool, and fails when its two-phase commit cannot work on the server.
	 */
	private void checkTransactional(QueueSettings settings) {
		TransactionTemplate transactions = requireTransactions(settings);
		if (transactions.getTransactionManager() instanceof DataSourceTransactionManager manager) {
			ConnectionPoolCheck.warnIfTooSmall(settings, manager.getDataSource());
		}
		if (settings.twoPhaseCommit()) {
			PreparedTransactionsCheck.check(settings, this.repository.schema(),
					this.sql.prepared().maxPreparedTransactions());
		}
	}

	private ClaimStrategy transactional(RunContext context) {
		QueueSettings settings = context.settings();
		TransactionTemplate transactions = requireTransactions(settings);
		if (settings.twoPhaseCommit()) {
			return new TransactionalClaims(context, new TwoPhaseJobRunner(context, transactions, this.sql.prepared()));
		}
		return new TransactionalClaims(context, new TransactionalBatchRunner(context, transactions));
	}

	private TransactionTemplate requireTransactions(QueueSettings settings) {
		if (this.transactionTemplate == null) {
			throw new IllegalStateException("Queue '" + settings.name() + "' runs in transactional mode, which needs a "
					+ "PlatformTransactionManager bean; define one or set pgqueue.queues." + settings.name()
					+ ".mode=leased");
		}
		return this.transactionTemplate;
	}

	/**
	 * Fails when a listener of the queue returns an {@link dev.pgqueue.ExternalEffect} but the queue
	 * does not use two-phase commit: nothing would run the effect in step with the job's commit.
	 */
	private void requireTwoPhaseCommitForEffects(QueueSettings settings, String[] kinds) {
		if (settings.twoPhaseCommit()) {
			return;
		}
		for (String kind : kinds) {
			JobHandler handler = this.runner.handlers().find(kind);
			if (handler != null && handler.hasExternalEffect()) {
				throw new InvalidJobListenerException(handler.description() + " returns an ExternalEffect, but its queue '"
						+ settings.name() + "' does not use two-phase commit", "Set pgqueue.queues." + settings.name()
								+ ".two-phase-commit=true (with mode transactional), or have the listener run the "
								+ "step itself and return nothing.");
			}
		}
	}

}
