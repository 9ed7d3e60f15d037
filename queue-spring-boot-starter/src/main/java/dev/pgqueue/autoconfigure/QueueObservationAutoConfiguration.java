package dev.pgqueue.autoconfigure;

import dev.pgqueue.observation.EnqueueObservationConvention;
import dev.pgqueue.observation.JobProcessingObservationConvention;
import dev.pgqueue.observation.QueueObservations;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Observes enqueues and attempts ({@code pgqueue.enqueue}, {@code pgqueue.process}) on the
 * application's {@link ObservationRegistry}. With Micrometer Tracing, Spring Boot's tracing
 * auto-configuration gives that registry the handlers that write the trace headers into an enqueue
 * and read them back from a job, so the job's processing continues the enqueuing trace.
 */
@AutoConfiguration(after = ObservationAutoConfiguration.class, before = QueueAutoConfiguration.class)
@ConditionalOnClass({ ObservationRegistry.class, ObservationAutoConfiguration.class, QueueObservations.class })
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnBooleanProperty(name = "pgqueue.observations.enabled", matchIfMissing = true)
public final class QueueObservationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	QueueObservations pgqueueObservations(ObservationRegistry registry,
			ObjectProvider<EnqueueObservationConvention> enqueueConvention,
			ObjectProvider<JobProcessingObservationConvention> processingConvention) {
		return new QueueObservations(registry, enqueueConvention.getIfUnique(), processingConvention.getIfUnique());
	}

}
