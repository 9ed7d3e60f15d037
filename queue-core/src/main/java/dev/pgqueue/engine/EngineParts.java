package dev.pgqueue.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

import dev.pgqueue.AdminCaller;
import dev.pgqueue.InDoubtJobResolver;
import dev.pgqueue.JobEvent;
import dev.pgqueue.JobInterceptor;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.HistorySettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.ScheduleSettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.observation.QueueObservations;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/**
 * What every database's part of an engine is built from, as its {@link QueueEngineBuilder} was told:
 * the settings and collaborators the databases share. See the builder's setters for each.
 */
record EngineParts(EngineSettings settings, QueueCatalog queues, JobHandlerRegistry handlers, JsonMapper jsonMapper,
		QueueMetrics metrics, QueueObservations observations, @Nullable Executor workerExecutor,
		@Nullable InDoubtJobResolver inDoubtJobResolver, AdminCaller adminCaller, boolean processing,
		boolean claimFloors, @Nullable QueueSignals signals, @Nullable QueuePauses pauses, @Nullable JobRepository jobs,
		boolean pauseNotifications, Duration pollingHeartbeat, ScheduleSettings schedules, HistorySettings history,
		List<JobInterceptor> interceptors, @Nullable Consumer<JobEvent> events) {
}
