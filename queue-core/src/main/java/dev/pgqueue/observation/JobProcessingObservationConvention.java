package dev.pgqueue.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/** Names and key values of {@link QueueObservation#PROCESS} observations; a bean of it replaces the default. */
public interface JobProcessingObservationConvention extends ObservationConvention<JobProcessingContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof JobProcessingContext;
	}

}
