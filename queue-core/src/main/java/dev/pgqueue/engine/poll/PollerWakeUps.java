package dev.pgqueue.engine.poll;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;


/**
 * The pollers of this application by queue, so that whatever learns of new jobs can wake them.
 *
 * <p>Two things do: the {@code NotificationListener}, for jobs enqueued anywhere (another instance,
 * the promoter), and {@code JdbcJobClient}, for jobs enqueued in this application, which wakes the
 * queue's pollers in-process as soon as the enqueuing transaction commits. The second path costs
 * nothing and does not depend on notification delivery, which lags under a steady stream (see
 * {@code NotificationListener}).
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

	/** Whether any poller is registered. */
	public boolean hasPollers() {
		return !this.pollers.isEmpty();
	}

	/** Wakes every poller now. */
	public void wakeAll() {
		this.pollers.values().forEach((queuePollers) -> queuePollers.forEach(JobPoller::wakeUp));
	}

}
