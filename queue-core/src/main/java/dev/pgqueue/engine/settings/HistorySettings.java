package dev.pgqueue.engine.settings;

import java.time.Duration;

/**
 * The per-minute history of each queue ({@code pgqueue_queue_history}): whether this application
 * records it, how long the cleaner keeps it, and how often this application adds what it counted.
 *
 * @param enabled whether attempts are counted and written; when false nothing is recorded or written
 * (rows past the retention are still deleted)
 * @param retention how long minutes are kept
 * @param flushInterval time between two writes of what this application counted
 */
public record HistorySettings(boolean enabled, Duration retention, Duration flushInterval) {

	/** How long minutes are kept, unless configured: long enough to compare today with yesterday. */
	public static final Duration DEFAULT_RETENTION = Duration.ofDays(2);

	/** Time between two writes: one upsert per instance every ten seconds. */
	public static final Duration DEFAULT_FLUSH_INTERVAL = Duration.ofSeconds(10);

	public static final HistorySettings DEFAULT = new HistorySettings(true, DEFAULT_RETENTION,
			DEFAULT_FLUSH_INTERVAL);

	/** Records nothing. */
	public static final HistorySettings OFF = new HistorySettings(false, DEFAULT_RETENTION, DEFAULT_FLUSH_INTERVAL);

	public HistorySettings {
		SettingRules.positive("pgqueue.history.retention", retention);
		SettingRules.positive("pgqueue.history.flush-interval", flushInterval);
	}

	public HistorySettings(boolean enabled, Duration retention) {
		this(enabled, retention, DEFAULT_FLUSH_INTERVAL);
	}

}
