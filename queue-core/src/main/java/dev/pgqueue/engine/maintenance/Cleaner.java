package dev.pgqueue.engine.maintenance;

import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.sql.UniqueJobRepository;

/**
 * Prunes finished jobs past their retention, in batches, each its own short transaction that takes
 * a transaction-scoped advisory lock, so that one instance at a time deletes; and the unique keys
 * whose period ended (rows locked with {@code SKIP LOCKED}, so instances never wait on each other).
 */
public final class Cleaner extends PeriodicService {

	private final MaintenanceRepository repository;

	private final UniqueJobRepository uniqueKeys;

	private final MaintenanceSettings settings;

	public Cleaner(MaintenanceRepository repository, UniqueJobRepository uniqueKeys, MaintenanceSettings settings) {
		super("cleaner", settings.cleanupInterval());
		this.repository = repository;
		this.uniqueKeys = uniqueKeys;
		this.settings = settings;
	}

	@Override
	protected void runOnce() {
		clean();
		pruneEndedKeys();
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
