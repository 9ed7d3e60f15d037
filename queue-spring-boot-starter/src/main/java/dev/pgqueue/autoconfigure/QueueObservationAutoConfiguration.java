package dev.pgqueue.autoconfigure;

import dev.pgqueue.observation.EnqueueObservationConvention;
import dev.pgqueue.observation.JobProcessingObservationConvention;
import dev.pgqueue.observation.QueueObservations;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * Observes enqueues and attempts ({@code pgqueue.enqueue}, {@code pgqueue.process}) on the
 * application's {@link ObservationRegistry}: by default when the application traces (it has a
 * Micrometer Tracing {@code Tracer}), whose auto-configuration gives the registry the handlers that
 * write the trace headers into an enqueue and read them back from a job; with
 * {@code pgqueue.observations.enabled=true} on any registry; never with {@code false}.
 */
@AutoConfiguration(after = ObservationAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration",
		before = QueueAutoConfiguration.class)
@ConditionalOnClass({ ObservationRegistry.class, ObservationAutoConfiguration.class, QueueObservations.class })
@ConditionalOnBean(ObservationRegistry.class)
@Conditional(QueueObservationAutoConfiguration.ObservationsWanted.class)
public final class QueueObservationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	QueueObservations pgqueueObservations(ObservationRegistry registry,
			ObjectProvider<EnqueueObservationConvention> enqueueConvention,
			ObjectProvider<JobProcessingObservationConvention> processingConvention) {
		return new QueueObservations(registry, enqueueConvention.getIfUnique(), processingConvention.getIfUnique());
	}

	/**
	 * Turned on, or left unset in an application that traces. Without tracing, each observation would
	 * only add timers beside pgqueue's own metrics, at about 2 µs per job with a meter handler.
	 */
	static final class ObservationsWanted extends AnyNestedCondition {

		ObservationsWanted() {
			super(ConfigurationPhase.REGISTER_BEAN);
		}

		@ConditionalOnBooleanProperty(name = "pgqueue.observations.enabled")
		static final class TurnedOn {

		}

		@ConditionalOnBean(type = "io.micrometer.tracing.Tracer")
		@ConditionalOnProperty(name = "pgqueue.observations.enabled", matchIfMissing = true)
		static final class Traced {

		}

	}

}
