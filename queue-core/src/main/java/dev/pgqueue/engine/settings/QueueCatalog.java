package dev.pgqueue.engine.settings;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;


/**
 * The queues this application knows: those configured, and any other a listener names, which runs
 * with the default settings.
 */
public class QueueCatalog {

	private final QueueSettings defaults;

	private final Map<String, QueueSettings> configured = new LinkedHashMap<>();

	/**
	 * @param defaults settings of a queue that is not configured (its name is replaced)
	 * @param configured configured queues
	 */
	public QueueCatalog(QueueSettings defaults, Collection<QueueSettings> configured) {
		this.defaults = defaults;
		configured.forEach((settings) -> this.configured.put(settings.name(), settings));
	}

	/** Settings of the queue, configured or default. */
	public QueueSettings settings(String queue) {
		QueueSettings settings = this.configured.get(queue);
		return (settings != null) ? settings : this.defaults.withName(queue);
	}

	/** Names of the configured queues. */
	public Set<String> configuredQueues() {
		return this.configured.keySet();
	}

}
