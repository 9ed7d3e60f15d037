package dev.pgqueue.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

import javax.sql.DataSource;

import dev.pgqueue.AdminCaller;
import dev.pgqueue.InDoubtJobResolver;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobEvent;
import dev.pgqueue.JobInterceptor;
import dev.pgqueue.JobRequest;
import dev.pgqueue.NotificationConnectionFactory;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.maintenance.PollingHeartbeat;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.HistorySettings;
import dev.pgqueue.engine.settings.ScheduleSettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.shards.ShardLayout;
import dev.pgqueue.engine.shards.ShardWatch;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * What an engine is built from: one database ({@link QueueEngine#builder(DataSource)}) or shards
 * ({@link QueueEngine#builder()} and {@link #shard}). Only the pools of connections are required; everything else has a
 * default: the schema's {@link EngineSettings#defaults defaults}, no queue configured (every queue
 * runs with the default settings), a new handler registry, no transaction manager (transactional
 * queues then fail at start with a message saying what to define), a plain JSON mapper, no
 * metrics, no observations, a pool of workers per queue, the {@link AdminCaller#SYSTEM system}
 * caller.
 */
public final class QueueEngineBuilder {

	/** Time between two probes of a shard, unless {@link #shardWatch set}. */
	static final long WATCH_INTERVAL_MILLIS = 200;

	/** Time between two probes of a shard, unless set. */
	static final Duration SHARD_WATCH_INTERVAL = Duration.ofMillis(WATCH_INTERVAL_MILLIS);

	/** How long a shard may go without answering before its keyed jobs are refused, unless set. */
	static final Duration SHARD_WATCH_TIMEOUT = Duration.ofSeconds(1);

	/** The one database, or each shard's, in declared order. */
	final List<EngineDatabase> databases = new ArrayList<>();

	/** Whether the databases are shards: given through {@link #shard}, not the constructor. */
	private final boolean sharded;

	boolean spillUnkeyed;

	boolean startWhileDown;

	Duration watchInterval = SHARD_WATCH_INTERVAL;

	Duration watchTimeout = SHARD_WATCH_TIMEOUT;

	EngineSettings settings = EngineSettings.defaults(SchemaName.of(SchemaName.DEFAULT));

	@Nullable QueueCatalog queues;

	JobHandlerRegistry handlers = new JobHandlerRegistry();

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

	Duration pollingHeartbeat = PollingHeartbeat.INTERVAL;

	ScheduleSettings schedules = ScheduleSettings.DEFAULT;

	HistorySettings history = HistorySettings.DEFAULT;

	List<JobInterceptor> interceptors = List.of();

	@Nullable Consumer<JobEvent> events;

	QueueEngineBuilder(DataSource dataSource) {
		this.databases.add(new EngineDatabase(null, dataSource));
		this.sharded = false;
	}

	QueueEngineBuilder() {
		this.sharded = true;
	}

	/**
	 * Adds a shard: queues spread over several servers, each job on one shard, which its public id tells
	 * ({@link dev.pgqueue.Job#shard()}); a key's jobs all on the shard that owns the key's slot.
	 * @param name the shard's name, which jobs and meters bear
	 * @param dataSource the pool of connections to the shard's database
	 * @param database what belongs to this shard alone: its slots, schema, transaction manager, meters,
	 * migrator, the pool to close with the engine
	 */
	public QueueEngineBuilder shard(String name, DataSource dataSource, Consumer<EngineDatabase> database) {
		if (!this.sharded) {
			throw new IllegalStateException("An engine built on one DataSource has no shards; build it with "
					+ "QueueEngine.builder() and give every database as a shard");
		}
		EngineDatabase shard = new EngineDatabase(name, dataSource);
		database.accept(shard);
		this.databases.add(shard);
		return this;
	}

	/**
	 * Whether a job without a shard or key that its shard fails to take (a connection refused or cut, a
	 * pool timing out) is tried on the next shard up; a failure at commit can hide a job that did commit,
	 * which spilling then enqueues twice. Off unless set.
	 */
	public QueueEngineBuilder spillUnkeyed(boolean spillUnkeyed) {
		this.spillUnkeyed = spillUnkeyed;
		return this;
	}

	/**
	 * Whether the engine is built and starts while some shards (not all) do not answer: those are
	 * migrated and started once they answer, and their keyed jobs are refused until then. Off unless
	 * set: then a shard that cannot be migrated fails the build.
	 */
	public QueueEngineBuilder startWhileDown(boolean startWhileDown) {
		this.startWhileDown = startWhileDown;
		return this;
	}

	/**
	 * How often the shards' watch probes each shard, and how long a shard may go without answering
	 * before it counts as down ({@value #WATCH_INTERVAL_MILLIS} ms and 1 s unless set).
	 */
	public QueueEngineBuilder shardWatch(Duration interval, Duration timeout) {
		this.watchInterval = interval;
		this.watchTimeout = timeout;
		return this;
	}

	/** The one database's part of the builder; refused over shards, whose parts each {@link #shard} sets. */
	private EngineDatabase single(String what) {
		if (this.sharded) {
			throw new IllegalStateException("Over shards, " + what + " belongs to each shard: set it in shard(name, "
					+ "dataSource, database -> database." + what + "(…))");
		}
		return this.databases.get(0);
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
		single("jdbcTemplate").jdbcTemplate(jdbcTemplate);
		return this;
	}

	/** The transactions of transactional queues, and of limited claims. */
	public QueueEngineBuilder transactionManager(@Nullable PlatformTransactionManager transactionManager) {
		single("transactionManager").transactionManager(transactionManager);
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

	/**
	 * Where the pollers record their claims; for test engines that stand for one application together
	 * (through the tests' {@code EngineInternals}).
	 */
	QueueEngineBuilder signals(@Nullable QueueSignals signals) {
		this.signals = signals;
		return this;
	}

	/**
	 * Which queues are paused; for test engines that stand for one application together (through the
	 * tests' {@code EngineInternals}).
	 */
	QueueEngineBuilder pauses(@Nullable QueuePauses pauses) {
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
		single("notificationConnections").notificationConnections(connections);
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

	/** Migrates the database's tables when the engine is built; none unless given (the starter's bean does). */
	public QueueEngineBuilder migrator(@Nullable QueueMigrator migrator) {
		single("migrator").migrator(migrator);
		return this;
	}

	/** The statements of the jobs table; for tests that make some of them fail (through {@code EngineInternals}). */
	QueueEngineBuilder jobs(@Nullable JobRepository jobs) {
		this.jobs = jobs;
		return this;
	}

	/**
	 * The engine: each database migrated (where a migrator is given) and its part built.
	 * @throws IllegalStateException when a shard cannot be migrated (unless the engine may
	 * {@link #startWhileDown start while down}), or when none can
	 */
	public QueueEngine build() {
		if (this.jsonMapper == null) {
			this.jsonMapper = JsonMapper.builder().build();
		}
		try {
			return this.sharded ? buildShards() : buildSingle();
		}
		catch (RuntimeException ex) {
			this.databases.forEach((database) -> database.closeWith.forEach(QueueEngineBuilder::closeQuietly));
			throw ex;
		}
	}

	private QueueEngine buildSingle() {
		EngineDatabase database = this.databases.get(0);
		if (database.migrator != null) {
			database.migrator.afterPropertiesSet();
		}
		return new QueueEngine(new DatabaseEngine(parts(), database), database.migrator, database.closeWith);
	}

	private QueueEngine buildShards() {
		Map<String, @Nullable String> slots = new LinkedHashMap<>();
		this.databases.forEach((database) -> slots.put(Objects.requireNonNull(database.shard), database.slots));
		ShardLayout layout = ShardLayout.of(slots);
		EngineParts shared = parts();
		Map<String, DatabaseEngine> parts = new LinkedHashMap<>();
		Map<String, QueueMigrator> migrators = new LinkedHashMap<>();
		Map<String, RuntimeException> away = new LinkedHashMap<>();
		Map<String, DataSource> dataSources = new LinkedHashMap<>();
		List<AutoCloseable> closeWith = new ArrayList<>();
		for (EngineDatabase database : this.databases) {
			String shard = Objects.requireNonNull(database.shard);
			database.publicIds = layout.ids(shard);
			// Recurring jobs live on the first shard, so that each fires once.
			database.keepsSchedules = parts.isEmpty();
			if (database.migrator != null) {
				migrators.put(shard, database.migrator);
				RuntimeException failed = migrate(shard, database.migrator);
				if (failed != null) {
					away.put(shard, failed);
				}
			}
			parts.put(shard, new DatabaseEngine(shared, database));
			dataSources.put(shard, database.dataSource);
			closeWith.addAll(database.closeWith);
		}
		if (!away.isEmpty() && away.size() == parts.size()) {
			String first = layout.shards().get(0);
			RuntimeException why = away.get(first);
			throw new IllegalStateException("None of the shards " + layout.shards() + " answered at start-up (shard '"
					+ first + "': " + why.getMessage() + "). pgqueue.sharding.start-while-down lets "
					+ "the application start while some shards are down, not all: start it again once one answers.",
					why);
		}
		ShardWatch watch = new ShardWatch(dataSources, this.watchInterval, this.watchTimeout);
		return new QueueEngine(layout, parts, migrators, away, watch, this.spillUnkeyed, closeWith);
	}

	/** What every database's part is built from. */
	private EngineParts parts() {
		QueueCatalog catalog = (this.queues != null) ? this.queues
				: new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE), List.of());
		return new EngineParts(this.settings, catalog, this.handlers, Objects.requireNonNull(this.jsonMapper),
				this.metrics, this.observations, this.workerExecutor, this.inDoubtJobResolver, this.adminCaller,
				this.processing, this.claimFloors, this.signals, this.pauses, this.jobs, this.pauseNotifications,
				this.pollingHeartbeat, this.schedules, this.history, this.interceptors, this.events);
	}

	/**
	 * Migrates one shard's tables, naming the shard when it cannot: an instance must not start with
	 * part of its jobs out of reach, unnoticed, unless told to ({@link #startWhileDown}).
	 * @return why the shard could not be migrated, where the engine starts without it
	 */
	private @Nullable RuntimeException migrate(String shard, QueueMigrator migrator) {
		try {
			migrator.afterPropertiesSet();
			return null;
		}
		catch (RuntimeException ex) {
			if (!this.startWhileDown) {
				throw new IllegalStateException("pgqueue could not migrate the jobs table of shard '" + shard
						+ "' (pgqueue.shards." + shard + "): " + ex.getMessage() + ". Every shard must answer when "
						+ "the application starts: start it again once shard '" + shard + "' answers.", ex);
			}
			return ex;
		}
	}

	private static void closeQuietly(AutoCloseable resource) {
		try {
			resource.close();
		}
		catch (Exception ex) {
			// The build already fails with the cause that matters.
		}
	}

}
