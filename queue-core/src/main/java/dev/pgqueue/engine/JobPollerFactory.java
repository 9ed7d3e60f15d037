package dev.pgqueue.engine;

import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.JobPoller;
import dev.pgqueue.engine.QueueSettings;
import dev.pgqueue.engine.WorkerSettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.metrics.QueueMetrics;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Creates the poller of each queue that has listeners. */
public class JobPollerFactory {

	private final QueueCatalog queues;

	private final JobRepository repository;

	private final JobRunner runner;

	private final TransactionTemplate transactionTemplate;

	private final QueueMetrics metrics;

	private final WorkerSettings workerSettings;

	public JobPollerFactory(QueueCatalog queues, JobRepository repository, JobRunner runner,
			TransactionTemplate transactionTemplate, QueueMetrics metrics, WorkerSettings workerSettings) {
		this.queues = queues;
		this.repository = repository;
		this.runner = runner;
		this.transactionTemplate = transactionTemplate;
		this.metrics = metrics;
		this.workerSettings = workerSettings;
	}

	/**
	 * A poller for the queue that claims the given kinds. Warns when a transactional queue's batches
	 * would not all get a connection from the pool.
	 */
	public JobPoller create(String queue, String[] kinds) {
		QueueSettings settings = this.queues.settings(queue);
		if (settings.mode() == QueueMode.TRANSACTIONAL && this.transactionTemplate == null) {
			throw new IllegalStateException("Queue '" + queue + "' runs in transactional mode, which needs a "
					+ "PlatformTransactionManager bean; define one or set pgqueue.queues." + queue + ".mode=leased");
		}
		if (this.transactionTemplate != null
				&& this.transactionTemplate.getTransactionManager() instanceof DataSourceTransactionManager manager) {
			ConnectionPoolCheck.warnIfTooSmall(settings, manager.getDataSource());
		}
		return new JobPoller(settings, kinds, this.repository, this.runner, this.transactionTemplate, this.metrics,
				this.workerSettings);
	}

}
