package dev.pgqueue.engine.maintenance;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which queues some live instance polls, and where each kind has been seen handled, as the polling
 * heartbeat last read them (with this instance's own queues and kinds added). Immutable: it is read
 * on every enqueue, without a lock.
 *
 * @param polled queues with a poller on some instance that heartbeat within the expiry
 * @param handledIn the queues each kind has been seen handled in (within the retention), by kind
 */
public record PolledQueues(Set<String> polled, Map<String, Set<String>> handledIn) {

	public PolledQueues {
		polled = Set.copyOf(polled);
		Map<String, Set<String>> copy = new HashMap<>();
		handledIn.forEach((kind, queues) -> copy.put(kind, Set.copyOf(queues)));
		handledIn = Map.copyOf(copy);
	}

	/** Whether some live instance polls the queue. */
	public boolean isPolled(String queue) {
		return this.polled.contains(queue);
	}

	/** The queues the kind has been seen handled in, sorted; empty when it never has. */
	public Set<String> queuesHandling(String kind) {
		Set<String> queues = this.handledIn.get(kind);
		return (queues != null) ? new TreeSet<>(queues) : Set.of();
	}

	/** Whether the kind has been seen handled in the queue. */
	public boolean isHandled(String kind, String queue) {
		Set<String> queues = this.handledIn.get(kind);
		return queues != null && queues.contains(queue);
	}

	/** This view with the queues polled here and the kinds handled in each added. */
	PolledQueues with(Map<String, String[]> kindsByQueue) {
		if (kindsByQueue.isEmpty()) {
			return this;
		}
		Set<String> queues = new HashSet<>(this.polled);
		Map<String, Set<String>> handled = new HashMap<>(this.handledIn);
		kindsByQueue.forEach((queue, kinds) -> {
			queues.add(queue);
			for (String kind : kinds) {
				Set<String> in = new HashSet<>(handled.getOrDefault(kind, Set.of()));
				in.add(queue);
				handled.put(kind, in);
			}
		});
		return new PolledQueues(queues, handled);
	}

}
