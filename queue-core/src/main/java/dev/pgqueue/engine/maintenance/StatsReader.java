package dev.pgqueue.engine.maintenance;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.poll.ClaimProgress;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository.LockWaits;
import dev.pgqueue.engine.sql.MaintenanceRepository.UnclaimedKind;
import dev.pgqueue.engine.sql.MaintenanceRepository.VacuumReading;
import dev.pgqueue.metrics.OldestTransaction;
import dev.pgqueue.metrics.PollCycleAssessment;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.metrics.QueueStats;
import dev.pgqueue.metrics.VacuumHealth;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads what metrics and health show, each stats interval: queue depth and the age of the oldest
 * due job, what holds back cleanup in the database ({@link TransactionHorizon}), how many of this
 * application's connections wait on a lock, each polled queue's poll-cycle assessment
 * ({@link QueueSignals}), which queues are paused ({@link QueuePauses}), which queues have waiting
 * jobs and no live poller on any instance ({@link PollingHeartbeat}), and whether the jobs table
 * gets vacuumed ({@link VacuumWatch}). It also warns about due jobs that no listener here claims,
 * and about due jobs that have waited a minute in a queue nobody polls. The last readings stay for
 * health and the Actuator endpoint.
 */
public final class StatsReader extends PeriodicService {

	private static final Logger logger = LoggerFactory.getLogger(StatsReader.class);

	/** How long a due job of a kind nobody here claims waits before it is reported. */
	static final Duration UNCLAIMED_AFTER = Duration.ofMinutes(1);

	private static final Duration UNCLAIMED_WARNING_PERIOD = Duration.ofMinutes(10);

	private final MaintenanceRepository repository;

	private final QueueMetrics metrics;

	private final Supplier<? extends Collection<String>> knownQueues;

	private final JobHandlerRegistry handlers;

	private final QueueSignals signals;

	private final QueuePauses pauses;

	private final TransactionHorizon horizon = new TransactionHorizon();

	private final VacuumWatch vacuum;

	private final PollingHeartbeat polling;

	private final Map<String, Long> lastUnclaimedWarning = new ConcurrentHashMap<>();

	private final Map<String, Long> lastUnpolledWarning = new ConcurrentHashMap<>();

	private volatile Map<String, QueueStats> lastStats = Map.of();

	private volatile Map<String, QueueStats> lastUnpolled = Map.of();

	private volatile LockWaits lastLockWaits = LockWaits.NONE;

	/**
	 * @param knownQueues queues reported even while empty (configured and listened-to queues)
	 * @param handlers this application's listeners, to warn about due jobs that none of them claims
	 * @param signals what the pollers' claims recorded, assessed on each read
	 * @param pauses which queues operators paused, reported with the stats
	 * @param vacuum judges whether the jobs table gets vacuumed
	 * @param polling which queues some live instance polls, to report those with waiting jobs that none
	 * does
	 */
	public StatsReader(MaintenanceRepository repository, QueueMetrics metrics, Duration interval,
			Supplier<? extends Collection<String>> knownQueues, JobHandlerRegistry handlers, QueueSignals signals,
			QueuePauses pauses, VacuumWatch vacuum, PollingHeartbeat polling) {
		super("stats reader", interval);
		this.repository = repository;
		this.metrics = metrics;
		this.knownQueues = knownQueues;
		this.handlers = handlers;
		this.signals = signals;
		this.pauses = pauses;
		this.vacuum = vacuum;
		this.polling = polling;
	}

	@Override
	protected void runOnce() {
		readStats();
	}

	/** Reads fresh queue statistics and reports them, with the other signals this reader reads. */
	public Map<String, QueueStats> readStats() {
		assessPollCycles();
		Map<String, QueueStats> stats = new TreeMap<>();
		this.knownQueues.get().forEach((queue) -> stats.put(queue, QueueStats.empty(queue)));
		stats.putAll(this.repository.stats());
		warnAboutUnclaimedKinds();
		this.lastStats = Map.copyOf(stats);
		this.metrics.queueStats(stats.values());
		reportUnpolled(stats);
		reportPauses(stats.keySet());
		readOldestTransaction();
		readLockWaits();
		checkVacuum();
		return this.lastStats;
	}

