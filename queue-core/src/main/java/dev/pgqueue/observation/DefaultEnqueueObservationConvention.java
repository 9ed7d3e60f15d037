package dev.pgqueue.observation;

import java.util.Locale;

import dev.pgqueue.QueueMode;
import dev.pgqueue.observation.QueueObservation.JobKeyNames;
import io.micrometer.common.KeyValues;
import org.jspecify.annotations.Nullable;

/**
 * The default {@link EnqueueObservationConvention}: named {@value #NAME}, its span
 * {@code enqueue <kind>}, with the queue, kind and mode as low-cardinality key values (or
 * {@value QueueObservation#SEVERAL} for an {@code enqueueAll} spanning several), and the job's id and
 * the number of jobs as high-cardinality ones.
 */
public class DefaultEnqueueObservationConvention implements EnqueueObservationConvention {

	/** The observation's name, and so that of the timer a meter handler makes of it. */
	public static final String NAME = "pgqueue.enqueue";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(EnqueueContext context) {
		return "enqueue " + orSeveral(context.kind());
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(EnqueueContext context) {
		return KeyValues.of(JobKeyNames.QUEUE.withValue(orSeveral(context.queue())),
				JobKeyNames.KIND.withValue(orSeveral(context.kind())), JobKeyNames.MODE.withValue(mode(context.mode())));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(EnqueueContext context) {
		KeyValues count = KeyValues.of(JobKeyNames.JOB_COUNT.withValue(Integer.toString(context.jobCount())));
		return (context.jobId() != null) ? count.and(JobKeyNames.JOB_ID.withValue(context.jobId().toString())) : count;
	}

	static String mode(@Nullable QueueMode mode) {
		return (mode != null) ? mode.name().toLowerCase(Locale.ROOT) : QueueObservation.SEVERAL;
	}

	private static String orSeveral(@Nullable String value) {
		return (value != null) ? value : QueueObservation.SEVERAL;
	}

}
