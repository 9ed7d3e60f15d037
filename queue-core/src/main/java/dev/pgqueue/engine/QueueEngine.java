package dev.pgqueue.engine;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.QueueShards;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.run.Attempt;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.shards.ShardLayout;
import dev.pgqueue.engine.shards.ShardWatch;
import dev.pgqueue.engine.status.DatabaseStatus;
import dev.pgqueue.engine.status.EngineStatus;
import dev.pgqueue.schema.QueueMigrator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.SmartLifecycle;

/**
 * The whole engine of one application, on one PostgreSQL or spread over several (shards), assembled
 * once from its settings and collaborators through {@link #builder(DataSource)} or
 * {@link #builder()}: the starter, the benchmark, the tests' fixtures and the reliability suite's
 * worker processes all build it so. One database is a set of one: each database runs a
 * {@link DatabaseEngine} (its repositories, pollers and services), and this engine runs them
 * together behind one {@link JobClient}, one {@link JobAdmin} and one {@link JobSchedules}.
 *
 * <p>Over shards, the client routes each new job to its shard, the admin finds a job on the shard its
 * id tells and merges lists and counts, the recurring jobs live on the first shard (so that each tick
 * fires once), and a watch probes every shard so that a shard that does not answer costs no caller
 * a wait. A shard that did not answer when the engine was built (with
 * {@link QueueEngineBuilder#startWhileDown}) joins once it does.
 *
 * <p>Listeners are registered in its {@link #handlers() handler registry} before {@link #start()}. As a
 * {@link SmartLifecycle} it starts late and stops early: after everything a listener may use, before
 * the data sources.
 */
public final class QueueEngine implements SmartLifecycle, AutoCloseable {

	/** Late start and early stop: after everything a listener may use, before the data source. */
	public static final int PHASE = Integer.MAX_VALUE - 100;

	private static final Logger logger = LoggerFactory.getLogger(QueueEngine.class);

	/** Each database's part, in declared order; the first keeps the recurring jobs. */
	private final Map<String, DatabaseEngine> databases;

	private final @Nullable ShardLayout layout;

	private final @Nullable ShardWatch watch;

	private final @Nullable ShardLatecomers latecomers;

	private final JobClient client;

	private final JobAdmin admin;

	private final QueueShards shards;

	private final Map<String, QueueMigrator> migrators;

	private final List<AutoCloseable> closeWith;

	private volatile boolean running;

	/** An engine on one database. */
	QueueEngine(DatabaseEngine database, @Nullable QueueMigrator migrator, List<AutoCloseable> closeWith) {
		this.databases = Map.of("", database);
		this.layout = null;
		this.watch = null;
		this.latecomers = null;
		this.client = database.client();
		this.admin = database.admin();
		this.shards = new Shards(database.dataSource());
		this.migrators = (migrator != null) ? Map.of("", migrator) : Map.of();
		this.closeWith = List.copyOf(closeWith);
	}

	/**
	 * An engine over shards.
	 * @param away the shards that did not answer when it was built, with why
	 */
	QueueEngine(ShardLayout layout, Map<String, DatabaseEngine> databases, Map<String, QueueMigrator> migrators,
			Map<String, RuntimeException> away, ShardWatch watch, boolean spillUnkeyed, List<AutoCloseable> closeWith) {
		this.databases = new LinkedHashMap<>(databases);
		this.layout = layout;
		this.watch = watch;
		this.migrators = Map.copyOf(migrators);
		this.latecomers = away.isEmpty() ? null : new ShardLatecomers(this.databases, migrators, away, watch);
		this.client = layout.client((shard) -> database(shard).dataSource(), (shard) -> database(shard).client(),
				watch, spillUnkeyed,
				new EnqueueSize(databases.values().iterator().next().settings().maxJobsPerEnqueue())::check);
		Map<String, JdbcJobAdmin> admins = new LinkedHashMap<>();
		this.databases.forEach((shard, database) -> admins.put(shard, database.jdbcAdmin()));
		this.admin = new ShardedJobAdmin(layout, admins, watch::whyDown);
		this.shards = new Shards(layout.transactionDataSource((shard) -> database(shard).dataSource()));
		this.closeWith = List.copyOf(closeWith);
	}

	/** An engine on this one database; see {@link QueueEngineBuilder} for the rest. */
	public static QueueEngineBuilder builder(DataSource dataSource) {
		return new QueueEngineBuilder(dataSource);
	}

