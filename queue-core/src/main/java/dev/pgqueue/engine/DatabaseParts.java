package dev.pgqueue.engine;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import dev.pgqueue.engine.control.RunningJobs;
import dev.pgqueue.engine.job.JobEvents;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.maintenance.PollingHeartbeat;
import dev.pgqueue.engine.poll.PollerWakeUps;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.run.QueueHistoryRecorder;
import dev.pgqueue.engine.schedules.JdbcJobSchedules;
import dev.pgqueue.engine.service.PooledConnections;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.HistorySettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.ScheduleSettings;
import dev.pgqueue.engine.sql.ControlRepository;
import dev.pgqueue.engine.sql.HistoryRepository;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.sql.Repositories;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The parts of one database's engine, assembled once from what the engine shares ({@link EngineParts})
 * and what belongs to this database alone ({@link EngineDatabase}): the repositories, the births of
 * new jobs, the {@link JdbcJobClient client} and the {@link JdbcJobAdmin admin}, the runner, the claim
 * signals, the poller factory and the recurring jobs' API. Its {@link DatabaseEngine} hands them out
 * and its {@link DatabaseServices} are built from them; kept apart from both so that adding a part,
 * or a collaborator of one, changes this class alone.
 *
 * <p>It starts nothing. The polling heartbeat, a service, is made here because the client reads which
 * queues it reports polled; it starts with the services. This is the one class of the engine that
 * takes the application's JDBC template (or makes one on the pool), to hand it to the repositories;
 * it runs no statement itself.
 */
final class DatabaseParts {

	private final @Nullable String shard;

	private final DataSource dataSource;

	private final EngineSettings settings;

	private final QueueCatalog queues;

	private final JobHandlerRegistry handlers;

	private final QueueMetrics metrics;

	private final ScheduleSettings scheduleSettings;

	private final Repositories sql;

	private final JobRepository jobs;

	private final QueuePauses pauses;

	private final PollerWakeUps wakeUps = new PollerWakeUps();

	private final @Nullable NotificationThrottle throttle;

	private final boolean processing;

	private final PollingHeartbeat pollingHeartbeat;

	private final JobBirths births;

	private final JdbcJobClient client;

	private final ControlRepository controls;

	private final HistorySettings historySettings;

	private final HistoryRepository history;

	private final JdbcJobAdmin admin;

	private final QueueHistoryRecorder historyRecorder;

	private final RunningJobs runningJobs;

	private final JobRunner runner;

	private final QueueSignals signals;

	private final JobPollerFactory pollerFactory;

	private final JdbcJobSchedules schedules;

	DatabaseParts(EngineParts parts, EngineDatabase database) {
		this.shard = database.shard;
		this.dataSource = database.dataSource;
		this.settings = (database.schema != null) ? parts.settings().withSchema(database.schema) : parts.settings();
		this.queues = parts.queues();
		this.handlers = parts.handlers();
		SchemaName schema = this.settings.schema();
		JdbcTemplate jdbc = (database.jdbcTemplate != null) ? database.jdbcTemplate : new JdbcTemplate(this.dataSource);
		this.metrics = (database.metrics != null) ? database.metrics : parts.metrics();
		this.scheduleSettings = database.keepsSchedules ? parts.schedules() : parts.schedules().withDeclared(List.of());
		boolean notify = this.settings.notifications();
		Repositories sql = Repositories.on(jdbc, schema, notify);
		if (parts.jobs() != null) {
			sql = sql.withJobs(parts.jobs());
		}
		this.sql = sql;
		this.jobs = sql.jobs();
		this.pauses = (parts.pauses() != null) ? parts.pauses() : new QueuePauses(sql.admin());
		this.throttle = notify ? new NotificationThrottle(this.jobs, this.settings.notifyInterval()) : null;
		this.processing = parts.processing();
		this.pollingHeartbeat = new PollingHeartbeat(sql.polling(), this::polledHere, parts.pollingHeartbeat());
		JobEvents events = JobEvents.to(parts.events());
		this.births = new JobBirths(this.jobs, sql.unique(), parts.jsonMapper(), this.queues, this.handlers,
				this.settings.maxPayloadBytes(), this.wakeUps, this.throttle, parts.observations(), events,
				database.publicIds, this.shard, new TransactionTemplate((database.transactionManager != null)
						? database.transactionManager : new DataSourceTransactionManager(jdbc.getDataSource())));
		this.client = new JdbcJobClient(this.births, new UnpolledQueueWarnings(this.pollingHeartbeat::view),
				new EnqueueSize(this.settings.maxJobsPerEnqueue()));
		this.controls = new ControlRepository(jdbc, schema, notify);
		this.historySettings = parts.history();
		this.history = new HistoryRepository(jdbc, schema);
		this.admin = new JdbcJobAdmin(sql.admin(), this.jobs, this.pauses, this.wakeUps, parts.adminCaller(), events,
				this.controls, this.history, this.historySettings.retention());
		// Only an engine that runs its flusher records: counts nobody writes would pile up.
		this.historyRecorder = (this.processing && this.historySettings.enabled()) ? new QueueHistoryRecorder()
				: QueueHistoryRecorder.OFF;
		this.runningJobs = new RunningJobs();
		JobRunner runner = new JobRunner(this.handlers, this.metrics, parts.observations(), this.settings.workers(),
				parts.interceptors(), events, this.runningJobs, this.historyRecorder);
		this.runner = (this.shard != null) ? runner.onShard(this.shard) : runner;
		this.signals = (parts.signals() != null) ? parts.signals()
				: new QueueSignals(this.jobs, this.metrics, this.settings.slaWindow());
		PlatformTransactionManager manager = database.transactionManager;
		this.pollerFactory = new JobPollerFactory(this.settings, this.queues, sql, this.runner,
				(manager != null) ? new TransactionTemplate(manager) : null, this.metrics, this.signals,
				parts.workerExecutor(), parts.claimFloors(), PooledConnections.of(this.dataSource));
		this.schedules = new JdbcJobSchedules(sql.schedules(), this.births, parts.jsonMapper(), this.queues,
				this.handlers::queueOf, parts.adminCaller()::name);
	}

