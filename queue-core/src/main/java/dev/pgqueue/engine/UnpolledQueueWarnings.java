package dev.pgqueue.engine;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.pgqueue.JobRequest;
import dev.pgqueue.engine.maintenance.PolledQueues;
import dev.pgqueue.engine.maintenance.PollingHeartbeat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warns when a job is enqueued that, as far as any instance has shown, nobody will run: no live
 * instance polls its queue, and its kind has never been seen handled in that queue (within
 * {@link PollingHeartbeat#KIND_RETENTION}). Once per kind and queue in this instance; the enqueue
 * goes on, since a producer may well start before its workers.
 *
 * <p>Runs on every enqueue, so it reads the {@link PolledQueues} view the polling heartbeat keeps
 * (a volatile read and a set lookup) and never the database. Before the heartbeat's first read it
 * says nothing.
 */
final class UnpolledQueueWarnings {

	private static final Logger logger = LoggerFactory.getLogger(UnpolledQueueWarnings.class);

	private final Supplier<@Nullable PolledQueues> view;

	/** The kinds and queues warned about, as {@code queue NUL kind}. */
	private final Set<String> warned = ConcurrentHashMap.newKeySet();

	/** @param view the polling heartbeat's last view, or {@code null} before its first read */
	UnpolledQueueWarnings(Supplier<@Nullable PolledQueues> view) {
		this.view = view;
	}

	/**
	 * A job of {@code kind} was enqueued into {@code queue}.
	 * @param queueNamed whether the request named the queue, rather than leaving it to this
	 * application's listener for the kind or to {@link JobRequest#DEFAULT_QUEUE}
	 */
	void enqueued(String kind, String queue, boolean queueNamed) {
		PolledQueues polled = this.view.get();
		if (polled == null || polled.isPolled(queue) || polled.isHandled(kind, queue)) {
			return;
		}
		if (!this.warned.add(queue + '\0' + kind)) {
			return;
		}
		logger.warn(message(kind, queue, queueNamed, polled.queuesHandling(kind)));
	}

	static String message(String kind, String queue, boolean queueNamed, Set<String> handledIn) {
		String chosen = queueNamed ? ""
				: " (the request named no queue, and no listener in this application handles the kind)";
		if (handledIn.isEmpty()) {
			return "A job of kind '" + kind + "' was enqueued into queue '" + queue + "'" + chosen
					+ ", which no instance polls, and no instance has been seen handling that kind: it waits until one "
					+ "does. Add a @JobListener for kind '" + kind + "' (or check the kind's spelling against the "
					+ "listener's), enqueue it into the queue whose listener handles it (JobRequest.queue), or poll "
					+ "queue '" + queue + "'. The job is kept; this is logged once per kind and queue.";
		}
		String where = ((handledIn.size() == 1) ? "queue '" : "queues '") + String.join("', '", handledIn) + "'";
		return "A job of kind '" + kind + "' was enqueued into queue '" + queue + "'" + chosen
				+ ", which no instance polls; that kind is handled in " + where + ". It waits until an instance polls "
				+ "queue '" + queue + "': enqueue it into " + ((handledIn.size() == 1) ? where : "one of those")
				+ " (JobRequest.queue), or add a @JobListener for kind '" + kind + "' in queue '" + queue
				+ "'. The job is kept; this is logged once per kind and queue.";
	}

}
