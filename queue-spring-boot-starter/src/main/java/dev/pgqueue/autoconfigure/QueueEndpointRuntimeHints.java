package dev.pgqueue.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * Lets Jackson write the Actuator answers in a native image: the endpoint's descriptors and the info
 * entry. Spring Boot registers the declared return type of each operation, which for the operations
 * answering one of several descriptors is only {@code OperationResponseBody}, and nothing for the
 * values of the info endpoint.
 */
class QueueEndpointRuntimeHints implements RuntimeHintsRegistrar {

	static final Class<?>[] ANSWERS = { QueuesDescriptor.class, JobsDescriptor.class, JobDescriptor.class,
			HistoryDescriptor.class, KindsDescriptor.class, SchedulesDescriptor.class,
			ActionDescriptors.JobActionDescriptor.class, ActionDescriptors.BulkActionDescriptor.class,
			ActionDescriptors.QueueActionDescriptor.class, ActionDescriptors.RetriedDescriptor.class,
			ActionDescriptors.ScheduleActionDescriptor.class, QueueInfoContributor.PgqueueInfo.class };

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		new BindingReflectionHintsRegistrar().registerReflectionHints(hints.reflection(), ANSWERS);
	}

}
