package dev.pgqueue.engine.settings;

import java.util.Map;
import java.util.TreeMap;

import dev.pgqueue.InvalidQueueConfigurationException;

/**
 * A queue whose workers are shared fairly across concurrency keys (tenants): claims take the keys
 * with waiting jobs in turn, round robin, each in proportion to its weight, so that a key with
 * 100 000 waiting jobs and one with ten both progress. Within a key, jobs start in the queue's usual
 * order (priority, then due time).
 *
 * @param weights the weight of each key named here, the share of a claim it takes on its turn;
 * every other key weighs 1
 */
public record KeyFairness(Map<String, Integer> weights) {

	/** Heaviest weight: a key takes at most this many jobs on its turn for each job of a key of weight 1. */
	public static final int MAX_WEIGHT = 1000;

	/** Every key alike. */
	public static final KeyFairness EQUAL = new KeyFairness(Map.of());

	public KeyFairness {
		weights = Map.copyOf(weights);
	}

	/**
	 * Validates a queue's key weights, naming its settings as written in {@code application.yml}.
	 * @throws InvalidQueueConfigurationException when a weight is below 1 or above {@value #MAX_WEIGHT}
	 */
	public static KeyFairness of(String queue, Map<String, Integer> weights) {
		String key = "pgqueue.queues." + queue + ".key-weights";
		new TreeMap<>(weights).forEach((name, weight) -> {
			if (weight == null || weight < 1 || weight > MAX_WEIGHT) {
				throw new InvalidQueueConfigurationException(key + "[" + name + "]", key + "[" + name + "] must be "
						+ "between 1 and " + MAX_WEIGHT + ", was " + weight, "Give the key's share of its queue's "
								+ "workers relative to other keys (which weigh 1), or leave it out for 1.");
			}
		});
		return new KeyFairness(weights);
	}

	/** A key's weight: 1 unless named. */
	public int weightOf(String key) {
		return this.weights.getOrDefault(key, 1);
	}

}
