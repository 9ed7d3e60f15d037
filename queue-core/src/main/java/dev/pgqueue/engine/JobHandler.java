package dev.pgqueue.engine;

import java.time.Duration;

import dev.pgqueue.Job;

/** Runs jobs of one kind; {@code @JobListener} methods are adapted to this. */
public interface JobHandler {

	/** Kind of job handled. */
	String kind();

	/** Queue whose pollers run this kind. */
	String queue();

	/**
	 * Runs the job; returning normally completes it.
	 * @throws Throwable whatever the listener threw, unwrapped
	 */
	void handle(Job job) throws Throwable;

	/** Most jobs of this kind running at once across every instance; 0 for no limit. */
	default int maxRunning() {
		return 0;
	}

	/** How long one attempt may run, overriding the queue's timeout; {@code null} for the queue's. */
	default Duration timeout() {
		return null;
	}

	/** Where the handler is defined, for messages (for example the bean method). */
	String description();

}
