package dev.pgqueue.autoconfigure;

import java.time.Duration;

import dev.pgqueue.engine.settings.MaintenanceSettings;

/** The background services' timings, under {@code pgqueue.maintenance}. */
public class QueueMaintenanceProperties {

	/**
	 * How often delayed jobs and retries that have become due are made available to pollers.
	 * Bounds the extra latency of a delayed job.
	 */
	private Duration promoteInterval = MaintenanceSettings.DEFAULT.promoteInterval();

	/**
	 * How often leased jobs whose lease expired (their worker died) are looked for and returned to
	 * the queue.
	 */
	private Duration rescueInterval = MaintenanceSettings.DEFAULT.rescueInterval();

	/**
	 * How often finished jobs past their retention are pruned (by one instance at a time).
	 */
	private Duration cleanupInterval = MaintenanceSettings.DEFAULT.cleanupInterval();

	/**
	 * How often queue depth and the age of the oldest due job are read for metrics and health.
	 */
	private Duration statsInterval = MaintenanceSettings.DEFAULT.statsInterval();

	/**
	 * Most finished jobs deleted by one prune statement.
	 */
	private int cleanupBatchSize = MaintenanceSettings.DEFAULT.cleanupBatchSize();

	/**
	 * Dead rows in the jobs table from which the stats reader warns that they grow without
	 * vacuum, when they also outnumber the live rows and the table was not vacuumed in the last
	 * ten minutes.
	 */
	private long deadRowsWarning = MaintenanceSettings.DEFAULT.deadRowsWarning();

	/**
	 * The background services' settings, validated.
	 * @param retention how long finished jobs are kept, which the cleaner applies
	 */
	MaintenanceSettings toMaintenanceSettings(QueueRetentionProperties retention) {
		return new MaintenanceSettings(this.promoteInterval, this.rescueInterval, this.cleanupInterval,
				this.statsInterval, retention.getCompleted(), retention.getFailed(), this.cleanupBatchSize,
				this.deadRowsWarning);
	}

	public Duration getPromoteInterval() {
		return this.promoteInterval;
	}

	public void setPromoteInterval(Duration promoteInterval) {
		this.promoteInterval = promoteInterval;
	}

	public Duration getRescueInterval() {
		return this.rescueInterval;
	}

	public void setRescueInterval(Duration rescueInterval) {
		this.rescueInterval = rescueInterval;
	}

	public Duration getCleanupInterval() {
		return this.cleanupInterval;
	}

	public void setCleanupInterval(Duration cleanupInterval) {
		this.cleanupInterval = cleanupInterval;
	}

	public Duration getStatsInterval() {
		return this.statsInterval;
	}

	public void setStatsInterval(Duration statsInterval) {
		this.statsInterval = statsInterval;
	}

	public int getCleanupBatchSize() {
		return this.cleanupBatchSize;
	}

	public void setCleanupBatchSize(int cleanupBatchSize) {
		this.cleanupBatchSize = cleanupBatchSize;
	}

	public long getDeadRowsWarning() {
		return this.deadRowsWarning;
	}

	public void setDeadRowsWarning(long deadRowsWarning) {
		this.deadRowsWarning = deadRowsWarning;
	}

}
