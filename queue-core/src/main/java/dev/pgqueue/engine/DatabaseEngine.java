package dev.pgqueue.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import dev.pgqueue.InDoubtJobResolver;
import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobRequest;
import dev.pgqueue.engine.job.JobEvents;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.maintenance.Cleaner;
import dev.pgqueue.engine.maintenance.HistoryFlusher;
import dev.pgqueue.engine.maintenance.PollingHeartbeat;
import dev.pgqueue.engine.maintenance.Promoter;
import dev.pgqueue.engine.maintenance.Rescuer;
import dev.pgqueue.engine.control.RunningJobsWatch;
import dev.pgqueue.engine.maintenance.StatisticsRefresher;
import dev.pgqueue.engine.maintenance.StatsReader;
import dev.pgqueue.engine.maintenance.VacuumWatch;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.poll.PollerWakeUps;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.run.Attempt;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.run.QueueHistoryRecorder;
import dev.pgqueue.engine.control.RunningJobs;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.service.PooledConnections;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.HistorySettings;
import dev.pgqueue.engine.settings.ScheduleSettings;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.engine.schedules.JdbcJobSchedules;
import dev.pgqueue.engine.schedules.ScheduleTicker;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.sql.ControlRepository;
import dev.pgqueue.engine.sql.HistoryRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.sql.Repositories;
import dev.pgqueue.engine.status.DatabaseStatus;
import dev.pgqueue.engine.status.StatusReading;
import dev.pgqueue.engine.twophase.InDoubtResolver;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The part of the {@link QueueEngine} that runs on one database: its repositories, its
 * {@link JobClient} and {@link JobAdmin}, and, when it processes jobs, one {@link JobPoller} per queue
 * that has listeners, the background services and the notification listener. An engine on one
 * database has one; an engine over shards has one per shard. Built and run only by its
 * {@link QueueEngine}, which gives it through {@link QueueEngine#database()}. Public are only the
 * parts that code outside this package reads: the starter (admin, schedules, handlers), the test kit
 * (settings, jobs table, running jobs on the calling thread) and the benchmark (pollers, wake-ups,
 * maintenance services, schedule ticker). Tests reach the others through a gateway of their own
 * sources in this package ({@code EngineInternals}), which never ships.
 *
 * <p>{@link #start()} checks the configuration against the registered listeners, creates the pollers
 * and starts everything: the polling heartbeat and the notification listener first, then the
 * services, then the pollers (when it does not process jobs, only the polling heartbeat, which tells
 * its enqueues which queues are polled elsewhere). {@link #stop(Runnable)} stops in the reverse
 * order, the pollers of every queue at once (each gets the shutdown timeout to let its running jobs
 * finish).
 */
public final class DatabaseEngine {

	private static final Logger logger = LoggerFactory.getLogger(DatabaseEngine.class);

	private final @Nullable String shard;

	private final DataSource dataSource;

	private final EngineSettings settings;

	private final QueueCatalog queues;

	private final JobHandlerRegistry handlers;

	private final JobRepository jobs;

	private final QueuePauses pauses;

	private final PollerWakeUps wakeUps = new PollerWakeUps();

	private final @Nullable NotificationThrottle throttle;

	private final JobBirths births;

	private final JdbcJobClient client;

	private final JdbcJobAdmin admin;

	private final boolean processing;

	private final boolean twoPhaseResolverGiven;

	private final JobRunner runner;

	private final QueueSignals signals;

	private final JobPollerFactory pollerFactory;

	private final @Nullable NotificationListener notifications;

	private final Promoter promoter;

	private final Rescuer rescuer;

	private final Cleaner cleaner;

	private final ScheduleSettings scheduleSettings;

	private final JdbcJobSchedules schedules;

	private final ScheduleTicker scheduleTicker;

	private final StatsReader statsReader;

	private final StatisticsRefresher statisticsRefresher;

	private final PollingHeartbeat pollingHeartbeat;

	private final @Nullable InDoubtResolver inDoubtResolver;

	private final RunningJobs runningJobs;

	private final RunningJobsWatch runningJobsWatch;

	private final HistorySettings historySettings;

	private final QueueHistoryRecorder historyRecorder;

	private final HistoryFlusher historyFlusher;

	/** The background services and the notification listener, in the order they start. */
	private final List<EngineService> services = new ArrayList<>();

	private final List<JobPoller> pollers = new ArrayList<>();

	private volatile boolean running;

	DatabaseEngine(EngineParts parts, EngineDatabase database) {
		this.shard = database.shard;
		this.dataSource = database.dataSource;
		this.settings = (database.schema != null) ? parts.settings().withSchema(database.schema) : parts.settings();
		this.queues = parts.queues();
		this.handlers = parts.handlers();
		SchemaName schema = this.settings.schema();
		JdbcTemplate jdbc = (database.jdbcTemplate != null) ? database.jdbcTemplate : new JdbcTemplate(this.dataSource);
		QueueMetrics metrics = (database.metrics != null) ? database.metrics : parts.metrics();
		ScheduleSettings scheduleSettings = database.keepsSchedules ? parts.schedules()
				: parts.schedules().withDeclared(List.of());
		boolean notify = this.settings.notifications();
		Repositories sql = Repositories.on(jdbc, schema, notify);
		if (parts.jobs() != null) {
			sql = sql.withJobs(parts.jobs());
		}
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
		ControlRepository controls = new ControlRepository(jdbc, schema, notify);
		this.historySettings = parts.history();
		HistoryRepository history = new HistoryRepository(jdbc, schema);
		this.admin = new JdbcJobAdmin(sql.admin(), this.jobs, this.pauses, this.wakeUps, parts.adminCaller(), events,
				controls, history, this.historySettings.retention());
		// Only an engine that runs its flusher records: counts nobody writes would pile up.
		this.historyRecorder = (this.processing && this.historySettings.enabled()) ? new QueueHistoryRecorder()
				: QueueHistoryRecorder.OFF;
		this.historyFlusher = new HistoryFlusher(this.historyRecorder, history, this.historySettings.flushInterval());
		this.twoPhaseResolverGiven = parts.inDoubtJobResolver() != null;
		this.runningJobs = new RunningJobs();
		JobRunner runner = new JobRunner(this.handlers, metrics, parts.observations(), this.settings.workers(),
				parts.interceptors(), events, this.runningJobs, this.historyRecorder);
		this.runner = (this.shard != null) ? runner.onShard(this.shard) : runner;
		this.signals = (parts.signals() != null) ? parts.signals()
				: new QueueSignals(this.jobs, metrics, this.settings.slaWindow());
		PlatformTransactionManager manager = database.transactionManager;
		this.pollerFactory = new JobPollerFactory(this.settings, this.queues, sql, this.runner,
				(manager != null) ? new TransactionTemplate(manager) : null, metrics, this.signals,
				parts.workerExecutor(), parts.claimFloors(), PooledConnections.of(this.dataSource));
		this.notifications = (this.processing && notify)
				? new NotificationListener(
						(database.notificationConnections != null) ? database.notificationConnections
								: NotificationConnections.of(this.dataSource),
						this.settings.livenessTimeout(), this.jobs.channel(), this.wakeUps,
						parts.pauseNotifications() ? this.pauses : null, ControlRepository.channel(schema),
						this::cancelAnnounced)
				: null;
		this.runningJobsWatch = new RunningJobsWatch(this.runningJobs, controls);
		boolean twoPhase = this.queues.configuredQueues()
			.stream()
			.anyMatch((queue) -> this.queues.settings(queue).twoPhaseCommit());
		InDoubtResolver resolver = (twoPhase && parts.inDoubtJobResolver() != null)
				? new InDoubtResolver(sql.prepared(), schema, this.settings.twoPhase(),
						this.handlers, parts.inDoubtJobResolver(), metrics)
				: null;
		MaintenanceRepository maintenance = sql.maintenance();
		MaintenanceSettings timings = this.settings.maintenance();
		this.promoter = new Promoter(maintenance, timings.promoteInterval());
		this.rescuer = new Rescuer(maintenance, metrics, timings.rescueInterval(),
				this.settings.workers().attemptHistory());
		this.cleaner = new Cleaner(maintenance, sql.unique(), timings, history, this.historySettings.retention(),
				sql.rates());
		this.scheduleSettings = scheduleSettings;
		this.schedules = new JdbcJobSchedules(sql.schedules(), this.births, parts.jsonMapper(), this.queues,
				this.handlers::queueOf, parts.adminCaller()::name);
		this.scheduleTicker = new ScheduleTicker(sql.schedules(), this.births,
				new TransactionTemplate((manager != null) ? manager : new DataSourceTransactionManager(this.dataSource)),
				this.queues, metrics, scheduleSettings.tickInterval(), scheduleSettings.grace());
		this.statsReader = new StatsReader(maintenance, metrics, timings.statsInterval(), this::knownQueues,
				this.handlers, this.signals, this.pauses, new VacuumWatch(schema, timings.deadRowsWarning()),
				this.pollingHeartbeat);
		this.statisticsRefresher = new StatisticsRefresher(maintenance);
		this.inDoubtResolver = resolver;
		this.services.add(this.pollingHeartbeat);
		if (this.processing) {
			if (this.notifications != null) {
				this.services.add(this.notifications);
			}
			this.services.addAll(List.of(this.promoter, this.rescuer, this.cleaner, this.statsReader,
					this.statisticsRefresher, this.scheduleTicker, this.runningJobsWatch));
			if (this.historyRecorder.enabled()) {
				this.services.add(this.historyFlusher);
			}
			if (resolver != null) {
				this.services.add(resolver);
			}
		}
		this.services.forEach((service) -> service.health().countIn(metrics::serviceFailed));
		this.signals.health().countIn(metrics::serviceFailed);
		if (this.throttle != null) {
			this.throttle.health().countIn(metrics::serviceFailed);
		}
	}

	/**
	 * A cancel announcement is a hint, never the request: any role that can connect may send a
	 * {@code NOTIFY}, so the watch reads the request (and who made it) from the controls table at once,
	 * and a job is cancelled only when its row there says so.
	 */
	private void cancelAnnounced(String payload) {
		Long id = ControlRepository.announcedJob(payload);
		if (id != null && this.runningJobs.isRunning(id)) {
			this.runningJobsWatch.runSoon();
		}
	}

	/** The attempts running in this application. */
	RunningJobs runningJobs() {
		return this.runningJobs;
	}

	/** Stops running jobs an operator cancelled, writes their progress. */
	RunningJobsWatch runningJobsWatch() {
		return this.runningJobsWatch;
	}

	/** The shard this database is, or {@code null} when the engine runs on this one database alone. */
	@Nullable String shard() {
		return this.shard;
	}

	/** The pool of connections to this database. */
	DataSource dataSource() {
		return this.dataSource;
	}

	/** Enqueues jobs; wakes this application's pollers after commit. */
	JobClient client() {
		return this.client;
	}

	/** The admin as its class, for the admin over every shard. */
	JdbcJobAdmin jdbcAdmin() {
		return this.admin;
	}

	/** Inspects and changes jobs and queues. */
	public JobAdmin admin() {
		return this.admin;
	}

	/** Where listeners are registered, before {@link #start()}. */
	public JobHandlerRegistry handlers() {
		return this.handlers;
	}

	QueueCatalog queues() {
		return this.queues;
	}

	public EngineSettings settings() {
		return this.settings;
	}

	/** Which queues operators paused. */
	QueuePauses pauses() {
		return this.pauses;
	}

	/** What the pollers' claims recorded: the degradation signals of each polled queue. */
	QueueSignals signals() {
		return this.signals;
	}

	/** The pollers to wake when their queue has new jobs. */
	public PollerWakeUps wakeUps() {
		return this.wakeUps;
	}

	/** Runs one attempt of a job and records its outcome. */
	JobRunner runner() {
		return this.runner;
	}

	/** The statements of the jobs table. */
	public JobRepository jobs() {
		return this.jobs;
	}

	/** Whether this engine runs jobs (pollers and services), or only enqueues and administers them. */
	public boolean processing() {
		return this.processing;
	}

	/** Makes due scheduled jobs available; started only when this engine processes jobs. */
	public Promoter promoter() {
		return this.promoter;
	}

	/** Returns jobs whose lease expired; started only when this engine processes jobs. */
	public Rescuer rescuer() {
		return this.rescuer;
	}

	/** Recurring jobs: create, change, pause, run and delete schedules. */
	public JdbcJobSchedules schedules() {
		return this.schedules;
	}

	/** The service that fires due ticks. */
	public ScheduleTicker scheduleTicker() {
		return this.scheduleTicker;
	}

	/** The schedules declared to this engine and its ticker's timings. */
	public ScheduleSettings scheduleSettings() {
		return this.scheduleSettings;
	}

	/** Prunes finished jobs past their retention; started only when this engine processes jobs. */
	public Cleaner cleaner() {
		return this.cleaner;
	}

	/**
	 * Counts each queue's attempts, waits and run times per minute, in memory; records nothing unless
	 * this engine processes jobs with the history enabled.
	 */
	QueueHistoryRecorder historyRecorder() {
		return this.historyRecorder;
	}

	/**
	 * Writes what the {@link #historyRecorder() recorder} counted to the queues' history; started only
	 * when this engine processes jobs with the history enabled.
	 */
	HistoryFlusher historyFlusher() {
		return this.historyFlusher;
	}

	/** Whether the queues' history is recorded, and how long it is kept. */
	HistorySettings historySettings() {
		return this.historySettings;
	}

	/** Analyzes the jobs table when the planner's estimate of it is stale; started only when this engine processes jobs. */
	public StatisticsRefresher statisticsRefresher() {
		return this.statisticsRefresher;
	}

	/** Reads what metrics and health show, and keeps the last readings; started only when this engine processes jobs. */
	public StatsReader statsReader() {
		return this.statsReader;
	}

	/**
	 * Records which queues this engine polls and reads which queues any instance polls; started
	 * whether or not this engine processes jobs.
	 */
	PollingHeartbeat pollingHeartbeat() {
		return this.pollingHeartbeat;
	}

	/** Finishes prepared transactions dead workers left; {@code null} unless a queue has two-phase commit. */
	@Nullable InDoubtResolver inDoubtResolver() {
		return this.inDoubtResolver;
	}

	/**
	 * The services {@link #start()} starts, in that order: the polling heartbeat, the notification
	 * listener (when notifications are on), promoter, rescuer, cleaner, stats reader, statistics
	 * refresher, schedule ticker, running jobs watch, history flusher (when the history is enabled) and
	 * in-doubt resolver; only the polling heartbeat when this engine does not process
	 * jobs. The pollers come after them.
	 */
	List<EngineService> services() {
		return List.copyOf(this.services);
	}

	/** The services, and the checks of short claims where this engine claims jobs: what the status names. */
	private List<EngineService> watchedServices() {
		if (!this.processing) {
			return services();
		}
		List<EngineService> watched = new ArrayList<>(this.services);
		watched.add(this.signals);
		return watched;
	}

	/** What this database's part knows of itself now, read from memory. */
	DatabaseStatus status() {
		return status(true);
	}

	/**
	 * @param answers whether the database answers; the rate limits' use, read from it, is left out when
	 * it does not
	 */
	DatabaseStatus status(boolean answers) {
		return StatusReading.read(this.shard, this.processing, this.settings.workers().deleteCompleted(), pollers(),
				this.statsReader, this.inDoubtResolver, watchedServices(), answers);
	}

	/** The pollers {@link #start()} made, one per queue with listeners, and those {@link #newPoller} made. */
	public synchronized List<JobPoller> pollers() {
		return List.copyOf(this.pollers);
	}

	/**
	 * A new, unstarted poller of the queue for the kinds registered in it, woken with the others.
	 * Stopped by {@link #stop()} if started. For tests and benchmarks that run several pollers of one
	 * queue, as several instances would.
	 */
	JobPoller newPoller(String queue) {
		return newPoller(queue, this.pauses);
	}

	/**
	 * A new, unstarted poller of the queue that asks {@code pauses} whether its queue is paused, as
	 * the poller of another instance would.
	 */
	public synchronized JobPoller newPoller(String queue, @Nullable QueuePauses pauses) {
		JobPoller poller = this.pollerFactory.create(queue, this.handlers.kindsOf(queue), pauses);
		this.pollers.add(poller);
		this.wakeUps.register(poller);
		return poller;
	}

	/**
	 * Runs the due jobs of a queue on the calling thread, as the queue's poller runs them on its
	 * workers (the same claims, transactions, listeners, outcomes and metrics), until none is left or
	 * about {@code maxJobs} were claimed; jobs its listeners enqueue into the queue meanwhile run too.
	 * Scheduled jobs that are due already are made available first, as the promoter does. For tests
	 * that decide when jobs run (the test kit), with or without pollers: those skip the jobs this
	 * holds, and this skips theirs. The calling thread must not be in a transaction, which the
	 * batches would join.
	 * @return the attempts whose outcomes were recorded; none when no listener here handles the queue
	 */
	public List<Attempt> runDueHere(String queue, int maxJobs) {
		String[] kinds = this.handlers.kindsOf(queue);
		if (kinds.length == 0) {
			return List.of();
		}
		this.promoter.promote();
		return this.pollerFactory.callingThreadRun(queue, kinds, null).run(maxJobs);
	}

	/**
	 * Runs the job with this public id on the calling thread now, whether it is due or scheduled for
	 * later, as its queue's poller would run it when due; see {@link #runDueHere}.
	 * @return its attempt; empty when it is neither available nor scheduled, when another transaction
	 * holds it (a poller's batch is running it), or when no listener of this application handles its
	 * kind in its queue
	 */
	public Optional<Attempt> runHere(UUID id) {
		JobDetails job = this.admin.find(id).orElse(null);
		if (job == null || !job.queue().equals(this.handlers.queueOf(job.kind()))) {
			return Optional.empty();
		}
		// No limit here: the job's claims take it once (JobClaims.one), so the run ends at the next claim.
		List<Attempt> attempts = this.pollerFactory.callingThreadRun(job.queue(), new String[] { job.kind() }, id)
			.run(Integer.MAX_VALUE);
		return attempts.isEmpty() ? Optional.empty() : Optional.of(attempts.get(0));
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

	private Set<String> knownQueues() {
		Set<String> known = new TreeSet<>(this.queues.configuredQueues());
		known.addAll(this.handlers.queues());
		return known;
	}

	/**
	 * Checks whether the jobs table gets vacuumed (a warning when it does not, never a failure) and
	 * the configuration against the registered listeners, creates one poller per queue that has
	 * listeners and starts the notification listener, the services and the pollers. Only checks and
	 * starts the polling heartbeat when this engine does not process jobs.
	 * @throws InvalidQueueConfigurationException when a configured queue has no listener here, or a
	 * queue with two-phase commit has no {@link InDoubtJobResolver}
	 */
	synchronized void start() {
		if (this.running) {
			return;
		}
		// Warns once, at start-up, when the jobs table is not vacuumed as its settings assume; the stats
		// reader then warns again only when that changes. Never throws.
		this.statsReader.checkVacuum();
		this.scheduleSettings.declared().forEach(this.schedules::saveDeclared);
		if (!this.processing) {
			logger.info("pgqueue processing is off (pgqueue.enabled=false): jobs are enqueued but not run here");
			this.services.forEach(EngineService::start);
			this.running = true;
			return;
		}
		this.queues.requireListeners(this.handlers.queues(), this.twoPhaseResolverGiven);
		if (this.handlers.queues().isEmpty()) {
			logger.info("pgqueue found no @JobListener methods; no queue is polled in this application");
		}
		List<JobPoller> created = new ArrayList<>();
		for (String queue : this.handlers.queues()) {
			created.add(newPoller(queue));
		}
		this.services.forEach(EngineService::start);
		created.forEach(JobPoller::start);
		this.running = true;
	}

	void stop() {
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
	 * Stops the pollers, all at once, then the services and the notification listener; calls
	 * {@code callback} when all have stopped.
	 */
	void stop(Runnable callback) {
		List<JobPoller> running;
		synchronized (this) {
			if (!this.running) {
				callback.run();
				return;
			}
			this.running = false;
			running = this.pollers.stream().filter(JobPoller::isRunning).toList();
		}
		Runnable afterPollers = () -> {
			stopServices();
			callback.run();
		};
		if (running.isEmpty()) {
			afterPollers.run();
			return;
		}
		AtomicInteger left = new AtomicInteger(running.size());
		for (JobPoller poller : running) {
			poller.stop(() -> {
				if (left.decrementAndGet() == 0) {
					afterPollers.run();
				}
			});
		}
	}

	/** Stops the services that run, in the reverse of their start order. */
	private void stopServices() {
		for (int i = this.services.size() - 1; i >= 0; i--) {
			EngineService service = this.services.get(i);
			if (service.isRunning()) {
				service.stop();
			}
		}
		// Services a caller started by hand (tests, benchmarks) stop too.
		for (EngineService service : List.of(this.promoter, this.rescuer, this.cleaner, this.statsReader,
				this.historyFlusher, this.pollingHeartbeat)) {
			if (service.isRunning()) {
				service.stop();
			}
		}
		if (this.inDoubtResolver != null && this.inDoubtResolver.isRunning()) {
			this.inDoubtResolver.stop();
		}
	}

	boolean isRunning() {
		return this.running;
	}

	/** Stops everything, including pollers started outside {@link #start()}, and the notification throttle. */
	void close() {
		stop();
		pollers().stream().filter(JobPoller::isRunning).forEach(JobPoller::stop);
		stopServices();
		if (this.throttle != null) {
			this.throttle.close();
		}
		this.signals.close();
	}

}