	/** The queues this engine polls, with the kinds it handles in each; none when it does not process jobs. */
	private Map<String, String[]> polledHere() {
		if (!this.processing) {
			return Map.of();
		}
		Map<String, String[]> polled = new LinkedHashMap<>();
		this.handlers.queues().forEach((queue) -> polled.put(queue, this.handlers.kindsOf(queue)));
		return polled;
	}

	/** The shard this database is, or {@code null} when the engine runs on this one database alone. */
	@Nullable String shard() {
		return this.shard;
	}

	/** The pool of connections to this database. */
	DataSource dataSource() {
		return this.dataSource;
	}

	/** The engine's settings, in this database's schema where it has one of its own. */
	EngineSettings settings() {
		return this.settings;
	}

	QueueCatalog queues() {
		return this.queues;
	}

	JobHandlerRegistry handlers() {
		return this.handlers;
	}

	/** Where this database's meters go: its own (a shard's tagged meters), else the engine's. */
	QueueMetrics metrics() {
		return this.metrics;
	}

	/** The engine's recurring jobs where this database keeps them (the first one), else none declared. */
	ScheduleSettings scheduleSettings() {
		return this.scheduleSettings;
	}

	/** Every repository on this database, for the services to take theirs. */
	Repositories sql() {
		return this.sql;
	}

	JobRepository jobs() {
		return this.jobs;
	}

	/** Which queues operators paused. */
	QueuePauses pauses() {
		return this.pauses;
	}

	PollerWakeUps wakeUps() {
		return this.wakeUps;
	}

	/** Spaces out the notifications of new jobs; {@code null} when notifications are off. */
	@Nullable NotificationThrottle throttle() {
		return this.throttle;
	}

	boolean processing() {
		return this.processing;
	}

	/**
	 * Records which queues this engine polls and reads which queues any instance polls; started
	 * whether or not this engine processes jobs.
	 */
	PollingHeartbeat pollingHeartbeat() {
		return this.pollingHeartbeat;
	}

	/** Where every new job of this database is made, inserted and announced. */
	JobBirths births() {
		return this.births;
	}

	/** Enqueues jobs; wakes this application's pollers after commit. */
	JdbcJobClient client() {
		return this.client;
	}

	/** The operators' cancel and progress requests. */
	ControlRepository controls() {
		return this.controls;
	}

	/** Whether the queues' history is recorded, and how long it is kept. */
	HistorySettings historySettings() {
		return this.historySettings;
	}

	/** The queues' history, which the admin reads, the flusher writes and the cleaner prunes. */
	HistoryRepository history() {
		return this.history;
	}

	JdbcJobAdmin admin() {
		return this.admin;
	}

	/**
	 * Counts each queue's attempts, waits and run times per minute, in memory; records nothing unless
	 * this engine processes jobs with the history enabled.
	 */
	QueueHistoryRecorder historyRecorder() {
		return this.historyRecorder;
	}

	/** The attempts running in this application. */
	RunningJobs runningJobs() {
		return this.runningJobs;
	}

	/** Runs one attempt of a job and records its outcome. */
	JobRunner runner() {
		return this.runner;
	}

	/** What the pollers' claims recorded: the degradation signals of each polled queue. */
	QueueSignals signals() {
		return this.signals;
	}

	JobPollerFactory pollerFactory() {
		return this.pollerFactory;
	}

	JdbcJobSchedules schedules() {
		return this.schedules;
	}

}
