package dev.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import javax.sql.DataSource;

import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.JdbcJobAdmin;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.QueueEngineBuilder;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.poll.PollerWakeUps;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.AdminRepository;
import dev.pgqueue.engine.sql.CoordinationRepository;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository.LockWaits;
import dev.pgqueue.metrics.OldestTransaction;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.metrics.QueueStats;
import org.jspecify.annotations.Nullable;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.schema.BucketClaimIndex;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The engine wired by hand on a fresh schema of the test database, without Spring Boot: what a
 * test class needs to enqueue, poll and inspect the jobs table. Close it to stop pollers and drop
 * the schema.
 */
public final class QueueFixture implements AutoCloseable {

	private final TestSchema schema;

	private final JobRepository repository;

	private final MaintenanceRepository maintenanceRepository;

	private final JobHandlerRegistry handlers = new JobHandlerRegistry();

	private final JsonMapper jsonMapper = JsonMapper.builder().build();

	private final List<JobPoller> pollers = new ArrayList<>();

	private final DataSourceTransactionManager transactionManager;

	private QueueMetrics metrics = QueueMetrics.NONE;

	private QueueObservations observations = QueueObservations.NONE;

	private QueueSignals signals;

	private final List<QueueSettings> configured = new ArrayList<>();

	private WorkerSettings workerSettings = new WorkerSettings(Duration.ofSeconds(10), false, false);

	private List<JobInterceptor> interceptors = List.of();

	private @Nullable Consumer<JobEvent> events;

	private Duration heartbeatInterval = Duration.ofMillis(200);

	private QueueFixture(String prefix) {
		this.schema = TestDatabase.get().createSchema(prefix);
		new QueueMigrator(this.schema.dataSource(), SchemaName.of(this.schema.name()), true).afterPropertiesSet();
		this.repository = new JobRepository(new JdbcTemplate(this.schema.dataSource()),
				SchemaName.of(this.schema.name()));
		this.maintenanceRepository = new MaintenanceRepository(new JdbcTemplate(this.schema.dataSource()),
				SchemaName.of(this.schema.name()), false);
		this.transactionManager = new DataSourceTransactionManager(this.schema.dataSource());
	}

	/** A fixture on a new schema whose name starts with {@code prefix}. */
	public static QueueFixture create(String prefix) {
		return new QueueFixture(prefix);
	}

	/**
	 * Configures a queue; one with bucket assignment also gets the bucket claim index, as the starter's
	 * migrator creates it for an application that configures such a queue.
	 */
	public QueueFixture configure(QueueSettings settings) {
		this.configured.removeIf((s) -> s.name().equals(settings.name()));
		this.configured.add(settings);
		if (settings.assignment() == QueueAssignment.BUCKETS) {
			new BucketClaimIndex(this.schema.dataSource(), SchemaName.of(this.schema.name()))
				.create(List.of(settings.name()));
		}
		return this;
	}

	public QueueFixture metrics(QueueMetrics metrics) {
		this.metrics = metrics;
		if (this.signals != null) {
			this.signals.close();
			this.signals = null;
		}
		return this;
	}

	/** Observes the enqueues of {@link #client()} and the attempts of {@link #runner()}. */
	public QueueFixture observations(QueueObservations observations) {
		this.observations = observations;
		return this;
	}

	/** How often bucket coordinators of this fixture's pollers heartbeat (200 ms unless set). */
	public QueueFixture heartbeatInterval(Duration heartbeatInterval) {
		this.heartbeatInterval = heartbeatInterval;
		return this;
	}

	public CoordinationRepository coordination() {
		return new CoordinationRepository(this.repository.jdbcTemplate(), this.repository.schema());
	}

	/** The signals every poller of this fixture records into, as the pollers of one application do. */
	public synchronized QueueSignals signals() {
		if (this.signals == null) {
			this.signals = new QueueSignals(this.repository, this.metrics);
		}
		return this.signals;
	}

	public QueueFixture workerSettings(WorkerSettings workerSettings) {
		this.workerSettings = workerSettings;
		return this;
	}

	/** Registers a handler written as a lambda. */
	public QueueFixture handle(String kind, String queue, ThrowingConsumer<Job> body) {
		this.handlers.register(handler(kind, queue, body));
		return this;
	}

	/** Registers a handler written as a lambda, with a time limit of its own, as {@code @JobListener(timeout)} gives. */
	public QueueFixture handle(String kind, String queue, Duration timeout, ThrowingConsumer<Job> body) {
		this.handlers.register(handler(kind, queue, timeout, body));
		return this;
	}

