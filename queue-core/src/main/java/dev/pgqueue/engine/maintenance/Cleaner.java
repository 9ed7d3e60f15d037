package dev.pgqueue.engine.maintenance;

import java.time.Duration;

import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.sql.HistoryRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.sql.RateRepository;
import dev.pgqueue.engine.sql.UniqueJobRepository;
import org.jspecify.annotations.Nullable;

/**
 * Prunes finished jobs past their retention, in batches, each its own short transaction that takes
 * a transaction-scoped advisory lock, so that one instance at a time deletes; and the unique keys
 * whose period ended (rows locked with {@code SKIP LOCKED}, so instances never wait on each other);
 * and the queues' history minutes past their retention (one short delete: the table holds a row per
 * queue and minute, a few thousand per queue).
 */
public final class Cleaner extends PeriodicService {

	private final MaintenanceRepository repository;

	private final UniqueJobRepository uniqueKeys;

	private final MaintenanceSettings settings;

	private final @Nullable HistoryRepository history;

	private final Duration historyRetention;

	private final @Nullable RateRepository rates;

	public Cleaner(MaintenanceRepository repository, UniqueJobRepository uniqueKeys, MaintenanceSettings settings) {
		this(repository, uniqueKeys, settings, null, Duration.ZERO, null);
	}

	/**
	 * @param history the queues' history, pruned too; {@code null} to leave it alone
	 * @param historyRetention how long history minutes are kept
	 */
	public Cleaner(MaintenanceRepository repository, UniqueJobRepository uniqueKeys, MaintenanceSettings settings,
			@Nullable HistoryRepository history, Duration historyRetention) {
		this(repository, uniqueKeys, settings, history, historyRetention, null);
	}

	/**
	 * @param history the queues' history, pruned too; {@code null} to leave it alone
	 * @param historyRetention how long history minutes are kept
	 * @param rates the rate limits' windows, whose idle per-key rows are deleted; {@code null} to leave
	 * them alone
	 */
	public Cleaner(MaintenanceRepository repository, UniqueJobRepository uniqueKeys, MaintenanceSettings settings,
			@Nullable HistoryRepository history, Duration historyRetention, @Nullable RateRepository rates) {
		super("cleaner", settings.cleanupInterval());
		this.repository = repository;
		this.uniqueKeys = uniqueKeys;
		this.settings = settings;
		this.history = history;
		this.historyRetention = historyRetention;
		this.rates = rates;
	}

	@Override
	protected void runOnce() {
		clean();
		pruneEndedKeys();
		pruneHistory();
		pruneIdleRateKeys();
	}

	/**
	 * Deletes the windows of per-key rate limits that granted nothing for a whole period: one row is
	 * made per key that ever started a job, and would otherwise stay. Returns how many.
	 */
	public int pruneIdleRateKeys() {
		return (this.rates != null) ? this.rates.pruneIdle(RateRepository.KEY_WINDOW_PREFIX) : 0;
	}

	/** Deletes the queues' history minutes past their retention; returns how many. */
	public int pruneHistory() {
		return (this.history != null) ? this.history.pruneOlderThan(this.historyRetention) : 0;
	}

	/** Deletes the unique keys whose period ended, in batches; returns how many. */
	public int pruneEndedKeys() {
		int batchSize = this.settings.cleanupBatchSize();
		int total = 0;
		int deleted;
		do {
			deleted = this.uniqueKeys.pruneEndedPeriods(batchSize);
			total += deleted;
		}
		while (deleted == batchSize);
		return total;
	}

	/**
	 * Prunes finished jobs past their retention, in batches, unless another instance is doing it.
	 * Returns how many were deleted.
	 */
	public int clean() {
		return Math.max(0, this.repository.pruneAllFinished(this.settings.completedRetention(),
				this.settings.failedRetention(), this.settings.cleanupBatchSize()));
	}

}