	/** An engine over the shards {@link QueueEngineBuilder#shard given to the builder}. */
	public static QueueEngineBuilder builder() {
		return new QueueEngineBuilder();
	}

	/**
	 * Enqueues jobs, each on its shard over shards; wakes this application's pollers after commit.
	 */
	public JobClient client() {
		return this.client;
	}

	/** Inspects and changes jobs and queues, on every shard over shards. */
	public JobAdmin admin() {
		return this.admin;
	}

	/** Recurring jobs: create, change, pause, run and delete schedules; on the first shard over shards. */
	public JobSchedules schedules() {
		return first().schedules();
	}

	/** Where listeners are registered, before {@link #start()}; shared by every database. */
	public JobHandlerRegistry handlers() {
		return first().handlers();
	}

	/** The configured queues, and the settings of any other. */
	public QueueCatalog queues() {
		return first().queues();
	}

	/** Whether this engine runs jobs (pollers and services), or only enqueues and administers them. */
	public boolean processing() {
		return first().processing();
	}

	/** The shards and their DataSources; names none for an engine on one database. */
	public QueueShards shards() {
		return this.shards;
	}

	/** Which shard holds a key's jobs and which shard a public id tells; empty on one database. */
	public Optional<ShardLayout> layout() {
		return Optional.ofNullable(this.layout);
	}

	/**
	 * What the engine knows of itself now: each database's queues, pollers, limits, signals, readings and
	 * services; over shards, which answer and the slots each owns. Read from memory, but for the rate
	 * limits' use in the last period, which each database that answers is asked for; a shard the watch
	 * reports down is not asked, and its status leaves that use out. Health, info, the endpoint and the
	 * dashboard show this.
	 */
	public EngineStatus status() {
		List<DatabaseStatus> databases = new ArrayList<>(this.databases.size());
		Map<String, Integer> slots = (this.layout != null) ? this.layout.slotCounts() : Map.of();
		for (DatabaseEngine database : this.databases.values()) {
			String shard = database.shard();
			String down = (shard != null) ? this.shards.whyDown(shard) : null;
			DatabaseStatus status = database.status(down == null);
			databases.add((shard != null) ? status.onShard(down, slots.getOrDefault(shard, 0)) : status);
		}
		return new EngineStatus(Instant.now(), databases);
	}

	/** The part of the engine on its one database; over shards, that of the first shard. */
	public DatabaseEngine database() {
		return first();
	}

	/** The part of the engine on one shard. */
	public DatabaseEngine database(String shard) {
		DatabaseEngine database = (this.layout != null) ? this.databases.get(shard) : null;
		if (database == null) {
			throw new IllegalArgumentException("No shard '" + shard + "'; the shards are " + this.shards.names()
					+ " (pgqueue.shards)");
		}
		return database;
	}

	/** Each database's part, in declared order: one, or one per shard. */
	public List<DatabaseEngine> databases() {
		return List.copyOf(this.databases.values());
	}

	/** Migrates the tables of a database: of the engine's one database ({@code null}), or of a shard. */
	public Optional<QueueMigrator> migrator(@Nullable String shard) {
		return Optional.ofNullable(this.migrators.get((shard != null) ? shard : ""));
	}

	/**
	 * Runs the due jobs of a queue on the calling thread, on every database in turn, as the queue's
	 * pollers run them; see {@link DatabaseEngine#runDueHere}.
	 */
	public List<Attempt> runDueHere(String queue, int maxJobs) {
		List<Attempt> attempts = new ArrayList<>();
		for (DatabaseEngine database : this.databases.values()) {
			if (attempts.size() < maxJobs && answers(database)) {
				attempts.addAll(database.runDueHere(queue, maxJobs - attempts.size()));
			}
		}
		return attempts;
	}

	/**
	 * Runs the job with this public id on the calling thread now, on the database that holds it; see
	 * {@link DatabaseEngine#runHere}.
	 */
	public Optional<Attempt> runHere(UUID id) {
		if (this.layout != null) {
			Optional<String> shard = this.layout.shardOf(id);
			if (shard.isPresent() && answers(database(shard.get()))) {
				Optional<Attempt> attempt = database(shard.get()).runHere(id);
				if (attempt.isPresent()) {
					return attempt;
				}
			}
		}
		for (DatabaseEngine database : this.databases.values()) {
			if (answers(database)) {
				Optional<Attempt> attempt = database.runHere(id);
				if (attempt.isPresent()) {
					return attempt;
				}
			}
		}
		return Optional.empty();
	}

