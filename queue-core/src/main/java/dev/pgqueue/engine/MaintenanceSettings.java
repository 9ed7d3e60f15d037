package dev.pgqueue.engine;

import java.time.Duration;
import dev.pgqueue.InvalidQueueConfigurationException;

/**
 * Timings of the background services that keep the jobs table healthy.
 *
 * @param promoteInterval how often due scheduled jobs (delays, retries) are made available
 * @param rescueInterval how often expired leases are looked for
 * @param cleanupInterval how often finished jobs past their retention are pruned
 * @param statsInterval how often queue depth and age are read for metrics and health
 * @param completedRetention how long completed jobs are kept; zero deletes them as they finish
 * @param failedRetention how long failed jobs are kept
 * @param cleanupBatchSize most rows one prune statement deletes
 */
public record MaintenanceSettings(Duration promoteInterval, Duration rescueInterval, Duration cleanupInterval,
		Duration statsInterval, Duration completedRetention, Duration failedRetention, int cleanupBatchSize) {

	public static final MaintenanceSettings DEFAULT = new MaintenanceSettings(Duration.ofSeconds(1),
			Duration.ofSeconds(15), Duration.ofMinutes(1), Duration.ofSeconds(15), Duration.ofHours(1),
			Duration.ofDays(7), 10_000);

	public MaintenanceSettings {
		positive("pgqueue.maintenance.promote-interval", promoteInterval);
		positive("pgqueue.maintenance.rescue-interval", rescueInterval);
		positive("pgqueue.maintenance.cleanup-interval", cleanupInterval);
		positive("pgqueue.maintenance.stats-interval", statsInterval);
		notNegative("pgqueue.retention.completed", completedRetention);
		notNegative("pgqueue.retention.failed", failedRetention);
		if (cleanupBatchSize < 1) {
			throw new InvalidQueueConfigurationException("pgqueue.maintenance.cleanup-batch-size",
					"pgqueue.maintenance.cleanup-batch-size must be at least 1, was " + cleanupBatchSize,
					"Set pgqueue.maintenance.cleanup-batch-size to 1 or more (the default is 10000).");
		}
	}

	private static void positive(String key, Duration value) {
		if (value == null || value.isZero() || value.isNegative()) {
			throw new InvalidQueueConfigurationException(key, key + " must be positive, was " + value,
					"Set " + key + " to a positive duration such as 1s.");
		}
	}

	private static void notNegative(String key, Duration value) {
		if (value == null || value.isNegative()) {
			throw new InvalidQueueConfigurationException(key, key + " must not be negative, was " + value,
					"Set " + key + " to zero or a positive duration such as 1h.");
		}
	}

}