	/**
	 * Finds the queues with waiting jobs (due or scheduled) that no live instance polls, by the
	 * polling heartbeat's last view, keeps them for health, reports each queue's count (0 where
	 * polled), and warns, at most every ten minutes per queue, once a due job there has waited a
	 * minute. Reports nothing before the heartbeat's first read.
	 */
	private void reportUnpolled(Map<String, QueueStats> stats) {
		PolledQueues polled = this.polling.view();
		if (polled == null) {
			return;
		}
		Map<String, QueueStats> unpolled = new TreeMap<>();
		stats.forEach((queue, queueStats) -> {
			long waiting = queueStats.available() + queueStats.scheduled();
			boolean nobodyPolls = waiting > 0 && !polled.isPolled(queue);
			if (nobodyPolls) {
				unpolled.put(queue, queueStats);
				warnAboutUnpolledQueue(queueStats);
			}
			this.metrics.unpolledJobs(queue, nobodyPolls ? waiting : 0);
		});
		this.lastUnpolled = Map.copyOf(unpolled);
	}

	private void warnAboutUnpolledQueue(QueueStats stats) {
		if (stats.available() == 0 || stats.oldestAvailableAge().compareTo(UNCLAIMED_AFTER) < 0) {
			return;
		}
		long now = System.nanoTime();
		Long last = this.lastUnpolledWarning.get(stats.queue());
		if (last != null && now - last <= UNCLAIMED_WARNING_PERIOD.toNanos()) {
			return;
		}
		this.lastUnpolledWarning.put(stats.queue(), now);
		logger.warn("{} due jobs in queue '{}' have waited up to {}s, and no instance polls that queue: nobody runs "
				+ "them until one does. Start an instance with a @JobListener in queue '{}', or enqueue into the queue "
				+ "whose listeners handle these kinds; nothing is lost meanwhile.", stats.available(), stats.queue(),
				stats.oldestAvailableAge().toSeconds(), stats.queue());
	}

	/**
	 * The queues that had waiting jobs and no live poller on any instance at the last read, with their
	 * statistics; empty before the polling heartbeat's first read.
	 */
	public Map<String, QueueStats> lastUnpolledQueues() {
		return this.lastUnpolled;
	}

	/** Reports which of the queues (and of those paused elsewhere) are paused. */
	private void reportPauses(Collection<String> queues) {
		Set<String> paused = this.pauses.current();
		Set<String> reported = new TreeSet<>(queues);
		reported.addAll(paused);
		reported.forEach((queue) -> this.metrics.queuePaused(queue, paused.contains(queue)));
	}

	/** Which queues operators paused. */
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

	/** What the last reading found holding back cleanup; {@link OldestTransaction#NONE} before the first. */
	public OldestTransaction lastOldestTransaction() {
		return this.horizon.last();
	}

	/**
	 * Reads whether the jobs table gets vacuumed, reports it, and warns when a problem appeared since
	 * the last reading (at start-up: when there is one). Returns the verdict, or {@code null} when
	 * the catalog could not be read: that is logged at debug and never stops the caller (the engine's
	 * start, or this reader's other readings).
	 */
	public @Nullable VacuumHealth checkVacuum() {
		VacuumReading reading;
		try {
			reading = this.repository.vacuumReading();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not read whether pgqueue's jobs table gets vacuumed", ex);
			return null;
		}
		VacuumHealth health = this.vacuum.read(reading);
		this.metrics.vacuumHealth(health);
		return health;
	}

	/** What the last vacuum check found, or {@code null} before the first that could read. */
	public @Nullable VacuumHealth lastVacuumHealth() {
		return this.vacuum.last();
	}

	/** Statistics of the last successful read, empty before the first. */
	public Map<String, QueueStats> lastStats() {
		return this.lastStats;
	}

	/**
	 * Warns, at most every ten minutes per queue and kind, about due jobs in a queue this application
	 * polls whose kind no listener here handles: unless another application handles it, they wait
	 * for ever.
	 */
	private void warnAboutUnclaimedKinds() {
		Map<String, String[]> kindsByQueue = new TreeMap<>();
		this.handlers.queues().forEach((queue) -> kindsByQueue.put(queue, this.handlers.kindsOf(queue)));
		for (UnclaimedKind unclaimed : this.repository.unclaimedKinds(kindsByQueue, UNCLAIMED_AFTER)) {
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

}
