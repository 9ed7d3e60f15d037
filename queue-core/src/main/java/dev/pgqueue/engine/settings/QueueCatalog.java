package dev.pgqueue.engine.settings;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.pgqueue.InvalidQueueConfigurationException;


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


	/**
	 * Checks the configured queues against the queues this application has listeners for.
	 * @param listened queues with at least one listener here
	 * @param inDoubtResolver whether the application defines one {@code InDoubtJobResolver}
	 * @throws InvalidQueueConfigurationException when a configured queue has no listener here, or a
	 * listened queue with two-phase commit has no resolver
	 */
	public void requireListeners(Set<String> listened, boolean inDoubtResolver) {
		Set<String> unused = new TreeSet<>(configuredQueues());
		unused.removeAll(listened);
		if (!unused.isEmpty()) {
			String queue = unused.iterator().next();
			throw new InvalidQueueConfigurationException("pgqueue.queues." + queue, "pgqueue.queues configures queue '"
					+ queue + "', but no @JobListener in this application runs jobs in it (queues with listeners: "
					+ listened + ")", "Fix the queue's name, add a @JobListener(queue = \"" + queue
							+ "\"), remove its configuration, or set pgqueue.enabled=false in an application that "
							+ "only enqueues.");
		}
		for (String queue : listened) {
			if (settings(queue).twoPhaseCommit() && !inDoubtResolver) {
				throw new InvalidQueueConfigurationException("pgqueue.queues." + queue + ".two-phase-commit", "Queue '"
						+ queue + "' uses two-phase commit, but the application defines no InDoubtJobResolver bean (or "
						+ "more than one): a job whose worker dies between prepare and commit would stay in doubt, "
						+ "holding its row and vacuum back, until pgqueue.two-phase-commit.roll-back-after",
						"Define one InDoubtJobResolver bean that asks the other system whether a job's effect happened "
								+ "(by the job's id); if the effects are idempotent and may simply run again, "
								+ "(job) -> false will do.");
			}
		}
	}

}
