package dev.pgqueue.engine;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import dev.pgqueue.InvalidJobListenerException;

/** The handlers of this application, by kind. */
public class JobHandlerRegistry {

	/** Read once per job, so reads take no lock. */
	private final Map<String, JobHandler> handlers = new ConcurrentHashMap<>();

	/**
	 * Registers a handler.
	 * @throws IllegalStateException when another handler already claims the kind
	 */
	public void register(JobHandler handler) {
		JobHandler existing = this.handlers.putIfAbsent(handler.kind(), handler);
		if (existing != null) {
			throw new InvalidJobListenerException("Two @JobListener methods handle job kind '" + handler.kind() + "': "
					+ existing.description() + " and " + handler.description(),
					"A kind must have exactly one listener: rename one of the kinds or remove one of the listeners.");
		}
	}

	/** The handler of a kind, or {@code null}. */
	public JobHandler find(String kind) {
		return this.handlers.get(kind);
	}

	/** The queue this application runs a kind in, or {@code null} when it has no listener for it. */
	public String queueOf(String kind) {
		JobHandler handler = this.handlers.get(kind);
		return (handler != null) ? handler.queue() : null;
	}

	/** Queues that have at least one listener, sorted. */
	public Set<String> queues() {
		Set<String> queues = new TreeSet<>();
		this.handlers.values().forEach((handler) -> queues.add(handler.queue()));
		return queues;
	}

	/** Kinds with a listener in the given queue, sorted. */
	public String[] kindsOf(String queue) {
		Set<String> kinds = new TreeSet<>();
		this.handlers.values().stream().filter((h) -> h.queue().equals(queue)).forEach((h) -> kinds.add(h.kind()));
		return kinds.toArray(new String[0]);
	}

}
