package dev.pgqueue.benchmark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import dev.pgqueue.ExternalEffect;
import dev.pgqueue.Job;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobEvent;
import dev.pgqueue.JobInterceptor;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.NotificationListener;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.QueueEngineBuilder;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.JobStatements;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.SchemaName;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * The engine as the starter builds it ({@link QueueEngine}) but without Spring Boot: one queue with
 * one handler, on the pool a run gives it. Close it to stop its pollers.
 */
final class PgqueueEngine implements AutoCloseable {

	private static final ExternalEffect NO_EFFECT = () -> {
	};

	private final JobHandlerRegistry handlers = new JobHandlerRegistry();

	private final JsonMapper jsonMapper = JsonMapper.builder().build();

	private final DataSource dataSource;

	private final SchemaName schema;

	private final QueueSettings settings;

	private final WorkerSettings workerSettings;

	private final QueueMetrics metrics;

	/** The engines of the pollers, one each. */
	private final List<QueueEngine> instances = new ArrayList<>();

	/** The engines of the clients, one each. */
	private final List<QueueEngine> clients = new ArrayList<>();

	/** The engines of the background services. */
	private final List<QueueEngine> services = new ArrayList<>();

	private boolean claimFloors = true;

	private List<JobInterceptor> interceptors = List.of();

	private @Nullable Consumer<JobEvent> events;

	private Duration heartbeatInterval = EngineSettings.DEFAULT_HEARTBEAT_INTERVAL;

	private final List<NotificationListener> listeners = new ArrayList<>();

	/**
	 * @param dataSource the pool every statement of the engine uses
	 * @param schema where the jobs table is
	 * @param settings the queue's settings; its name is the queue jobs are enqueued to
	 * @param deleteCompleted whether completed jobs are deleted rather than kept
	 * @param metrics what the engine reports to (poll-cycle timings)
	 * @param handler the body run for every job of kind {@value BenchSchema#KIND}
	 */
	PgqueueEngine(DataSource dataSource, SchemaName schema, QueueSettings settings, boolean deleteCompleted,
			QueueMetrics metrics, Handler handler) {
		this.dataSource = dataSource;
		this.schema = schema;
		this.settings = settings;
		this.workerSettings = new WorkerSettings(Duration.ofSeconds(10), false, deleteCompleted);
		this.metrics = metrics;
		this.handlers.register(new JobHandler() {
			@Override
			public String kind() {
				return BenchSchema.KIND;
			}

			@Override
			public String queue() {
				return settings.name();
			}

			@Override
			public void handle(Job job) throws Throwable {
				handler.handle(job);
			}

			@Override
			public ExternalEffect handleForEffect(Job job) throws Throwable {
				handler.handle(job);
				// On a queue with two-phase commit every job has an (empty) external step, so that each
				// is prepared and committed in two phases.
				return settings.twoPhaseCommit() ? NO_EFFECT : null;
			}

			@Override
			public boolean hasExternalEffect() {
				return settings.twoPhaseCommit();
			}

			@Override
			public String description() {
				return "benchmark handler";
			}
		});
	}

	/**
	 * Settings for the benchmark queue with everything else at its default, but a fixed batch size:
	 * the workloads that name a batch size measure that size (claim latency at a table size, round
	 * trips per job, a burst's claims). The drain and the deep backlog let batches adapt.
	 */
	static QueueSettings settings(QueueMode mode, int concurrency, int batchSize, Duration pollInterval) {
		return QueueSettings.defaults(BenchSchema.QUEUE)
			.withMode(mode)
			.withConcurrency(concurrency)
			.withBatchSize(batchSize)
			.withMaxBatchSize(batchSize)
			.withPollInterval(pollInterval);
	}

	/**
	 * A client that enqueues through {@code pool} (producers may use a pool of their own), notifying
	 * the queue at most every {@link EngineSettings#DEFAULT_NOTIFY_INTERVAL} as the starter does by
	 * default.
	 */
	JobClient client(DataSource pool) {
		return client(pool, EngineSettings.DEFAULT_NOTIFY_INTERVAL);
	}

	/**
	 * A client of an application that only enqueues, through {@code pool}, notifying each queue at
	 * most once per interval (zero: on every enqueue), or never when the interval is {@code null}.
	 */
	JobClient client(DataSource pool, Duration notifyInterval) {
		return enqueuing(pool, notifyInterval).client();
	}

	/**
	 * A client as the starter wires it in an application that also runs the queue: notifying on
	 * commit, and waking the given pollers in-process after commit.
	 */
	JobClient localClient(DataSource pool, JobPoller... pollers) {
		QueueEngine engine = enqueuing(pool, EngineSettings.DEFAULT_NOTIFY_INTERVAL);
		for (JobPoller poller : pollers) {
			engine.database().wakeUps().register(poller);
		}
		return engine.client();
	}

	/** An engine on {@code pool} that enqueues only; closed with this one. */
	private QueueEngine enqueuing(DataSource pool, Duration notifyInterval) {
		EngineSettings settings = engineSettings().withNotifications(notifyInterval != null,
				(notifyInterval != null) ? notifyInterval : EngineSettings.DEFAULT_NOTIFY_INTERVAL);
		QueueEngine engine = QueueEngine.builder(pool)
			.settings(settings)
			.queues(catalog())
			.handlers(this.handlers)
			.jsonMapper(this.jsonMapper)
			.processing(false)
			.build();
		this.clients.add(engine);
		return engine;
	}

