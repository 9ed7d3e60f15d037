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
 * @param attemptHistory how many attempts each job keeps in its history (the newest ones, read oldest first); 0 keeps none
 * @param maxSnoozes how many times a job may snooze; snoozing once more fails it
 * @param maxOutputBytes largest output a listener may return, in bytes of UTF-8 JSON
 */
public record WorkerSettings(Duration shutdownTimeout, boolean virtualThreads, boolean deleteCompleted,
		int attemptHistory, int maxSnoozes, long maxOutputBytes) {

	public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(20);

	/** Attempts each job keeps in its history unless configured. */
	public static final int DEFAULT_ATTEMPT_HISTORY = 20;

	/** Times a job may snooze unless configured. */
	public static final int DEFAULT_MAX_SNOOZES = 100;

	/** Largest output kept unless configured: 64 KiB of JSON. */
	public static final long DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;

	/** Every default: platform threads, completed jobs kept. */
	public static final WorkerSettings DEFAULT = new WorkerSettings(DEFAULT_SHUTDOWN_TIMEOUT, false, false);

	/** These settings, with the default attempt history, snooze bound and output limit. */
	public WorkerSettings(Duration shutdownTimeout, boolean virtualThreads, boolean deleteCompleted) {
		this(shutdownTimeout, virtualThreads, deleteCompleted, DEFAULT_ATTEMPT_HISTORY, DEFAULT_MAX_SNOOZES,
				DEFAULT_MAX_OUTPUT_BYTES);
	}

	public WorkerSettings {
		if (attemptHistory < 0) {
			throw new InvalidQueueConfigurationException("pgqueue.attempt-history",
					"pgqueue.attempt-history must be zero or more, was " + attemptHistory,
					"Set pgqueue.attempt-history to how many attempts each job keeps (20 by default), or 0 to keep none.");
		}
		if (maxSnoozes < 0) {
			throw new InvalidQueueConfigurationException("pgqueue.max-snoozes",
					"pgqueue.max-snoozes must be zero or more, was " + maxSnoozes,
					"Set pgqueue.max-snoozes to how many times a job may snooze (100 by default), or 0 to fail a "
							+ "job that snoozes.");
		}
		if (maxOutputBytes < 1) {
			throw new InvalidQueueConfigurationException("pgqueue.max-output-size",
					"pgqueue.max-output-size must be positive, was " + maxOutputBytes + " bytes",
					"Set pgqueue.max-output-size to a size such as 64KB or 1MB.");
		}
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
