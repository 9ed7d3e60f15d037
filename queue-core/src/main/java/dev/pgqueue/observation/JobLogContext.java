package dev.pgqueue.observation;

import dev.pgqueue.Job;
import org.slf4j.MDC;

/**
 * The MDC entries of a running job, set on the listener's thread while the listener runs, so that
 * every line it logs names the job: {@value #JOB_ID}, {@value #KIND}, {@value #QUEUE} and
 * {@value #ATTEMPT}.
 */
public final class JobLogContext {

	/** The job's public id. */
	public static final String JOB_ID = "pgqueue.job.id";

	/** The job's kind. */
	public static final String KIND = "pgqueue.job.kind";

	/** The job's queue. */
	public static final String QUEUE = "pgqueue.job.queue";

	/** The number of the attempt, 1 on the first run. */
	public static final String ATTEMPT = "pgqueue.job.attempt";

	private JobLogContext() {
	}

	/** Puts the job's entries in the current thread's MDC. */
	public static void put(Job job) {
		MDC.put(JOB_ID, job.id().toString());
		MDC.put(KIND, job.kind());
		MDC.put(QUEUE, job.queue());
		MDC.put(ATTEMPT, Integer.toString(job.attempt()));
	}

	/** Removes the job's entries from the current thread's MDC. */
	public static void clear() {
		MDC.remove(JOB_ID);
		MDC.remove(KIND);
		MDC.remove(QUEUE);
		MDC.remove(ATTEMPT);
	}

}
