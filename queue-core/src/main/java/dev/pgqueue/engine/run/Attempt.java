package dev.pgqueue.engine.run;

import dev.pgqueue.ExternalEffect;
import dev.pgqueue.Job;
import dev.pgqueue.engine.job.JobHandler;
import org.jspecify.annotations.Nullable;

/**
 * One run of a job's handler: what became of it and how long the handler took.
 * @param job the job as claimed
 * @param outcome what becomes of the job
 * @param nanos how long the handler ran
 * @param timedOut whether the attempt ran past its time limit
 * @param effect the step the handler left to run once the job's transaction is prepared (two-phase
 * queues), or {@code null}
 * @param output what the listener returned, as JSON text, to be stored with the completed job; or
 * {@code null}
 */
public record Attempt(Job job, Outcome outcome, long nanos, boolean timedOut, @Nullable ExternalEffect effect,
		@Nullable String output) {

	public Attempt(Job job, Outcome outcome, long nanos) {
		this(job, outcome, nanos, false, null, null);
	}

	public Attempt(Job job, Outcome outcome, long nanos, boolean timedOut) {
		this(job, outcome, nanos, timedOut, null, null);
	}

	Attempt(Job job, Outcome outcome, long nanos, boolean timedOut, JobHandler.Returned returned) {
		this(job, outcome, nanos, timedOut, returned.effect(), returned.output());
	}

}
