package dev.pgqueue.engine;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Executor;

import dev.pgqueue.InvalidJobListenerException;
import dev.pgqueue.engine.buckets.BucketCoordinator;
import dev.pgqueue.engine.buckets.BucketScope;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.leased.LeasedClaims;
import dev.pgqueue.engine.limits.LimitedClaims;
import dev.pgqueue.engine.poll.ClaimFloor;
import dev.pgqueue.engine.poll.ClaimProgress;
import dev.pgqueue.engine.poll.ClaimScope;
import dev.pgqueue.engine.poll.ClaimStrategy;
import dev.pgqueue.engine.poll.JobClaims;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.CoordinationRepository;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.sql.LimitRepository;
import dev.pgqueue.engine.sql.PreparedTransactionRepository;
import dev.pgqueue.engine.transactional.TransactionalClaims;
import dev.pgqueue.engine.twophase.PreparedTransactionsCheck;
import dev.pgqueue.engine.twophase.TwoPhaseJobRunner;
import dev.pgqueue.metrics.QueueMetrics;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Creates the poller of each queue that has listeners, with the claim strategy of its mode. */
final class JobPollerFactory {

	private final QueueCatalog queues;

	private final JobRepository repository;

	private final JobRunner runner;

	private final TransactionTemplate transactionTemplate;

	private final QueueMetrics metrics;

	private final WorkerSettings workerSettings;

	private final Executor workerExecutor;

	private final boolean claimFloors;

	private final CoordinationRepository coordination;

	private final Duration heartbeatInterval;

	private final QueueSignals signals;

	/**
	 * @param signals where the pollers record what their claims achieve, one {@link ClaimProgress} per
	 * queue
	 * @param coordination the bucket coordinator's tables, for queues with bucket assignment;
	 * {@code null} when no queue has it
	 * @param heartbeatInterval how often members of a bucket coordinator heartbeat
	 */
	JobPollerFactory(QueueCatalog queues, JobRepository repository, JobRunner runner,
			TransactionTemplate transactionTemplate, QueueMetrics metrics, WorkerSettings workerSettings,
			Executor workerExecutor, boolean claimFloors, QueueSignals signals, CoordinationRepository coordination,
			Duration heartbeatInterval) {
		this.coordination = coordination;
		this.heartbeatInterval = heartbeatInterval;
		this.claimFloors = claimFloors;
		this.signals = signals;
		this.queues = queues;
		this.repository = repository;
		this.runner = runner;
		this.transactionTemplate = transactionTemplate;
		this.metrics = metrics;
		this.workerSettings = workerSettings;
		this.workerExecutor = workerExecutor;
	}

	/**
	 * A poller for the queue that claims the given kinds. Warns when a transactional queue's batches
	 * would not all get a connection from the pool.
	 */
	JobPoller create(String queue, String[] kinds, QueuePauses pauses) {
		QueueSettings settings = this.queues.settings(queue);
		requireTwoPhaseCommitForEffects(settings, kinds);
		JobHandlerRegistry handlers = this.runner.handlers();
		boolean limited = LimitedClaims.needed(settings.limits(), kinds, handlers::maxRunningOf);
		String owner = ManagementFactory.getRuntimeMXBean().getName() + "/" + queue + "/"
				+ UUID.randomUUID().toString().substring(0, 8);
		ClaimScope scope = switch (settings.assignment()) {
			// Limited claims read past full keys from the head of the queue, so they do without floors.
			case SHARED -> (this.claimFloors && !limited)
					? new ClaimFloor(sweepInterval(settings), ClaimFloor.DEFAULT_MARGIN) : ClaimFloor.none();
			case BUCKETS -> buckets(settings, kinds, owner);
		};
		ClaimProgress progress = this.signals.of(settings);
		JobClaims claims = limited ? limitedClaims(settings, handlers) : JobClaims.plain(this.repository, queue);
		ClaimStrategy strategy = switch (settings.mode()) {
			case TRANSACTIONAL -> transactional(settings, kinds, scope, claims, progress);
			case LEASED -> new LeasedClaims(settings, kinds, owner, this.repository, scope, claims, progress,
					this.runner, this.metrics, this.workerSettings);
		};
		return new JobPoller(settings, kinds, owner, strategy, scope, this.workerSettings, this.workerExecutor,
				(pauses != null) ? () -> pauses.isPaused(queue) : () -> false);
	}

	private ClaimScope buckets(QueueSettings settings, String[] kinds, String owner) {
		if (this.coordination == null) {
			throw new IllegalStateException("Queue '" + settings.name() + "' has bucket assignment, but this poller "
					+ "factory was made without the coordination tables");
		}
		return new BucketScope(new BucketCoordinator(this.coordination, settings.name(), kinds, owner,
				settings.buckets(), this.heartbeatInterval, this.workerSettings));
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
				settings.concurrency(), handlers::maxRunningOf, new LimitRepository(this.repository.jdbcTemplate(), this.repository.schema()),
				this.transactionTemplate);
	}

	private ClaimStrategy transactional(QueueSettings settings, String[] kinds, ClaimScope scope, JobClaims claims,
			ClaimProgress progress) {
		if (this.transactionTemplate == null) {
			throw new IllegalStateException("Queue '" + settings.name() + "' runs in transactional mode, which needs a "
					+ "PlatformTransactionManager bean; define one or set pgqueue.queues." + settings.name()
					+ ".mode=leased");
		}
		if (this.transactionTemplate.getTransactionManager() instanceof DataSourceTransactionManager manager) {
			ConnectionPoolCheck.warnIfTooSmall(settings, manager.getDataSource());
		}
		if (settings.twoPhaseCommit()) {
			PreparedTransactionRepository prepared = new PreparedTransactionRepository(this.repository.jdbcTemplate(),
					this.repository.schema());
			PreparedTransactionsCheck.check(settings, this.repository.schema(), prepared.maxPreparedTransactions());
			return new TransactionalClaims(settings, claims.limited(), (aborting) -> new TwoPhaseJobRunner(settings,
					kinds, this.repository, prepared, scope, claims, progress, this.runner, this.transactionTemplate,
					this.metrics, this.workerSettings.deleteCompleted(), aborting));
		}
		return new TransactionalClaims(settings, kinds, this.repository, scope, claims, progress, this.runner,
				this.transactionTemplate, this.metrics, this.workerSettings.deleteCompleted());
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
