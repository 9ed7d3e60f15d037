package dev.pgqueue.engine;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.pgqueue.JobPoller;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The pollers of this application by queue, so that whatever learns of new jobs can wake them.
 *
 * <p>Two things do: the {@link NotificationListener}, for jobs enqueued anywhere (another instance,
 * the promoter), and {@link JdbcJobClient}, for jobs enqueued in this application, which wakes the
 * queue's pollers in-process as soon as the enqueuing transaction commits. The second path costs
 * nothing and does not depend on notification delivery, which lags under a steady stream (see
 * {@link NotificationListener}).
 */
public class PollerWakeUps {

	private final Map<String, List<JobPoller>> pollers = new ConcurrentHashMap<>();

	/** Wakes this poller when its queue has new jobs. */
	public void register(JobPoller poller) {
		this.pollers.computeIfAbsent(poller.settings().name(), (queue) -> new CopyOnWriteArrayList<>()).add(poller);
	}

	/** Wakes the pollers of the queue now. */
	public void wake(String queue) {
		List<JobPoller> queuePollers = this.pollers.get(queue);
		if (queuePollers != null) {
			queuePollers.forEach(JobPoller::wakeUp);
		}
	}

	/** Wakes every poller now. */
	public void wakeAll() {
		this.pollers.values().forEach((queuePollers) -> queuePollers.forEach(JobPoller::wakeUp));
	}

	/**
	 * Wakes the pollers of the queues once the current Spring transaction commits (never if it rolls
	 * back), or now when there is none: an enqueue outside a transaction has committed when it returns.
	 */
	public void wakeAfterCommit(Collection<String> queues) {
		if (this.pollers.isEmpty()) {
			return;
		}
		if (!TransactionSynchronizationManager.isSynchronizationActive()) {
			queues.forEach(this::wake);
			return;
		}
		@SuppressWarnings("unchecked")
		Set<String> pending = (Set<String>) TransactionSynchronizationManager.getResource(this);
		if (pending == null) {
			Set<String> committed = new LinkedHashSet<>();
			TransactionSynchronizationManager.bindResource(this, committed);
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCommit() {
					committed.forEach(PollerWakeUps.this::wake);
				}

				@Override
				public void afterCompletion(int status) {
					TransactionSynchronizationManager.unbindResourceIfPossible(PollerWakeUps.this);
				}

			});
			pending = committed;
		}
		pending.addAll(queues);
	}

}