	/** A handler written as a lambda. */
	public static JobHandler handler(String kind, String queue, ThrowingConsumer<Job> body) {
		return handler(kind, queue, null, body);
	}

	/** A handler written as a lambda, with a time limit of its own ({@code null} for the queue's). */
	public static JobHandler handler(String kind, String queue, Duration timeout, ThrowingConsumer<Job> body) {
		return new JobHandler() {
			@Override
			public String kind() {
				return kind;
			}

			@Override
			public String queue() {
				return queue;
			}

			@Override
			public void handle(Job job) throws Throwable {
				body.accept(job);
			}

			@Override
			public Duration timeout() {
				return timeout;
			}

			@Override
			public String description() {
				return "test handler for " + kind;
			}
		};
	}

	/** Registers a handler written as a lambda that returns the job's external effect (or null). */
	public QueueFixture handleWithEffect(String kind, String queue, ThrowingFunction<Job, ExternalEffect> body) {
		this.handlers.register(new JobHandler() {
			@Override
			public String kind() {
				return kind;
			}

			@Override
			public String queue() {
				return queue;
			}

			@Override
			public void handle(Job job) throws Throwable {
				body.apply(job);
			}

			@Override
			public ExternalEffect handleForEffect(Job job) throws Throwable {
				return body.apply(job);
			}

			@Override
			public boolean hasExternalEffect() {
				return true;
			}

			@Override
			public String description() {
				return "test handler with an effect for " + kind;
			}
		});
		return this;
	}

