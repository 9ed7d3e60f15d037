package dev.pgqueue.engine.maintenance;

import java.time.Duration;
import java.util.List;

import dev.pgqueue.JobState;
import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository.RescuedJob;
import dev.pgqueue.metrics.QueueMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Returns leased jobs whose lease expired (their worker died, hung or lost the database) to the
 * queue, counting the attempt, or fails them when it was their last. It uses {@code SKIP LOCKED}, so
 * every instance may run it at once.
 */
public final class Rescuer extends PeriodicService {

	private static final Logger logger = LoggerFactory.getLogger(Rescuer.class);

	private static final int BATCH = 1_000;

	private final MaintenanceRepository repository;

	private final QueueMetrics metrics;

	/** Entries of attempt history each job keeps. */
	private final int attemptHistory;

	public Rescuer(MaintenanceRepository repository, QueueMetrics metrics, Duration interval) {
		this(repository, metrics, interval, WorkerSettings.DEFAULT_ATTEMPT_HISTORY);
	}

	public Rescuer(MaintenanceRepository repository, QueueMetrics metrics, Duration interval, int attemptHistory) {
		super("rescuer", interval);
		this.repository = repository;
		this.metrics = metrics;
		this.attemptHistory = attemptHistory;
	}

	@Override
	protected void runOnce() {
		rescue();
	}

	/** Rescues jobs whose lease expired; returns how many. */
	public int rescue() {
		int total = 0;
		List<RescuedJob> rescued;
		do {
			rescued = this.repository.rescueExpired(BATCH, this.attemptHistory);
			for (RescuedJob job : rescued) {
				this.metrics.jobRescued(job.queue(), job.kind());
				if (job.state() == JobState.FAILED) {
					logger.error("Job {} of kind '{}' in queue '{}' failed for good: the lease of its last attempt ({}) "
							+ "expired before it finished", job.publicId(), job.kind(), job.queue(), job.attempt());
				}
				else {
					logger.warn("Job {} of kind '{}' in queue '{}' was rescued: the lease of attempt {} expired "
							+ "(its worker died, hung or lost the database); it will run again", job.publicId(),
							job.kind(), job.queue(), job.attempt());
				}
			}
			total += rescued.size();
		}
		while (rescued.size() == BATCH);
		return total;
	}

}
