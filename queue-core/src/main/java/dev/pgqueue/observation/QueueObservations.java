package dev.pgqueue.observation;

import java.util.Map;
import java.util.function.Supplier;

import dev.pgqueue.JobOutcome;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Makes pgqueue's observations on an {@link ObservationRegistry}, with the application's conventions
 * when it has its own. With {@link #NONE}, or a registry without handlers, every observation is a
 * no-op and no context is even created. Tracing needs nothing here: a registry with Micrometer
 * Tracing's propagating handlers writes the trace headers into an enqueue's carrier and reads them
 * back from a job's, with whatever propagator the tracer uses (W3C {@code traceparent} by default
 * with OpenTelemetry).
 */
public class QueueObservations {

	/** No observations. */
	public static final QueueObservations NONE = new QueueObservations(ObservationRegistry.NOOP);

	private static final EnqueueObservationConvention DEFAULT_ENQUEUE = new DefaultEnqueueObservationConvention();

	private static final JobProcessingObservationConvention DEFAULT_PROCESSING = new DefaultJobProcessingObservationConvention();

	private final ObservationRegistry registry;

	private final @Nullable EnqueueObservationConvention enqueueConvention;

	private final @Nullable JobProcessingObservationConvention processingConvention;

	/** Observations with the default conventions (or those registered with the registry). */
	public QueueObservations(ObservationRegistry registry) {
		this(registry, null, null);
	}

	/**
	 * @param enqueueConvention replaces the default for enqueues; {@code null} for the default
	 * @param processingConvention replaces the default for attempts; {@code null} for the default
	 */
	public QueueObservations(ObservationRegistry registry, @Nullable EnqueueObservationConvention enqueueConvention,
			@Nullable JobProcessingObservationConvention processingConvention) {
		this.registry = registry;
		this.enqueueConvention = enqueueConvention;
		this.processingConvention = processingConvention;
	}

	/**
	 * Starts the observation of an enqueue, whose context is made only when observations are on.
	 * Read the headers to store with {@link #traceContext}.
	 */
	public Observation startEnqueue(Supplier<EnqueueContext> context) {
		return Observation.createNotStarted(this.enqueueConvention, DEFAULT_ENQUEUE, context, this.registry).start();
	}

	/** Starts the observation of one attempt, whose context is made only when observations are on. */
	public Observation startProcessing(Supplier<JobProcessingContext> context) {
		return Observation.createNotStarted(this.processingConvention, DEFAULT_PROCESSING, context, this.registry)
			.start();
	}

	/** Stops an attempt's observation with what became of it and the failure, if any. */
	public void stopProcessing(Observation observation, JobOutcome outcome, @Nullable Throwable failure) {
		if (observation.isNoop()) {
			return;
		}
		if (observation.getContext() instanceof JobProcessingContext context) {
			context.outcome(outcome);
		}
		if (failure != null) {
			observation.error(failure);
		}
		observation.stop();
	}

	/**
	 * The trace headers a started enqueue observation's handlers wrote into its carrier; empty without
	 * tracing.
	 */
	public static Map<String, String> traceContext(Observation enqueue) {
		if (!enqueue.isNoop() && enqueue.getContext() instanceof EnqueueContext context) {
			Map<String, String> carrier = context.getCarrier();
			if (carrier != null && !carrier.isEmpty()) {
				return Map.copyOf(carrier);
			}
		}
		return Map.of();
	}

}
