package dev.pgqueue.autoconfigure;

import java.util.concurrent.Executor;

import dev.pgqueue.AdminCaller;
import dev.pgqueue.InDoubtJobResolver;
import dev.pgqueue.JobInterceptor;
import dev.pgqueue.engine.QueueEngineBuilder;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.observation.QueueObservations;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationEventPublisher;

/**
 * What every engine of the application shares, whether it is the only one or one of several shards:
 * the queues and listeners, the JSON mapper, observations, the interceptors and events,
 * and the settings that are not about one database.
 */
record EngineParts(QueueProperties properties, QueueCatalog queues, JobHandlerRegistry handlers,
		ObjectProvider<JsonMapper> jsonMapper, ObjectProvider<QueueObservations> observations, ObjectProvider<InDoubtJobResolver> inDoubtJobResolver,
		ObjectProvider<AdminCaller> caller, @Nullable Executor workerExecutor, ObjectProvider<JobInterceptor> interceptors,
		ApplicationEventPublisher events) {

	/** The builder with the shared parts set; what is about one database is the caller's. */
	QueueEngineBuilder configure(QueueEngineBuilder builder) {
		return builder.queues(this.queues)
			.handlers(this.handlers)
			.jsonMapper(this.jsonMapper.getIfAvailable(JsonMapper::new))
			.observations(this.observations.getIfAvailable(() -> QueueObservations.NONE))
			.inDoubtJobResolver(this.inDoubtJobResolver.getIfUnique())
			.adminCaller(this.caller.getIfUnique(() -> AdminCaller.SYSTEM))
			.workerExecutor(this.workerExecutor)
			.processing(this.properties.isEnabled())
			.history(this.properties.toHistorySettings())
			.interceptors(this.interceptors.orderedStream().toList())
			.events(this.properties.getEvents().isEnabled() ? this.events::publishEvent : null);
	}

}
