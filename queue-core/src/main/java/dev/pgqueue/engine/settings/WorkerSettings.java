package dev.pgqueue.engine.settings;

import java.time.Duration;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.engine.service.EngineThreads;


/**
 * Settings every poller of this application shares.
 *
 * @param shutdownTimeout how long running jobs may take to finish once stopping begins
 * @param virtualThreads whether pollers and workers run on virtual threads
 * @param deleteCompleted whether a completed job is deleted as it finishes (completed retention of
 * zero) rather than kept
 */
public record WorkerSettings(Duration shutdownTimeout, boolean virtualThreads, boolean deleteCompleted) {

	public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(20);

	/** Every default: platform threads, completed jobs kept. */
	public static final WorkerSettings DEFAULT = new WorkerSettings(DEFAULT_SHUTDOWN_TIMEOUT, false, false);

	public WorkerSettings {
		if (shutdownTimeout == null || shutdownTimeout.isNegative()) {
			throw new InvalidQueueConfigurationException("pgqueue.shutdown-timeout",
					"pgqueue.shutdown-timeout must not be negative, was " + shutdownTimeout,
					"Set pgqueue.shutdown-timeout to a duration such as 20s, below "
							+ "spring.lifecycle.timeout-per-shutdown-phase.");
		}
	}

	/** Makes the threads of pollers, workers and keepers, of the configured kind. */
	public EngineThreads threads() {
		return new EngineThreads(this.virtualThreads);
	}

}
