package dev.pgqueue.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import dev.pgqueue.engine.control.RunningJobsWatch;
import dev.pgqueue.engine.maintenance.Cleaner;
import dev.pgqueue.engine.maintenance.HistoryFlusher;
import dev.pgqueue.engine.maintenance.Promoter;
import dev.pgqueue.engine.maintenance.Rescuer;
import dev.pgqueue.engine.maintenance.StatisticsRefresher;
import dev.pgqueue.engine.maintenance.StatsReader;
import dev.pgqueue.engine.maintenance.VacuumWatch;
import dev.pgqueue.engine.schedules.ScheduleTicker;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.ScheduleSettings;
import dev.pgqueue.engine.sql.ControlRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.sql.Repositories;
import dev.pgqueue.engine.twophase.InDoubtResolver;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The background services of one database and its notification listener, built from its
 * {@link DatabaseParts}, and the order they start in: the polling heartbeat, the notification
 * listener (when notifications are on), promoter, rescuer, cleaner, stats reader, statistics
 * refresher, schedule ticker, running-jobs watch, history flusher (when the history is enabled) and
 * in-doubt resolver (when a queue has two-phase commit and a resolver is given); only the polling
 * heartbeat when the engine does not process jobs. The maintenance services are built either way, so
 * tests and benchmarks can run one by hand.
 *
 * <p>Kept apart from {@link DatabaseEngine}, which decides when they start and stop, so that adding a
 * service, or moving one in the start order, changes this class alone. It also makes every part of
 * the database that has a thread count its failures in the database's metrics
 * ({@code pgqueue.service.failures}).
 */
final class DatabaseServices {

	private final DatabaseParts parts;

	private final @Nullable NotificationListener notifications;

	private final RunningJobsWatch runningJobsWatch;

	private final @Nullable InDoubtResolver inDoubtResolver;

	private final Promoter promoter;

	private final Rescuer rescuer;

	private final Cleaner cleaner;

	private final ScheduleTicker scheduleTicker;

	private final StatsReader statsReader;

	private final StatisticsRefresher statisticsRefresher;

	private final HistoryFlusher historyFlusher;

	/** The services and the notification listener, in the order they start. */
	private final List<EngineService> startOrder;

	DatabaseServices(EngineParts engine, EngineDatabase database, DatabaseParts parts) {
		this.parts = parts;
		EngineSettings settings = parts.settings();
		QueueCatalog queues = parts.queues();
		QueueMetrics metrics = parts.metrics();
		Repositories sql = parts.sql();
		SchemaName schema = settings.schema();
		this.notifications = (parts.processing() && settings.notifications())
				? new NotificationListener(
						(database.notificationConnections != null) ? database.notificationConnections
								: NotificationConnections.of(parts.dataSource()),
						settings.livenessTimeout(), parts.jobs().channel(), parts.wakeUps(),
						engine.pauseNotifications() ? parts.pauses() : null, ControlRepository.channel(schema),
						this::cancelAnnounced)
				: null;
		this.runningJobsWatch = new RunningJobsWatch(parts.runningJobs(), parts.controls());
		boolean twoPhase = queues.configuredQueues()
			.stream()
			.anyMatch((queue) -> queues.settings(queue).twoPhaseCommit());
		this.inDoubtResolver = (twoPhase && engine.inDoubtJobResolver() != null)
				? new InDoubtResolver(sql.prepared(), schema, settings.twoPhase(), parts.handlers(),
						engine.inDoubtJobResolver(), metrics)
				: null;
		MaintenanceRepository maintenance = sql.maintenance();
		MaintenanceSettings timings = settings.maintenance();
		this.promoter = new Promoter(maintenance, timings.promoteInterval());
		this.rescuer = new Rescuer(maintenance, metrics, timings.rescueInterval(), settings.workers().attemptHistory());
		this.cleaner = new Cleaner(maintenance, sql.unique(), timings, parts.history(),
				parts.historySettings().retention(), sql.rates());
		ScheduleSettings schedules = parts.scheduleSettings();
		PlatformTransactionManager manager = database.transactionManager;
		this.scheduleTicker = new ScheduleTicker(sql.schedules(), parts.births(),
				new TransactionTemplate((manager != null) ? manager : new DataSourceTransactionManager(parts.dataSource())),
				queues, metrics, schedules.tickInterval(), schedules.grace());
		this.statsReader = new StatsReader(maintenance, metrics, timings.statsInterval(), this::knownQueues,
				parts.handlers(), parts.signals(), parts.pauses(), new VacuumWatch(schema, timings.deadRowsWarning()),
				parts.pollingHeartbeat());
		this.statisticsRefresher = new StatisticsRefresher(maintenance);
		this.historyFlusher = new HistoryFlusher(parts.historyRecorder(), parts.history(),
				parts.historySettings().flushInterval());
		this.startOrder = startOrder();
		countFailuresIn(metrics);
	}

