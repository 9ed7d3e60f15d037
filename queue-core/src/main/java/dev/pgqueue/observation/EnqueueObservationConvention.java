package dev.pgqueue.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/** Names and key values of {@link QueueObservation#ENQUEUE} observations; a bean of it replaces the default. */
public interface EnqueueObservationConvention extends ObservationConvention<EnqueueContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof EnqueueContext;
	}

}
