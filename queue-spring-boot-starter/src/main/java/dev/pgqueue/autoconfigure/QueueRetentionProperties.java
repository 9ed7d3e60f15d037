package dev.pgqueue.autoconfigure;

import java.time.Duration;

import dev.pgqueue.engine.settings.MaintenanceSettings;

/** How long finished jobs are kept, under {@code pgqueue.retention}. */
public class QueueRetentionProperties {

	/**
	 * How long completed jobs are kept before they are pruned. Zero deletes a completed job as it
	 * finishes.
	 */
	private Duration completed = MaintenanceSettings.DEFAULT.completedRetention();

	/**
	 * How long failed jobs are kept, with their last error, before they are pruned; cancelled jobs
	 * too.
	 */
	private Duration failed = MaintenanceSettings.DEFAULT.failedRetention();

	public Duration getCompleted() {
		return this.completed;
	}

	public void setCompleted(Duration completed) {
		this.completed = completed;
	}

	public Duration getFailed() {
		return this.failed;
	}

	public void setFailed(Duration failed) {
		this.failed = failed;
	}

}
