package dev.pgqueue.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

import javax.sql.DataSource;

import dev.pgqueue.InDoubtJobResolver;
import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.engine.control.RunningJobs;
import dev.pgqueue.engine.control.RunningJobsWatch;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.maintenance.Cleaner;
import dev.pgqueue.engine.maintenance.HistoryFlusher;
import dev.pgqueue.engine.maintenance.PollingHeartbeat;
import dev.pgqueue.engine.maintenance.Promoter;
import dev.pgqueue.engine.maintenance.Rescuer;
import dev.pgqueue.engine.maintenance.StatisticsRefresher;
import dev.pgqueue.engine.maintenance.StatsReader;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.poll.PollerWakeUps;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.run.Attempt;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.run.QueueHistoryRecorder;
import dev.pgqueue.engine.schedules.JdbcJobSchedules;
import dev.pgqueue.engine.schedules.ScheduleTicker;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.HistorySettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.ScheduleSettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.status.DatabaseStatus;
import dev.pgqueue.engine.status.StatusReading;
import dev.pgqueue.engine.twophase.InDoubtResolver;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>It runs what {@link DatabaseParts} (repositories, client, admin, runner, poller factory) and
 * {@link DatabaseServices} (the background services, in their start order) assemble, and keeps what
 * happens to them afterwards: it starts and stops them, makes the pollers ({@link DatabasePollers}),
 * reads its status and hands out runs on the calling thread ({@link CallingThreadRuns}).
 *
 * <p>{@link #start()} checks the configuration against the registered listeners, makes the pollers
 * and starts the services, then the pollers (when it does not process jobs, only the polling
 * heartbeat, which tells its enqueues which queues are polled elsewhere); {@link #stop(Runnable)}
 * stops in the reverse order, the pollers of every queue at once.
 */
public final class DatabaseEngine {

	private static final Logger logger = LoggerFactory.getLogger(DatabaseEngine.class);

	private final DatabaseParts parts;

	private final DatabaseServices services;

	private final boolean twoPhaseResolverGiven;

	private final DatabasePollers pollers;

	private final CallingThreadRuns runs;

	private volatile boolean running;

	DatabaseEngine(EngineParts engine, EngineDatabase database) {
		this.parts = new DatabaseParts(engine, database);
		this.services = new DatabaseServices(engine, database, this.parts);
		this.pollers = new DatabasePollers(this.parts.pollerFactory(), this.parts.handlers(), this.parts.wakeUps());
		this.runs = new CallingThreadRuns(this.parts.pollerFactory(), this.parts.handlers(), this.services.promoter(),
				this.parts.admin());
		this.twoPhaseResolverGiven = engine.inDoubtJobResolver() != null;
	}

	RunningJobs runningJobs() {
		return this.parts.runningJobs();
	}

	RunningJobsWatch runningJobsWatch() {
		return this.services.runningJobsWatch();
	}

	@Nullable String shard() {
		return this.parts.shard();
	}

	DataSource dataSource() {
		return this.parts.dataSource();
	}

	JobClient client() {
		return this.parts.client();
	}

	/** The admin as its class, for the admin over every shard. */
	JdbcJobAdmin jdbcAdmin() {
		return this.parts.admin();
	}

	/** Inspects and changes jobs and queues. */
	public JobAdmin admin() {
		return this.parts.admin();
	}

	/** Where listeners are registered, before {@link #start()}. */
	public JobHandlerRegistry handlers() {
		return this.parts.handlers();
	}

	QueueCatalog queues() {
		return this.parts.queues();
	}

	public EngineSettings settings() {
		return this.parts.settings();
	}

	QueuePauses pauses() {
		return this.parts.pauses();
	}

	QueueSignals signals() {
		return this.parts.signals();
	}

	/** The pollers to wake when their queue has new jobs. */
	public PollerWakeUps wakeUps() {
		return this.parts.wakeUps();
	}

	JobRunner runner() {
		return this.parts.runner();
	}

	/** The statements of the jobs table. */
	public JobRepository jobs() {
		return this.parts.jobs();
	}

	/** Whether this engine runs jobs (pollers and services), or only enqueues and administers them. */
	public boolean processing() {
		return this.parts.processing();
	}

	/** Makes due scheduled jobs available; started only when this engine processes jobs. */
	public Promoter promoter() {
		return this.services.promoter();
	}

	/** Returns jobs whose lease expired; started only when this engine processes jobs. */
	public Rescuer rescuer() {
		return this.services.rescuer();
	}

	/** Recurring jobs: create, change, pause, run and delete schedules. */
	public JdbcJobSchedules schedules() {
		return this.parts.schedules();
	}

	/** The service that fires due ticks. */
	public ScheduleTicker scheduleTicker() {
		return this.services.scheduleTicker();
	}

	/** The schedules declared to this engine and its ticker's timings. */
	public ScheduleSettings scheduleSettings() {
		return this.parts.scheduleSettings();
	}

	/** Prunes finished jobs past their retention; started only when this engine processes jobs. */
	public Cleaner cleaner() {
		return this.services.cleaner();
	}

	QueueHistoryRecorder historyRecorder() {
		return this.parts.historyRecorder();
	}

	HistoryFlusher historyFlusher() {
		return this.services.historyFlusher();
	}

	HistorySettings historySettings() {
		return this.parts.historySettings();
	}

	/** Analyzes the jobs table when the planner's estimate of it is stale; started only when this engine processes jobs. */
	public StatisticsRefresher statisticsRefresher() {
		return this.services.statisticsRefresher();
	}

	/** Reads what metrics and health show, and keeps the last readings; started only when this engine processes jobs. */
	public StatsReader statsReader() {
		return this.services.statsReader();
	}

	PollingHeartbeat pollingHeartbeat() {
		return this.parts.pollingHeartbeat();
	}

	@Nullable InDoubtResolver inDoubtResolver() {
		return this.services.inDoubtResolver();
	}

	/** The services {@link #start()} starts, in that order; see {@link DatabaseServices}. */
	List<EngineService> services() {
		return this.services.inStartOrder();
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
		return StatusReading.read(shard(), processing(), settings().workers().deleteCompleted(), pollers(), statsReader(),
				inDoubtResolver(), this.services.watched(), answers);
	}

	/** The pollers {@link #start()} made, one per queue with listeners, and those {@link #newPoller} made. */
	public synchronized List<JobPoller> pollers() {
		return this.pollers.all();
	}

	/**
	 * A new, unstarted poller of the queue for the kinds registered in it, woken with the others.
	 * Stopped by {@link #stop()} if started. For tests and benchmarks that run several pollers of one
	 * queue, as several instances would.
	 */
	JobPoller newPoller(String queue) {
		return newPoller(queue, pauses());
	}

	/**
	 * A new, unstarted poller of the queue that asks {@code pauses} whether its queue is paused, as
	 * the poller of another instance would.
	 */
	public synchronized JobPoller newPoller(String queue, @Nullable QueuePauses pauses) {
		return this.pollers.make(queue, pauses);
	}

	/**
	 * Runs the due jobs of a queue on the calling thread, as its poller runs them on its workers, until
	 * none is left or about {@code maxJobs} were claimed; see {@link CallingThreadRuns#due}.
	 * @return the attempts whose outcomes were recorded; none when no listener here handles the queue
	 */
	public List<Attempt> runDueHere(String queue, int maxJobs) {
		return this.runs.due(queue, maxJobs);
	}

	/**
	 * Runs the job with this public id on the calling thread now, whether it is due or scheduled for
	 * later; see {@link CallingThreadRuns#job}.
	 * @return its attempt; empty when it is neither available nor scheduled, when another transaction
	 * holds it, or when no listener of this application handles its kind in its queue
	 */
	public Optional<Attempt> runHere(UUID id) {
		return this.runs.job(id);
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
		statsReader().checkVacuum();
		scheduleSettings().declared().forEach(schedules()::saveDeclared);
		if (!processing()) {
			logger.info("pgqueue processing is off (pgqueue.enabled=false): jobs are enqueued but not run here");
			this.services.start();
			this.running = true;
			return;
		}
		queues().requireListeners(handlers().queues(), this.twoPhaseResolverGiven);
		if (handlers().queues().isEmpty()) {
			logger.info("pgqueue found no @JobListener methods; no queue is polled in this application");
		}
		List<JobPoller> created = new ArrayList<>();
		for (String queue : handlers().queues()) {
			created.add(newPoller(queue));
		}
		this.services.start();
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
			running = this.pollers.running();
		}
		DatabasePollers.stopTogether(running, () -> {
			this.services.stop();
			callback.run();
		});
	}

	boolean isRunning() {
		return this.running;
	}

	/** Stops everything, including pollers started outside {@link #start()}, and the notification throttle. */
	void close() {
		stop();
		pollers().stream().filter(JobPoller::isRunning).forEach(JobPoller::stop);
		this.services.stop();
		NotificationThrottle throttle = this.parts.throttle();
		if (throttle != null) {
			throttle.close();
		}
		signals().close();
	}

}
