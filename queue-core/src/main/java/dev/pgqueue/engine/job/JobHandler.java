package dev.pgqueue.engine.job;

import java.time.Duration;

import dev.pgqueue.ExternalEffect;
import dev.pgqueue.Job;
import dev.pgqueue.JobContext;
import dev.pgqueue.engine.settings.RateLimit;
import org.jspecify.annotations.Nullable;

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

	/**
	 * Runs the job and returns the step it leaves to run outside the database once its transaction
	 * is prepared (queues with two-phase commit), or {@code null} for none. Handlers without such a
	 * step keep the default, which is {@link #handle}.
	 * @throws Throwable whatever the listener threw, unwrapped
	 */
	default @Nullable ExternalEffect handleForEffect(Job job) throws Throwable {
		handle(job);
		return null;
	}

	/**
	 * Runs the job and returns what its listener returned: the external step of a two-phase queue, or
	 * a value to store with the completed job as its output, already written as JSON. Handlers whose
	 * listeners return nothing keep the default, which is {@link #handleForEffect}.
	 * @throws Throwable whatever the listener threw, unwrapped
	 */
	default Returned handleForResult(Job job) throws Throwable {
		ExternalEffect effect = handleForEffect(job);
		return (effect != null) ? new Returned(effect, null) : Returned.NOTHING;
	}

	/**
	 * {@link #handleForResult(Job)}, for a listener that may take the job's {@link JobContext}; the
	 * default ignores it.
	 * @throws Throwable whatever the listener threw, unwrapped
	 */
	default Returned handleForResult(Job job, JobContext context) throws Throwable {
		return handleForResult(job);
	}

	/**
	 * What a listener returned.
	 *
	 * @param effect the step to run once the job's transaction is prepared, or {@code null}
	 * @param output the value to store as the job's output, as JSON text, or {@code null} for none
	 */
	record Returned(@Nullable ExternalEffect effect, @Nullable String output) {

		/** A listener that returned nothing to keep. */
		public static final Returned NOTHING = new Returned(null, null);

	}

	/** Whether {@link #handleForEffect} may return an external step: only two-phase queues run one. */
	default boolean hasExternalEffect() {
		return false;
	}

	/** Most jobs of this kind running at once across every instance; 0 for no limit. */
	default int maxRunning() {
		return 0;
	}

	/** How long one attempt may run, overriding the queue's timeout; {@code null} for the queue's. */
	default @Nullable Duration timeout() {
		return null;
	}

	/** At most so many jobs of this kind start per period across every instance; {@code null} for no limit. */
	default @Nullable RateLimit rateLimit() {
		return null;
	}

	/** Units of each rate limit one job of this kind uses when it starts. */
	default int rateWeight() {
		return 1;
	}

	/** Where the handler is defined, for messages (for example the bean method). */
	String description();

}