	private boolean answers(DatabaseEngine database) {
		return database.shard() == null || this.latecomers == null || !this.latecomers.isAway(database.shard());
	}

	private DatabaseEngine first() {
		return this.databases.values().iterator().next();
	}

	/**
	 * Starts the shards' watch, then each database's part in declared order (a shard that did not answer
	 * at build waits for its turn with the latecomers).
	 * @throws InvalidQueueConfigurationException when a configured queue has no listener here, or a
	 * queue with two-phase commit has no {@link dev.pgqueue.InDoubtJobResolver}
	 */
	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		if (this.watch != null) {
			this.watch.start();
		}
		if (this.latecomers != null) {
			this.latecomers.holdDown();
		}
		List<DatabaseEngine> started = new ArrayList<>();
		try {
			for (DatabaseEngine database : this.databases.values()) {
				if (answers(database)) {
					database.start();
					started.add(database);
				}
			}
		}
		catch (RuntimeException ex) {
			started.forEach(DatabaseEngine::stop);
			if (this.watch != null) {
				this.watch.stop();
			}
			throw ex;
		}
		this.running = true;
		if (this.latecomers != null && this.latecomers.anyAway()) {
			this.latecomers.warn();
			this.latecomers.start();
		}
	}

	@Override
	public void stop() {
		CountDownLatch stopped = new CountDownLatch(1);
		stop(stopped::countDown);
		try {
			stopped.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Stops every database's part at once (each its pollers first, then its services), then the shards'
	 * watch; calls {@code callback} when all have stopped.
	 */
	@Override
	public void stop(Runnable callback) {
		synchronized (this) {
			if (!this.running) {
				callback.run();
				return;
			}
			this.running = false;
		}
		if (this.latecomers != null) {
			this.latecomers.stop();
		}
		List<DatabaseEngine> all = List.copyOf(this.databases.values());
		AtomicInteger left = new AtomicInteger(all.size());
		for (DatabaseEngine database : all) {
			database.stop(() -> {
				if (left.decrementAndGet() == 0) {
					if (this.watch != null) {
						this.watch.stop();
					}
					callback.run();
				}
			});
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

	/**
	 * Stops everything, including pollers started outside {@link #start()}, then closes what was made
	 * for the databases alone (the pools made for shards given by connection settings).
	 */
	@Override
	public void close() {
		stop();
		if (this.latecomers != null) {
			this.latecomers.stop();
		}
		if (this.watch != null) {
			this.watch.stop();
		}
		for (DatabaseEngine database : this.databases.values()) {
			try {
				database.close();
			}
			catch (RuntimeException ex) {
				logger.warn("pgqueue could not close its part on {}", describe(database), ex);
			}
		}
		for (AutoCloseable resource : this.closeWith) {
			try {
				resource.close();
			}
			catch (Exception ex) {
				logger.warn("pgqueue could not close {}", resource, ex);
			}
		}
	}

	private static String describe(DatabaseEngine database) {
		return (database.shard() != null) ? "shard '" + database.shard() + "'" : "its database";
	}

	/** The engine's shards as users see them. */
	private final class Shards implements QueueShards {

		private final DataSource transactionDataSource;

		Shards(DataSource transactionDataSource) {
			this.transactionDataSource = transactionDataSource;
		}

		@Override
		public List<String> names() {
			return (QueueEngine.this.layout != null) ? QueueEngine.this.layout.shards() : List.of();
		}

		@Override
		public @Nullable String whyDown(String shard) {
			database(shard);
			return (QueueEngine.this.watch != null) ? QueueEngine.this.watch.whyDown(shard) : null;
		}

		@Override
		public DataSource dataSource(String shard) {
			return database(shard).dataSource();
		}

		@Override
		public DataSource transactionDataSource() {
			return this.transactionDataSource;
		}

		@Override
		public Optional<String> shardOfKey(String key) {
			return Optional.ofNullable(QueueEngine.this.layout).map((layout) -> layout.shardOfKey(key));
		}

		@Override
		public Optional<String> shardOf(UUID id) {
			return (QueueEngine.this.layout != null) ? QueueEngine.this.layout.shardOf(id) : Optional.empty();
		}

	}

}
