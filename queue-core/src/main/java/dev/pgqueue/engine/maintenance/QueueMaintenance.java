package dev.pgqueue.engine.maintenance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Supplier;

import dev.pgqueue.JobState;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.poll.ClaimProgress;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.sql.MaintenanceRepository.LockWaits;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.twophase.InDoubtResolver;
import dev.pgqueue.metrics.OldestTransaction;
import dev.pgqueue.metrics.PollCycleAssessment;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.metrics.QueueStats;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * The background services of one application instance, each a short statement on a timer:
 * <ul>
 * <li>the <em>promoter</em> makes scheduled jobs (delays and retries) available once due;</li>
 * <li>the <em>rescuer</em> returns leased jobs whose lease expired (their worker died) to the
 * queue, counting the attempt, or fails them when it was their last;</li>
 * <li>the <em>cleaner</em> prunes finished jobs past their retention in batches, each its own short
 * transaction that takes a transaction-scoped advisory lock, so one instance at a time deletes;</li>
 * <li>the <em>stats reader</em> reads queue depth and the age of the oldest due job for metrics
 * and health, what holds back cleanup in the database ({@link TransactionHorizon}) and how many of
 * this application's connections wait on a lock, and publishes each polled queue's poll-cycle
 * assessment ({@link QueueSignals}) and which queues are paused ({@link QueuePauses});</li>
 * <li>the <em>in-doubt resolver</em>, in an application with queues that use two-phase commit,
 * finishes the prepared transactions their workers left when they died between prepare and commit
 * ({@link InDoubtResolver}), at start-up and then on its own interval.</li>
 * </ul>
 * Promoter and rescuer use {@code SKIP LOCKED}, so every instance may run them at once without
 * waiting on each other. A failing service logs and tries again on its next tick.
 */
public class QueueMaintenance {

	private static final Logger logger = LoggerFactory.getLogger(QueueMaintenance.class);

	private static final int PROMOTE_BATCH = 10_000;

	private static final int RESCUE_BATCH = 1_000;

	/** How long a due job of a kind nobody here claims waits before it is reported. */
	static final Duration UNCLAIMED_AFTER = Duration.ofMinutes(1);

	private static final Duration UNCLAIMED_WARNING_PERIOD = Duration.ofMinutes(10);

	private final MaintenanceRepository repository;

	private final MaintenanceSettings settings;

	private final QueueMetrics metrics;

	private final Supplier<? extends Collection<String>> knownQueues;

	private final JobHandlerRegistry handlers;

	private final Map<String, Long> lastUnclaimedWarning = new java.util.concurrent.ConcurrentHashMap<>();

	private final List<ScheduledFuture<?>> tasks = new ArrayList<>();

	private volatile Map<String, QueueStats> lastStats = Map.of();

	private final TransactionHorizon horizon = new TransactionHorizon();

	private final QueueSignals signals;

	private volatile LockWaits lastLockWaits = LockWaits.NONE;

	private ThreadPoolTaskScheduler scheduler;

	private final InDoubtResolver inDoubtResolver;

	private final QueuePauses pauses;

	/**
	 * @param knownQueues queues reported even while empty (configured and listened-to queues)
	 * @param handlers this application's listeners, to warn about due jobs that none of them claims
	 * @param signals what the pollers' claims recorded, assessed on each stats read
	 * @param inDoubtResolver finishes prepared transactions that dead workers left; {@code null} in an
	 * application without queues that use two-phase commit
	 * @param pauses which queues operators paused, reported with the stats; {@code null} for none
	 */
	public QueueMaintenance(MaintenanceRepository repository, MaintenanceSettings settings, QueueMetrics metrics,
			Supplier<? extends Collection<String>> knownQueues, JobHandlerRegistry handlers, QueueSignals signals,
			InDoubtResolver inDoubtResolver, QueuePauses pauses) {
		this.pauses = pauses;
		this.inDoubtResolver = inDoubtResolver;
		this.signals = signals;
		this.handlers = handlers;
		this.repository = repository;
		this.settings = settings;
		this.metrics = metrics;
		this.knownQueues = knownQueues;
	}

	public synchronized void start() {
		if (this.scheduler != null) {
			return;
		}
		ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
		// The resolver waits on the application's answers: a thread of its own keeps them off the others.
		scheduler.setPoolSize((this.inDoubtResolver != null) ? 3 : 2);
		scheduler.setThreadNamePrefix("pgqueue-maintenance-");
		scheduler.setDaemon(true);
		scheduler.initialize();
		this.scheduler = scheduler;
		schedule("promoter", this.settings.promoteInterval(), this::promote);
		schedule("rescuer", this.settings.rescueInterval(), this::rescue);
		schedule("cleaner", this.settings.cleanupInterval(), this::clean);
		schedule("stats reader", this.settings.statsInterval(), this::readStats);
		if (this.inDoubtResolver != null) {
			schedule("in-doubt resolver", this.inDoubtResolver.settings().resolveInterval(), this.inDoubtResolver::resolve);
		}
	}

	private void schedule(String name, Duration interval, Runnable task) {
		this.tasks.add(this.scheduler.scheduleWithFixedDelay(() -> {
			try {
				task.run();
			}
			catch (RuntimeException ex) {
				logger.warn("pgqueue {} failed; it runs again in {}: {}", name, interval, ex.toString());
			}
		}, interval));
	}

	public synchronized void stop() {
		if (this.scheduler == null) {
			return;
		}
		this.tasks.forEach((task) -> task.cancel(false));
		this.tasks.clear();
		this.scheduler.shutdown();
		this.scheduler = null;
	}

	public boolean isRunning() {
		return this.scheduler != null;
	}


