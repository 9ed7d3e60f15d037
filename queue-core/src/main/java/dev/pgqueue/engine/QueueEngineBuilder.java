package dev.pgqueue.engine;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Supplier;

import javax.sql.DataSource;

import dev.pgqueue.AdminCaller;
import dev.pgqueue.InDoubtJobResolver;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobEvent;
import dev.pgqueue.JobInterceptor;
import dev.pgqueue.NotificationConnectionFactory;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.maintenance.PollingHeartbeat;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.HistorySettings;
import dev.pgqueue.engine.settings.ScheduleSettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * What an engine is built from. Only the pool of connections is required; everything else has a
 * default: the schema's {@link EngineSettings#defaults defaults}, no queue configured (every queue
 * runs with the default settings), a new handler registry, no transaction manager (transactional
 * queues then fail at start with a message saying what to define), a plain JSON mapper, no
 * metrics, no observations, a pool of workers per queue, the {@link AdminCaller#SYSTEM system}
 * caller.
 */
public final class QueueEngineBuilder {

	final DataSource dataSource;

	EngineSettings settings = EngineSettings.defaults(SchemaName.of(SchemaName.DEFAULT));

	@Nullable QueueCatalog queues;

	JobHandlerRegistry handlers = new JobHandlerRegistry();

	@Nullable JdbcTemplate jdbcTemplate;

	@Nullable PlatformTransactionManager transactionManager;

	@Nullable JsonMapper jsonMapper;

	QueueMetrics metrics = QueueMetrics.NONE;

	QueueObservations observations = QueueObservations.NONE;

	@Nullable Executor workerExecutor;

	@Nullable InDoubtJobResolver inDoubtJobResolver;

	AdminCaller adminCaller = AdminCaller.SYSTEM;

	boolean processing = true;

	boolean claimFloors = true;

	@Nullable QueueSignals signals;

	@Nullable QueuePauses pauses;

	@Nullable JobRepository jobs;

	boolean pauseNotifications = true;

	@Nullable NotificationConnectionFactory notificationConnections;

	Duration pollingHeartbeat = PollingHeartbeat.INTERVAL;

	ScheduleSettings schedules = ScheduleSettings.DEFAULT;

	HistorySettings history = HistorySettings.DEFAULT;

	List<JobInterceptor> interceptors = List.of();

	@Nullable Consumer<JobEvent> events;

	Supplier<UUID> publicIds = UUID::randomUUID;

	@Nullable String shard;

	QueueEngineBuilder(DataSource dataSource) {
		this.dataSource = dataSource;
	}

	/**
	 * Makes this engine one shard of queues spread over several servers: its jobs tell the shard's
	 * name ({@link dev.pgqueue.Job#shard()}), its client refuses a request that names another shard,
	 * and its new jobs take their public ids from {@code publicIds}, which tell the shard. Without it
	 * the engine is the only one and its ids are random (version 4) UUIDs.
	 */
	public QueueEngineBuilder shard(String name, Supplier<UUID> publicIds) {
		this.shard = name;
		this.publicIds = publicIds;
		return this;
	}

	/** Recurring jobs: those declared, saved at start, and the ticker's timings. */
	public QueueEngineBuilder schedules(ScheduleSettings schedules) {
		this.schedules = schedules;
		return this;
	}

	/** The queues' per-minute history: whether it is recorded, how long it is kept. */
	public QueueEngineBuilder history(HistorySettings history) {
		this.history = history;
		return this;
	}

	public QueueEngineBuilder settings(EngineSettings settings) {
		this.settings = settings;
		return this;
	}

	/** The configured queues, and the settings of any other. */
	public QueueEngineBuilder queues(@Nullable QueueCatalog queues) {
		this.queues = queues;
		return this;
	}

	/** Where listeners are registered; a new, empty registry unless given. */
	public QueueEngineBuilder handlers(JobHandlerRegistry handlers) {
		this.handlers = handlers;
		return this;
	}

	/** Runs every statement; one on the data source unless given. */
	public QueueEngineBuilder jdbcTemplate(@Nullable JdbcTemplate jdbcTemplate) {
		this.jdbcTemplate = jdbcTemplate;
		return this;
	}

	/** The transactions of transactional queues, and of limited claims. */
	public QueueEngineBuilder transactionManager(@Nullable PlatformTransactionManager transactionManager) {
		this.transactionManager = transactionManager;
		return this;
	}

	public QueueEngineBuilder jsonMapper(@Nullable JsonMapper jsonMapper) {
		this.jsonMapper = jsonMapper;
		return this;
	}

	public QueueEngineBuilder metrics(QueueMetrics metrics) {
		this.metrics = metrics;
		return this;
	}

	public QueueEngineBuilder observations(QueueObservations observations) {
		this.observations = observations;
		return this;
	}

	/** What runs around each attempt, outermost first. */
	public QueueEngineBuilder interceptors(List<JobInterceptor> interceptors) {
		this.interceptors = List.copyOf(interceptors);
		return this;
	}

	/** Where jobs' lifecycle events go ({@link JobEvent}); {@code null} (the default) publishes none. */
	public QueueEngineBuilder events(@Nullable Consumer<JobEvent> events) {
		this.events = events;
		return this;
	}

	/** Runs the workers of every queue, instead of a pool per queue. */
	public QueueEngineBuilder workerExecutor(@Nullable Executor workerExecutor) {
		this.workerExecutor = workerExecutor;
		return this;
	}

	/** Decides the jobs that queues with two-phase commit left in doubt. */
	public QueueEngineBuilder inDoubtJobResolver(@Nullable InDoubtJobResolver inDoubtJobResolver) {
		this.inDoubtJobResolver = inDoubtJobResolver;
		return this;
	}

	/** Names who calls {@link JobAdmin} operations, for the log. */
	public QueueEngineBuilder adminCaller(AdminCaller adminCaller) {
		this.adminCaller = adminCaller;
		return this;
	}

	/** Whether the engine runs jobs; {@code false} for an application that only enqueues. */
	public QueueEngineBuilder processing(boolean processing) {
		this.processing = processing;
		return this;
	}

	/**
	 * Whether claims of shared queues start from floors; {@code false} only to measure what floors
	 * are worth.
	 */
	public QueueEngineBuilder claimFloors(boolean claimFloors) {
		this.claimFloors = claimFloors;
		return this;
	}

	/** Where the pollers record their claims; for engines that stand for one application together. */
	public QueueEngineBuilder signals(@Nullable QueueSignals signals) {
		this.signals = signals;
		return this;
	}

	/** Which queues are paused; for engines that stand for one application together. */
	public QueueEngineBuilder pauses(@Nullable QueuePauses pauses) {
		this.pauses = pauses;
		return this;
	}

	/**
	 * Whether the notification listener also hears pauses and resumes announced by other
	 * instances ({@code true} unless set); without, a pause reaches this engine's pollers when
	 * they next read the pause table, at most a second later.
	 */
	public QueueEngineBuilder pauseNotifications(boolean pauseNotifications) {
		this.pauseNotifications = pauseNotifications;
		return this;
	}

	/**
	 * Opens the sessions the notification listener holds; unless given, sessions of its own made
	 * after the data source's settings ({@link NotificationConnections}).
	 */
	public QueueEngineBuilder notificationConnections(@Nullable NotificationConnectionFactory connections) {
		this.notificationConnections = connections;
		return this;
	}

	/**
	 * How often this engine records the queues it polls and reads which queues the others poll
	 * ({@link PollingHeartbeat#INTERVAL} unless set); for tests and worker processes that stop an
	 * instance and need its queue to count as unpolled sooner than three intervals of 10 s.
	 */
	public QueueEngineBuilder pollingHeartbeat(Duration interval) {
		this.pollingHeartbeat = interval;
		return this;
	}

	/** The statements of the jobs table; for tests that make some of them fail. */
	public QueueEngineBuilder jobs(@Nullable JobRepository jobs) {
		this.jobs = jobs;
		return this;
	}

	public QueueEngine build() {
		if (this.jsonMapper == null) {
			this.jsonMapper = JsonMapper.builder().build();
		}
		return new QueueEngine(this);
	}

}
