package dev.pgqueue.engine;

import java.lang.management.ManagementFactory;
import java.util.UUID;
import java.util.concurrent.Executor;

import dev.pgqueue.engine.leased.LeasedClaims;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.transactional.TransactionalClaims;
import dev.pgqueue.metrics.QueueMetrics;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Creates the poller of each queue that has listeners, with the claim strategy of its mode. */
public class JobPollerFactory {

	private final QueueCatalog queues;

	private final JobRepository repository;

	private final JobRunner runner;

	private final TransactionTemplate transactionTemplate;

	private final QueueMetrics metrics;

	private final WorkerSettings workerSettings;

	private final Executor workerExecutor;

	private final boolean claimFloors;

	public JobPollerFactory(QueueCatalog queues, JobRepository repository, JobRunner runner,
			TransactionTemplate transactionTemplate, QueueMetrics metrics, WorkerSettings workerSettings) {
		this(queues, repository, runner, transactionTemplate, metrics, workerSettings, null);
	}

	/**
	 * @param workerExecutor runs the workers of every queue; {@code null} gives each queue a pool of
	 * its own (virtual threads when {@link WorkerSettings#virtualThreads()})
	 */
	public JobPollerFactory(QueueCatalog queues, JobRepository repository, JobRunner runner,
			TransactionTemplate transactionTemplate, QueueMetrics metrics, WorkerSettings workerSettings,
			Executor workerExecutor) {
		this(queues, repository, runner, transactionTemplate, metrics, workerSettings, workerExecutor, true);
	}

	/**
	 * @param claimFloors whether claims start from {@link ClaimFloor floors}; {@code false} only to
	 * measure what floors are worth
	 */
	public JobPollerFactory(QueueCatalog queues, JobRepository repository, JobRunner runner,
			TransactionTemplate transactionTemplate, QueueMetrics metrics, WorkerSettings workerSettings,
			Executor workerExecutor, boolean claimFloors) {
		this.claimFloors = claimFloors;
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
	public JobPoller create(String queue, String[] kinds) {
		QueueSettings settings = this.queues.settings(queue);
		String owner = ManagementFactory.getRuntimeMXBean().getName() + "/" + queue + "/"
				+ UUID.randomUUID().toString().substring(0, 8);
		ClaimFloor floor = this.claimFloors ? new ClaimFloor(sweepInterval(settings), ClaimFloor.DEFAULT_MARGIN)
				: ClaimFloor.none();
		ClaimStrategy strategy = switch (settings.mode()) {
			case TRANSACTIONAL -> transactional(settings, kinds, floor);
			case LEASED -> new LeasedClaims(settings, kinds, owner, this.repository, floor, this.runner, this.metrics,
					this.workerSettings);
		};
		return new JobPoller(settings, kinds, owner, strategy, this.workerSettings, this.workerExecutor);
	}

	/** The queue's poll interval, but no shorter than {@link ClaimFloor#MIN_SWEEP_INTERVAL}. */
	private static java.time.Duration sweepInterval(QueueSettings settings) {
		return (settings.pollInterval().compareTo(ClaimFloor.MIN_SWEEP_INTERVAL) > 0) ? settings.pollInterval()
				: ClaimFloor.MIN_SWEEP_INTERVAL;
	}

	private ClaimStrategy transactional(QueueSettings settings, String[] kinds, ClaimFloor floor) {
		if (this.transactionTemplate == null) {
			throw new IllegalStateException("Queue '" + settings.name() + "' runs in transactional mode, which needs a "
					+ "PlatformTransactionManager bean; define one or set pgqueue.queues." + settings.name()
					+ ".mode=leased");
		}
		if (this.transactionTemplate.getTransactionManager() instanceof DataSourceTransactionManager manager) {
			ConnectionPoolCheck.warnIfTooSmall(settings, manager.getDataSource());
		}
		return new TransactionalClaims(settings, kinds, this.repository, floor, this.runner, this.transactionTemplate,
				this.metrics, this.workerSettings.deleteCompleted());
	}

}
