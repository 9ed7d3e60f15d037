package dev.pgqueue.engine;

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

	/** Where the handler is defined, for messages (for example the bean method). */
	String description();

}
