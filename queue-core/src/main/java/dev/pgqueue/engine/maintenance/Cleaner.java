package dev.pgqueue.engine.maintenance;

import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.sql.MaintenanceRepository;

/**
 * Prunes finished jobs past their retention, in batches, each its own short transaction that takes
 * a transaction-scoped advisory lock, so that one instance at a time deletes.
 */
public final class Cleaner extends PeriodicService {

	private final MaintenanceRepository repository;

	private final MaintenanceSettings settings;

	public Cleaner(MaintenanceRepository repository, MaintenanceSettings settings) {
		super("cleaner", settings.cleanupInterval());
		this.repository = repository;
		this.settings = settings;
	}

	@Override
	protected void runOnce() {
		clean();
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
