package dev.pgqueue.engine.maintenance;

import java.time.Duration;

import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.sql.MaintenanceRepository;

/**
 * Makes scheduled jobs (delays and retries) available once they are due, in batches. It uses
 * {@code SKIP LOCKED}, so every instance may run it at once without waiting on the others.
 */
public final class Promoter extends PeriodicService {

	private static final int BATCH = 10_000;

	private final MaintenanceRepository repository;

	public Promoter(MaintenanceRepository repository, Duration interval) {
		super("promoter", interval);
		this.repository = repository;
	}

	@Override
	protected void runOnce() {
		promote();
	}

	/** Makes due scheduled jobs available; returns how many. */
	public int promote() {
		int total = 0;
		int promoted;
		do {
			promoted = this.repository.promoteDue(BATCH);
			total += promoted;
		}
		while (promoted == BATCH);
		return total;
	}

}
