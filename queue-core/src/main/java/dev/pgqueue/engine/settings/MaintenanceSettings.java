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
 * @param deadRowsWarning dead rows in the jobs table from which the stats reader warns that they grow
 * without vacuum, when they also outnumber the live rows and the table was not vacuumed for
 * {@link #VACUUM_OVERDUE_AFTER}
 */
public record MaintenanceSettings(Duration promoteInterval, Duration rescueInterval, Duration cleanupInterval,
		Duration statsInterval, Duration completedRetention, Duration failedRetention, int cleanupBatchSize,
		long deadRowsWarning) {

	/**
	 * Dead rows from which the jobs table counts as not vacuumed, unless configured. Far above what
	 * autovacuum lets through on this table (it starts at 1,000 dead rows plus 1% of the live ones),
	 * and a floor so that a small, busy queue does not warn between two autovacuum runs.
	 */
	public static final long DEFAULT_DEAD_ROWS_WARNING = 100_000;

	/**
	 * How long the jobs table must have gone without a vacuum before its dead rows count as growing
	 * without one: ten autovacuum naps at the server's default {@code autovacuum_naptime}, so that a
	 * burst of finished jobs on a table autovacuum has just not reached yet does not warn.
	 */
	public static final Duration VACUUM_OVERDUE_AFTER = Duration.ofMinutes(10);

	public static final MaintenanceSettings DEFAULT = new MaintenanceSettings(Duration.ofSeconds(1),
			Duration.ofSeconds(15), Duration.ofMinutes(1), Duration.ofSeconds(15), Duration.ofHours(1),
			Duration.ofDays(7), 10_000, DEFAULT_DEAD_ROWS_WARNING);

	public MaintenanceSettings {
		SettingRules.positive("pgqueue.maintenance.promote-interval", promoteInterval);
		SettingRules.positive("pgqueue.maintenance.rescue-interval", rescueInterval);
		SettingRules.positive("pgqueue.maintenance.cleanup-interval", cleanupInterval);
		SettingRules.positive("pgqueue.maintenance.stats-interval", statsInterval);
		SettingRules.notNegative("pgqueue.retention.completed", completedRetention);
		SettingRules.notNegative("pgqueue.retention.failed", failedRetention);
		SettingRules.atLeastOne("pgqueue.maintenance.cleanup-batch-size", cleanupBatchSize);
		SettingRules.atLeastOne("pgqueue.maintenance.dead-rows-warning", deadRowsWarning);
	}

	public MaintenanceSettings withStatsInterval(Duration statsInterval) {
		return new MaintenanceSettings(this.promoteInterval, this.rescueInterval, this.cleanupInterval, statsInterval,
				this.completedRetention, this.failedRetention, this.cleanupBatchSize, this.deadRowsWarning);
	}

	public MaintenanceSettings withDeadRowsWarning(long deadRowsWarning) {
		return new MaintenanceSettings(this.promoteInterval, this.rescueInterval, this.cleanupInterval,
				this.statsInterval, this.completedRetention, this.failedRetention, this.cleanupBatchSize,
				deadRowsWarning);
	}

}