	public QueueCatalog catalog() {
		return new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE), this.configured);
	}

	/**
	 * An engine on this fixture's schema, its queues, handlers, metrics and signals as configured now,
	 * without notifications, as one instance of an application builds it.
	 */
	public QueueEngine engine() {
		return engine(MaintenanceSettings.DEFAULT, null);
	}

	private QueueEngine engine(MaintenanceSettings maintenance, QueuePauses pauses) {
		return EngineInternals
			.sharing(engineBuilder().settings(engineSettings().withMaintenance(maintenance)), signals(), pauses)
			.build();
	}

	/**
	 * The settings of {@link #engine()}: this fixture's schema, worker settings and heartbeat
	 * interval, without notifications.
	 */
	public EngineSettings engineSettings() {
		return EngineSettings.defaults(SchemaName.of(this.schema.name()))
			.withNotifications(false, EngineSettings.DEFAULT_NOTIFY_INTERVAL)
			.withWorkers(this.workerSettings)
			.withHeartbeatInterval(this.heartbeatInterval);
	}

	/**
	 * An engine as another instance of the application builds it, for a test to adjust before
	 * building: {@link #engineSettings()}, this fixture's queues, handlers, transactions, metrics and
	 * observations as configured now, signals and pauses of its own.
	 */
	public QueueEngineBuilder engineBuilder() {
		return engineBuilder(this.schema.dataSource());
	}

	/** As {@link #engineBuilder()}, on a pool of the instance's own (and transactions on it). */
	public QueueEngineBuilder engineBuilder(DataSource pool) {
		return QueueEngine.builder(pool)
			.settings(engineSettings())
			.queues(catalog())
			.handlers(this.handlers)
			.transactionManager((pool == this.schema.dataSource()) ? this.transactionManager
					: new DataSourceTransactionManager(pool))
			.jsonMapper(this.jsonMapper)
			.metrics(this.metrics)
			.observations(this.observations)
			.interceptors(this.interceptors)
			.events(this.events);
	}

	/**
	 * An engine over shards, one per fixture in the map's order, named by its key, with slots spread over
	 * them: each shard on its fixture's schema and transactions, the rest as the first fixture's
	 * {@link #engineBuilder()} sets it.
	 */
	public static QueueEngineBuilder shardsBuilder(Map<String, QueueFixture> shards) {
		return shardsBuilder(shards, (shard) -> shards.get(shard).dataSource());
	}

	/** As {@link #shardsBuilder(Map)}, each shard on the pool {@code pools} gives (and transactions on it). */
	public static QueueEngineBuilder shardsBuilder(Map<String, QueueFixture> shards, Function<String, DataSource> pools) {
		QueueFixture first = shards.values().iterator().next();
		QueueEngineBuilder builder = QueueEngine.builder()
			.settings(first.engineSettings())
			.queues(first.catalog())
			.handlers(first.handlers)
			.jsonMapper(first.jsonMapper)
			.metrics(first.metrics)
			.observations(first.observations)
			.interceptors(first.interceptors)
			.events(first.events);
		shards.forEach((name, fixture) -> {
			DataSource pool = pools.apply(name);
			builder.shard(name, pool, (database) -> database.schema(SchemaName.of(fixture.schema.name()))
				.transactionManager((pool == fixture.schema.dataSource()) ? fixture.transactionManager
						: new DataSourceTransactionManager(pool)));
		});
		return builder;
	}

	/** What runs around each attempt in the engines this fixture builds from now on, outermost first. */
	public QueueFixture interceptors(List<JobInterceptor> interceptors) {
		this.interceptors = List.copyOf(interceptors);
		return this;
	}

	/** Where the engines this fixture builds from now on publish job events. */
	public QueueFixture events(@Nullable Consumer<JobEvent> events) {
		this.events = events;
		return this;
	}

	public JobClient client() {
		return engine().client();
	}

	/**
	 * Enqueues the requests in one transaction, in calls of at most {@code pgqueue.max-jobs-per-enqueue}
	 * (its default): a burst larger than one call takes, all due at the same {@code now()}.
	 */
	public List<UUID> enqueueInOneTransaction(List<JobRequest> requests) {
		int most = EngineSettings.DEFAULT_MAX_JOBS_PER_ENQUEUE;
		List<UUID> ids = new java.util.ArrayList<>(requests.size());
		new TransactionTemplate(this.transactionManager).executeWithoutResult((status) -> {
			for (int start = 0; start < requests.size(); start += most) {
				ids.addAll(client().enqueueAll(requests.subList(start, Math.min(requests.size(), start + most))));
			}
		});
		return ids;
	}

	public JobRunner runner() {
		return EngineInternals.of(engine()).runner();
	}

	/** Creates (does not start) a poller for the queue with its registered kinds. */
	public JobPoller poller(String queue) {
		return poller(queue, null);
	}

	/**
	 * Creates (does not start) a poller for the queue with its registered kinds, which asks
	 * {@code pauses} whether the queue is paused before it claims (as an instance's pollers do).
	 */
	public JobPoller poller(String queue, QueuePauses pauses) {
		JobPoller poller = EngineInternals.of(engine()).newPoller(queue, pauses);
		this.pollers.add(poller);
		return poller;
	}

	/** The operators' statements on this fixture's schema, notifying if {@code notify}. */
	public AdminRepository adminRepository(boolean notify) {
		return new AdminRepository(jdbc(), SchemaName.of(this.schema.name()), notify);
	}

	/** A {@link JobAdmin} on this fixture's schema that tells {@code pauses} (if any) of its own pauses. */
	public JobAdmin admin(QueuePauses pauses, PollerWakeUps wakeUps) {
		return new JdbcJobAdmin(adminRepository(false), this.repository, pauses, wakeUps, () -> "test");
	}

	/** A {@link JobAdmin} on this fixture's schema. */
	public JobAdmin admin() {
		return admin(null, null);
	}

	/** Creates and starts {@code count} pollers for the queue, as if in as many instances. */
	public List<JobPoller> startPollers(String queue, int count) {
		List<JobPoller> started = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			JobPoller poller = poller(queue);
			poller.start();
			started.add(poller);
		}
		return started;
	}

	/**
	 * The background services of an engine of this fixture whose promoter runs every
	 * {@code interval} (retries and snoozes become due that soon), the others at their defaults.
	 */
	public Maintenance promotingEvery(Duration interval) {
		return maintenance((m) -> new MaintenanceSettings(interval, m.rescueInterval(), m.cleanupInterval(),
				m.statsInterval(), m.completedRetention(), m.failedRetention(), m.cleanupBatchSize(),
				m.deadRowsWarning()));
	}

	/** The background services of an engine of this fixture with these timings, unstarted. */
	public Maintenance maintenance(UnaryOperator<MaintenanceSettings> customizer) {
		return Maintenance.of(engine(customizer.apply(MaintenanceSettings.DEFAULT), null));
	}

	public TransactionTemplate transactionTemplate() {
		return new TransactionTemplate(this.transactionManager);
	}

	public JobRepository repository() {
		return this.repository;
	}

	public MaintenanceRepository maintenanceRepository() {
		return this.maintenanceRepository;
	}

	public JsonMapper jsonMapper() {
		return this.jsonMapper;
	}

	public JobHandlerRegistry handlers() {
		return this.handlers;
	}

	public DataSource dataSource() {
		return this.schema.dataSource();
	}

	public JdbcTemplate jdbc() {
		return this.schema.jdbcTemplate();
	}

	public TestSchema schema() {
		return this.schema;
	}

	/** The unfinished jobs' table, which claims read. */
	public String table() {
		return SchemaName.of(this.schema.name()).qualify("pgqueue_jobs");
	}

	/** Every job, unfinished and finished: the view over both tables. */
	public String allJobs() {
		return SchemaName.of(this.schema.name()).qualify("pgqueue_all_jobs");
	}

	/** Deletes every job, unfinished and finished. */
	public void deleteAllJobs() {
		jdbc().update("DELETE FROM " + table());
		jdbc().update("DELETE FROM " + finishedTable());
	}

	/** The finished jobs' table. */
	public String finishedTable() {
		return SchemaName.of(this.schema.name()).qualify("pgqueue_finished_jobs");
	}

	/**
	 * Terminates, from an administrative connection, every backend holding a lock on the jobs table
	 * (a sweep like an administrator's, a failover's or a connection-killing proxy's); returns how many.
	 */
	public int terminateBackendsLockingJobs() throws java.sql.SQLException {
		try (java.sql.Connection admin = dev.pgqueue.test.TestDatabase.get().connect();
				java.sql.PreparedStatement statement = admin.prepareStatement("""
						SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM (
						    SELECT DISTINCT pid FROM pg_locks
						    WHERE relation = ?::regclass AND granted AND pid <> pg_backend_pid()) holders
						""")) {
			statement.setString(1, table());
			try (java.sql.ResultSet rs = statement.executeQuery()) {
				rs.next();
				return rs.getInt(1);
			}
		}
	}

	/** Counts of jobs by state. */
	public Map<String, Long> countByState() {
		Map<String, Long> counts = new java.util.TreeMap<>();
		jdbc().query("SELECT state, count(*) FROM " + allJobs() + " GROUP BY state",
				(java.sql.ResultSet rs) -> {
					counts.put(rs.getString(1), rs.getLong(2));
				});
		return counts;
	}

	/** A job's row by public id, as a column map. */
	public Map<String, Object> row(UUID publicId) {
		return jdbc().queryForMap("SELECT * FROM " + allJobs() + " WHERE public_id = ?", publicId);
	}

	@Override
	public void close() {
		this.pollers.forEach((poller) -> {
			if (poller.isRunning()) {
				poller.stop();
			}
		});
		if (this.signals != null) {
			this.signals.close();
		}
		this.schema.close();
	}

	@FunctionalInterface
	public interface ThrowingFunction<T, R> {

		R apply(T value) throws Throwable;

	}

	@FunctionalInterface
	public interface ThrowingConsumer<T> {

		void accept(T value) throws Throwable;

	}


	/**
	 * The background services of one engine, to run by hand (each method runs one round on the
	 * caller's thread) or on their own threads ({@link #start()}).
	 */
	public record Maintenance(QueueEngine engine) {

		public static Maintenance of(QueueEngine engine) {
			return new Maintenance(engine);
		}

		public int promote() {
			return EngineInternals.of(this.engine).promoter().promote();
		}

		public int rescue() {
			return EngineInternals.of(this.engine).rescuer().rescue();
		}

		public int clean() {
			return EngineInternals.of(this.engine).cleaner().clean();
		}

		public int pruneEndedKeys() {
			return EngineInternals.of(this.engine).cleaner().pruneEndedKeys();
		}

		public Map<String, QueueStats> readStats() {
			return EngineInternals.of(this.engine).statsReader().readStats();
		}

		public Map<String, QueueStats> lastStats() {
			return EngineInternals.of(this.engine).statsReader().lastStats();
		}

		public LockWaits readLockWaits() {
			return EngineInternals.of(this.engine).statsReader().readLockWaits();
		}

		public OldestTransaction readOldestTransaction() {
			return EngineInternals.of(this.engine).statsReader().readOldestTransaction();
		}

		public void assessPollCycles() {
			EngineInternals.of(this.engine).statsReader().assessPollCycles();
		}

		/** Starts promoter, rescuer, cleaner and stats reader on their own threads. */
		public void start() {
			services().forEach(EngineService::start);
		}

		public void stop() {
			services().forEach(EngineService::stop);
		}

		private List<EngineService> services() {
			EngineInternals internals = EngineInternals.of(this.engine);
			return List.of(internals.promoter(), internals.rescuer(), internals.cleaner(), internals.statsReader());
		}

	}

}
