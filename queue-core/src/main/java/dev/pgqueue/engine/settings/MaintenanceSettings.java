package dev.pgqueue.engine.settings;

import java.time.Duration;

/**
 * Timings of the background services that keep the jobs table healthy.
 *
 * @param promoteInterval how often due scheduled jobs (delays, retries) are made available
 * @param rescueInterval how often expired leases are looked for
 * @param cleanupInterval how often finished jobs past their retention are pruned
 * @param statsInterval how often queue depth and age are read for metrics and health
 * @param completedRetention how long completed jobs are kept; zero deletes them as they finish
 * @param failedRetention how long failed (and cancelled) jobs are kept
 * @param cleanupBatchSize most rows one prune statement deletes
 */
public record MaintenanceSettings(Duration promoteInterval, Duration rescueInterval, Duration cleanupInterval,
		Duration statsInterval, Duration completedRetention, Duration failedRetention, int cleanupBatchSize) {

	public static final MaintenanceSettings DEFAULT = new MaintenanceSettings(Duration.ofSeconds(1),
			Duration.ofSeconds(15), Duration.ofMinutes(1), Duration.ofSeconds(15), Duration.ofHours(1),
			Duration.ofDays(7), 10_000);

	public MaintenanceSettings {
		SettingRules.positive("pgqueue.maintenance.promote-interval", promoteInterval);
		SettingRules.positive("pgqueue.maintenance.rescue-interval", rescueInterval);
		SettingRules.positive("pgqueue.maintenance.cleanup-interval", cleanupInterval);
		SettingRules.positive("pgqueue.maintenance.stats-interval", statsInterval);
		SettingRules.notNegative("pgqueue.retention.completed", completedRetention);
		SettingRules.notNegative("pgqueue.retention.failed", failedRetention);
		SettingRules.atLeastOne("pgqueue.maintenance.cleanup-batch-size", cleanupBatchSize);
	}

}
