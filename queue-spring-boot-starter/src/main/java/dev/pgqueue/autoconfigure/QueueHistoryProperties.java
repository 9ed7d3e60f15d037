package dev.pgqueue.autoconfigure;

import java.time.Duration;

import dev.pgqueue.engine.settings.HistorySettings;

/** The queues' per-minute history, under {@code pgqueue.history}. */
public class QueueHistoryProperties {

	/**
	 * Whether each instance counts its queues' attempts, waits and run times per minute and adds
	 * them to the history table every 10 seconds, for the dashboard's charts and JobAdmin.history.
	 * When false nothing is recorded or written; minutes past the retention are still pruned.
	 */
	private boolean enabled = HistorySettings.DEFAULT.enabled();

	/** How long the per-minute history is kept before the cleaner prunes it. */
	private Duration retention = HistorySettings.DEFAULT_RETENTION;

	/** The queues' per-minute history settings, validated; errors name the key. */
	HistorySettings toHistorySettings() {
		return new HistorySettings(this.enabled, this.retention);
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Duration getRetention() {
		return this.retention;
	}

	public void setRetention(Duration retention) {
		this.retention = retention;
	}

}