	private List<EngineService> startOrder() {
		List<EngineService> order = new ArrayList<>();
		order.add(this.parts.pollingHeartbeat());
		if (!this.parts.processing()) {
			return order;
		}
		if (this.notifications != null) {
			order.add(this.notifications);
		}
		order.addAll(List.of(this.promoter, this.rescuer, this.cleaner, this.statsReader, this.statisticsRefresher,
				this.scheduleTicker, this.runningJobsWatch));
		if (this.parts.historyRecorder().enabled()) {
			order.add(this.historyFlusher);
		}
		if (this.inDoubtResolver != null) {
			order.add(this.inDoubtResolver);
		}
		return order;
	}

	/**
	 * Counts the failures of every part of this database that has a thread: the services, the checks
	 * of the claim signals and the notification throttle. A poller counts its own.
	 */
	private void countFailuresIn(QueueMetrics metrics) {
		this.startOrder.forEach((service) -> service.health().countIn(metrics::serviceFailed));
		this.parts.signals().health().countIn(metrics::serviceFailed);
		NotificationThrottle throttle = this.parts.throttle();
		if (throttle != null) {
			throttle.health().countIn(metrics::serviceFailed);
		}
	}

	/**
	 * A cancel announcement is a hint, never the request: any role that can connect may send a
	 * {@code NOTIFY}, so the watch reads the request (and who made it) from the controls table at once,
	 * and a job is cancelled only when its row there says so.
	 */
	private void cancelAnnounced(String payload) {
		Long id = ControlRepository.announcedJob(payload);
		if (id != null && this.parts.runningJobs().isRunning(id)) {
			this.runningJobsWatch.runSoon();
		}
	}

	private Set<String> knownQueues() {
		Set<String> known = new TreeSet<>(this.parts.queues().configuredQueues());
		known.addAll(this.parts.handlers().queues());
		return known;
	}

	/** The services to start, in their start order; see the class's description. */
	List<EngineService> inStartOrder() {
		return List.copyOf(this.startOrder);
	}

	/** What the status names: the services and, where this engine claims jobs, the checks of short claims. */
	List<EngineService> watched() {
		if (!this.parts.processing()) {
			return inStartOrder();
		}
		List<EngineService> watched = new ArrayList<>(this.startOrder);
		watched.add(this.parts.signals());
		return watched;
	}

	/** Starts the services, in their start order. */
	void start() {
		this.startOrder.forEach(EngineService::start);
	}

	/**
	 * Stops the services that run, in the reverse of their start order, then those a caller started by
	 * hand (tests, benchmarks) though the start order leaves them out.
	 */
	void stop() {
		for (int i = this.startOrder.size() - 1; i >= 0; i--) {
			EngineService service = this.startOrder.get(i);
			if (service.isRunning()) {
				service.stop();
			}
		}
		for (EngineService service : List.of(this.promoter, this.rescuer, this.cleaner, this.statsReader,
				this.historyFlusher, this.parts.pollingHeartbeat())) {
			if (service.isRunning()) {
				service.stop();
			}
		}
		if (this.inDoubtResolver != null && this.inDoubtResolver.isRunning()) {
			this.inDoubtResolver.stop();
		}
	}

	/** Stops running jobs an operator cancelled, writes their progress. */
	RunningJobsWatch runningJobsWatch() {
		return this.runningJobsWatch;
	}

	/** Finishes prepared transactions dead workers left; {@code null} unless a queue has two-phase commit. */
	@Nullable InDoubtResolver inDoubtResolver() {
		return this.inDoubtResolver;
	}

	Promoter promoter() {
		return this.promoter;
	}

	Rescuer rescuer() {
		return this.rescuer;
	}

	Cleaner cleaner() {
		return this.cleaner;
	}

	ScheduleTicker scheduleTicker() {
		return this.scheduleTicker;
	}

	StatsReader statsReader() {
		return this.statsReader;
	}

	StatisticsRefresher statisticsRefresher() {
		return this.statisticsRefresher;
	}

	/**
	 * Writes what the {@link DatabaseParts#historyRecorder() recorder} counted to the queues' history; started only
	 * when this engine processes jobs with the history enabled.
	 */
	HistoryFlusher historyFlusher() {
		return this.historyFlusher;
	}

}
