package dev.pgqueue.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.pgqueue.engine.JobPoller;
import dev.pgqueue.engine.QueueMaintenance;
import dev.pgqueue.engine.TransactionHorizon;
import dev.pgqueue.metrics.OldestTransaction;
import dev.pgqueue.metrics.QueueStats;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Reports each queue's depth, age of its oldest due job, scheduled and running jobs (as last read
 * by the stats reader), and whether this instance polls it; and the transaction that holds back
 * cleanup in the database the longest, when one does. Down when a queue that has listeners here is
 * not being polled.
 */
public class QueueHealthIndicator extends AbstractHealthIndicator {

	private final QueueMaintenance maintenance;

	private final ObjectProvider<JobPoller> pollers;

	public QueueHealthIndicator(QueueMaintenance maintenance, ObjectProvider<JobPoller> pollers) {
		super("pgqueue health check failed");
		this.maintenance = maintenance;
		this.pollers = pollers;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		Map<String, Object> queues = new LinkedHashMap<>();
		boolean allPolling = true;
		Map<String, QueueStats> stats = this.maintenance.lastStats();
		for (JobPoller poller : this.pollers) {
			String queue = poller.settings().name();
			Map<String, Object> details = details(stats.get(queue));
			details.put("polling", poller.isRunning());
			details.put("busyWorkers", poller.busySlots());
			details.put("concurrency", poller.settings().concurrency());
			details.put("mode", poller.settings().mode().name().toLowerCase(java.util.Locale.ROOT));
			queues.put(queue, details);
			allPolling &= poller.isRunning();
		}
		stats.forEach((queue, queueStats) -> queues.putIfAbsent(queue, details(queueStats)));
		builder.status(allPolling ? "UP" : "DOWN").withDetail("queues", queues);
		OldestTransaction oldest = this.maintenance.lastOldestTransaction();
		Map<String, Object> transaction = new LinkedHashMap<>();
		transaction.put("age", oldest.age().toString());
		if (oldest.holder() != null) {
			transaction.put("ageEstimated", oldest.ageEstimated());
			transaction.put("transactionsSince", oldest.transactionsSince());
			if (oldest.pid() != null) {
				transaction.put("pid", oldest.pid());
			}
			transaction.put("holder", oldest.holder());
			if (oldest.state() != null) {
				transaction.put("state", oldest.state());
			}
		}
		transaction.put("holdsBackCleanup", oldest.age().compareTo(TransactionHorizon.WARN_AFTER) >= 0);
		builder.withDetail("oldestTransaction", transaction);
	}

	private static Map<String, Object> details(QueueStats stats) {
		Map<String, Object> details = new LinkedHashMap<>();
		if (stats != null) {
			details.put("depth", stats.available());
			details.put("oldestAge", stats.oldestAvailableAge().toString());
			details.put("scheduled", stats.scheduled());
			details.put("running", stats.running());
		}
		return details;
	}

}