	/** Makes due scheduled jobs available; returns how many. */
	public int promote() {
		int total = 0;
		int promoted;
		do {
			promoted = this.repository.promoteDue(PROMOTE_BATCH);
			total += promoted;
		}
		while (promoted == PROMOTE_BATCH);
		return total;
	}

	/** Rescues jobs whose lease expired; returns how many. */
	public int rescue() {
		int total = 0;
		List<MaintenanceRepository.RescuedJob> rescued;
		do {
			rescued = this.repository.rescueExpired(RESCUE_BATCH);
			for (MaintenanceRepository.RescuedJob job : rescued) {
				this.metrics.jobRescued(job.queue(), job.kind());
				if (job.state() == JobState.FAILED) {
					logger.error("Job {} of kind '{}' in queue '{}' failed for good: the lease of its last attempt ({}) "
							+ "expired before it finished", job.publicId(), job.kind(), job.queue(), job.attempt());
				}
				else {
					logger.warn("Job {} of kind '{}' in queue '{}' was rescued: the lease of attempt {} expired "
							+ "(its worker died, hung or lost the database); it will run again", job.publicId(),
							job.kind(), job.queue(), job.attempt());
				}
			}
			total += rescued.size();
		}
		while (rescued.size() == RESCUE_BATCH);
		return total;
	}

	/**
	 * Prunes finished jobs past their retention, in batches, unless another instance is doing it.
	 * Returns how many were deleted.
	 */
	public int clean() {
		return Math.max(0, this.repository.pruneAllFinished(this.settings.completedRetention(),
				this.settings.failedRetention(), this.settings.cleanupBatchSize()));
	}

	/** Reads fresh queue statistics and reports them, with the other signals the stats reader reads. */
	public Map<String, QueueStats> readStats() {
		assessPollCycles();
		Map<String, QueueStats> stats = new TreeMap<>();
		this.knownQueues.get().forEach((queue) -> stats.put(queue, QueueStats.empty(queue)));
		stats.putAll(this.repository.stats());
		warnAboutUnclaimedKinds();
		this.lastStats = Map.copyOf(stats);
		this.metrics.queueStats(stats.values());
		reportPauses(stats.keySet());
		readOldestTransaction();
		readLockWaits();
		return this.lastStats;
	}

	/** Reports which of the queues (and of those paused elsewhere) are paused. */
	private void reportPauses(Collection<String> queues) {
		if (this.pauses == null) {
			return;
		}
		Set<String> paused = this.pauses.current();
		Set<String> reported = new TreeSet<>(queues);
		reported.addAll(paused);
		reported.forEach((queue) -> this.metrics.queuePaused(queue, paused.contains(queue)));
	}

	/** Which queues operators paused; {@code null} when this application does not look. */
	public QueuePauses pauses() {
		return this.pauses;
	}

	/** Publishes each polled queue's poll-cycle p99 of the last minute, judged. */
	public void assessPollCycles() {
		for (ClaimProgress progress : this.signals.all()) {
			Duration p99 = progress.pollCycleP99();
			this.metrics.pollCycleAssessed(progress.queue(), p99, PollCycleAssessment.of(p99));
		}
	}

	/** Counts this application's connections that wait on a lock, and reports it. */
	public LockWaits readLockWaits() {
		LockWaits waits = this.repository.lockWaits();
		this.lastLockWaits = waits;
		this.metrics.lockWaits(waits.waiting());
		return waits;
	}

	/** What the last count of lock waits found; {@link LockWaits#NONE} before the first. */
	public LockWaits lastLockWaits() {
		return this.lastLockWaits;
	}

	/** The degradation signals of the queues polled here. */
	public QueueSignals signals() {
		return this.signals;
	}

	/** Reads what holds back cleanup in the database the longest, reports it, and warns if it is old. */
	public OldestTransaction readOldestTransaction() {
		OldestTransaction oldest = this.horizon.read(this.repository.oldestTransaction());
		this.metrics.oldestTransaction(oldest);
		return oldest;
	}

	/** The in-doubt resolver, or {@code null} when no queue here uses two-phase commit. */
	public InDoubtResolver inDoubtResolver() {
		return this.inDoubtResolver;
	}

	/** What the last reading found holding back cleanup; {@link OldestTransaction#NONE} before the first. */
	public OldestTransaction lastOldestTransaction() {
		return this.horizon.last();
	}

	/**
	 * Warns, at most every ten minutes per queue and kind, about due jobs in a queue this application
	 * polls whose kind no listener here handles: unless another application handles it, they wait
	 * for ever.
	 */
	private void warnAboutUnclaimedKinds() {
		Map<String, String[]> kindsByQueue = new TreeMap<>();
		this.handlers.queues().forEach((queue) -> kindsByQueue.put(queue, this.handlers.kindsOf(queue)));
		for (MaintenanceRepository.UnclaimedKind unclaimed : this.repository.unclaimedKinds(kindsByQueue, UNCLAIMED_AFTER)) {
			String key = unclaimed.queue() + '\0' + unclaimed.kind();
			long now = System.nanoTime();
			Long last = this.lastUnclaimedWarning.get(key);
			if (last == null || now - last > UNCLAIMED_WARNING_PERIOD.toNanos()) {
				this.lastUnclaimedWarning.put(key, now);
				logger.warn("{} due jobs of kind '{}' in queue '{}' have waited up to {}s, and no @JobListener in "
						+ "this application handles that kind in that queue. Unless another application does, deploy "
						+ "a listener for it (or enqueue to the right queue) and they will run; nothing is lost "
						+ "meanwhile.", unclaimed.jobs(), unclaimed.kind(), unclaimed.queue(),
						unclaimed.oldestAge().toSeconds());
			}
		}
	}

	/** Statistics of the last successful read, empty before the first. */
	public Map<String, QueueStats> lastStats() {
		return this.lastStats;
	}

}