	/**
	 * Starts listening for notifications on a connection of its own, opened with {@code listenerPool}'s
	 * settings, and wakes the given pollers with them, as the starter does by default. Stopped on close.
	 */
	void listen(DataSource listenerPool, JobPoller... pollers) {
		NotificationListener listener = new NotificationListener(listenerPool, new JobStatements(this.schema).channel);
		for (JobPoller poller : pollers) {
			listener.register(poller);
		}
		listener.start();
		this.listeners.add(listener);
	}

	/**
	 * Pollers created from now on read the claim index from its start on every claim, as pgqueue did
	 * before claim floors: the baseline of the soak workload.
	 */
	PgqueueEngine withEventsAndInterceptors(Consumer<JobEvent> events, List<JobInterceptor> interceptors) {
		this.events = events;
		this.interceptors = List.copyOf(interceptors);
		return this;
	}

	PgqueueEngine withoutClaimFloors() {
		this.claimFloors = false;
		return this;
	}

	/**
	 * Members of a bucket coordinator (pollers of a queue with bucket assignment) created from now on
	 * heartbeat at this interval.
	 */
	PgqueueEngine withHeartbeatInterval(Duration interval) {
		this.heartbeatInterval = interval;
		return this;
	}

	/**
	 * A new, unstarted poller of the queue, never paused, in an engine of its own on the engine's
	 * pool, as another instance of the application would run it.
	 */
	JobPoller poller() {
		QueueEngine engine = QueueEngine.builder(this.dataSource)
			.settings(engineSettings().withNotifications(false, EngineSettings.DEFAULT_NOTIFY_INTERVAL))
			.queues(catalog())
			.handlers(this.handlers)
			.transactionManager(new DataSourceTransactionManager(this.dataSource))
			.jsonMapper(this.jsonMapper)
			.metrics(this.metrics)
			.claimFloors(this.claimFloors)
			.events(this.events)
			.interceptors(this.interceptors)
			.build();
		this.instances.add(engine);
		return engine.database().newPoller(this.settings.name(), null);
	}

	/**
	 * One engine over shards, as a sharded application runs its queues: each shard on its pool and
	 * schema, with transactions of its own, the queue and handler of this one, no notifications;
	 * unstarted (a workload starts what it measures), closed with this one.
	 * @param pools each shard's pool, in declared order
	 * @param schemas each shard's schema
	 */
	QueueEngine overShards(Map<String, DataSource> pools, Map<String, SchemaName> schemas) {
		QueueEngineBuilder builder = QueueEngine.builder()
			.settings(engineSettings().withNotifications(false, EngineSettings.DEFAULT_NOTIFY_INTERVAL))
			.queues(catalog())
			.handlers(this.handlers)
			.jsonMapper(this.jsonMapper)
			.metrics(this.metrics)
			.claimFloors(this.claimFloors)
			.events(this.events)
			.interceptors(this.interceptors);
		pools.forEach((shard, pool) -> builder.shard(shard, pool, (database) -> database.schema(schemas.get(shard))
			.transactionManager(new DataSourceTransactionManager(pool))));
		QueueEngine engine = builder.build();
		this.instances.add(engine);
		return engine;
	}

	/**
	 * The background services (promoter, rescuer, cleaner, stats reader) of an application on the
	 * engine's pool, notifying the jobs they make due; unstarted, stopped on close.
	 */
	List<EngineService> maintenance(MaintenanceSettings maintenance) {
		QueueEngine engine = servicesEngine(engineSettings().withMaintenance(maintenance));
		return List.of(engine.database().promoter(), engine.database().rescuer(), engine.database().cleaner(), engine.database().statsReader());
	}

	/**
	 * The statistics refresher of an application on the engine's pool, as every instance that runs
	 * jobs starts it; unstarted, stopped on close.
	 */
	EngineService statisticsRefresher() {
		return servicesEngine(engineSettings()).database().statisticsRefresher();
	}

	/**
	 * An application's engine on the engine's pool, for its recurring jobs: {@code schedules()} saves
	 * them and {@code scheduleTicker()} fires due ticks, pass by pass as a workload calls
	 * {@code pass()} (its services are never started); closed with this one.
	 */
	QueueEngine scheduling() {
		return servicesEngine(engineSettings());
	}

	/** An engine on this pool whose services a workload starts itself; closed with this one. */
	private QueueEngine servicesEngine(EngineSettings settings) {
		QueueEngine engine = QueueEngine.builder(this.dataSource)
			.settings(settings)
			.queues(catalog())
			.handlers(this.handlers)
			.jsonMapper(this.jsonMapper)
			.metrics(this.metrics)
			.build();
		this.services.add(engine);
		return engine;
	}

	private EngineSettings engineSettings() {
		return EngineSettings.defaults(this.schema)
			.withWorkers(this.workerSettings)
			.withHeartbeatInterval(this.heartbeatInterval);
	}

	private QueueCatalog catalog() {
		return new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE), List.of(this.settings));
	}

	/**
	 * Stops the pollers and the background services, sends the notifications still waiting and stops
	 * listening.
	 */
	@Override
	public void close() {
		this.instances.forEach(QueueEngine::close);
		this.instances.clear();
		this.services.forEach(QueueEngine::close);
		this.services.clear();
		this.clients.forEach(QueueEngine::close);
		this.clients.clear();
		this.listeners.forEach(NotificationListener::stop);
		this.listeners.clear();
	}

	/** What a benchmark job does. */
	@FunctionalInterface
	interface Handler {

		void handle(Job job) throws Throwable;

	}

}
