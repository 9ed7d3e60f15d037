package dev.pgqueue.observation;

import java.util.Locale;

import dev.pgqueue.Job;
import dev.pgqueue.JobOutcome;
import dev.pgqueue.observation.QueueObservation.JobKeyNames;
import io.micrometer.common.KeyValues;

/**
 * The default {@link JobProcessingObservationConvention}: named {@value #NAME}, its span
 * {@code process <kind>}, with the queue, kind, mode and outcome as low-cardinality key values, and
 * the job's id and attempt as high-cardinality ones.
 */
public class DefaultJobProcessingObservationConvention implements JobProcessingObservationConvention {

	/** The observation's name, and so that of the timer a meter handler makes of it. */
	public static final String NAME = "pgqueue.process";

	/** The outcome's value until the attempt is over. */
	static final String UNKNOWN = "unknown";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(JobProcessingContext context) {
		return "process " + context.job().kind();
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(JobProcessingContext context) {
		Job job = context.job();
		JobOutcome outcome = context.outcome();
		return KeyValues.of(JobKeyNames.QUEUE.withValue(job.queue()), JobKeyNames.KIND.withValue(job.kind()),
				JobKeyNames.MODE.withValue(DefaultEnqueueObservationConvention.mode(context.mode())),
				JobKeyNames.OUTCOME.withValue((outcome != null) ? outcome.name().toLowerCase(Locale.ROOT) : UNKNOWN));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(JobProcessingContext context) {
		Job job = context.job();
		return KeyValues.of(JobKeyNames.JOB_ID.withValue(job.id().toString()),
				JobKeyNames.ATTEMPT.withValue(Integer.toString(job.attempt())));
	}

}
