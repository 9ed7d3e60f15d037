package dev.pgqueue.engine.maintenance;

import java.sql.SQLException;
import java.time.Duration;

import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.sql.HistoryRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository.PartitionPass;
import dev.pgqueue.engine.sql.RateRepository;
import dev.pgqueue.engine.sql.UniqueJobRepository;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;

/**
 * Prunes finished jobs past their retention, in batches, each its own short transaction that takes
 * a transaction-scoped advisory lock, so that one instance at a time deletes; and the unique keys
 * whose period ended (rows locked with {@code SKIP LOCKED}, so instances never wait on each other);
 * and the queues' history minutes past their retention (one short delete: the table holds a row per
 * queue and minute, a few thousand per queue).
 *
 * <p>Completed jobs are kept in time partitions ({@link CompletedPartitions}): each pass first drops
 * those past the retention and creates the next ones, then deletes row by row only the completed
 * jobs that found no partition. Partitions need the table's owner: an instance whose role is not (a
 * runtime role granted only reads and writes) says so once and deletes completed jobs row by row, as
 * it does failed ones, wherever they are.
 */
public final class Cleaner extends PeriodicService {

	private static final Logger logger = LoggerFactory.getLogger(Cleaner.class);

	private static final Duration WARNING_PERIOD = Duration.ofMinutes(10);

	/** SQLSTATE of a lock not taken within {@code lock_timeout}. */
	private static final String LOCK_NOT_AVAILABLE = "55P03";

	private long lastWarning;

	private boolean warned;

	private final MaintenanceRepository repository;

	private final UniqueJobRepository uniqueKeys;

	private final MaintenanceSettings settings;

	private final @Nullable HistoryRepository history;

	private final Duration historyRetention;

	private final @Nullable RateRepository rates;

	public Cleaner(MaintenanceRepository repository, UniqueJobRepository uniqueKeys, MaintenanceSettings settings) {
		this(repository, uniqueKeys, settings, null, Duration.ZERO, null);
	}

	/**
	 * @param history the queues' history, pruned too; {@code null} to leave it alone
	 * @param historyRetention how long history minutes are kept
	 */
	public Cleaner(MaintenanceRepository repository, UniqueJobRepository uniqueKeys, MaintenanceSettings settings,
			@Nullable HistoryRepository history, Duration historyRetention) {
		this(repository, uniqueKeys, settings, history, historyRetention, null);
	}

	/**
	 * @param history the queues' history, pruned too; {@code null} to leave it alone
	 * @param historyRetention how long history minutes are kept
	 * @param rates the rate limits' windows, whose idle per-key rows are deleted; {@code null} to leave
	 * them alone
	 */
	public Cleaner(MaintenanceRepository repository, UniqueJobRepository uniqueKeys, MaintenanceSettings settings,
			@Nullable HistoryRepository history, Duration historyRetention, @Nullable RateRepository rates) {
		super("cleaner", settings.cleanupInterval());
		this.repository = repository;
		this.uniqueKeys = uniqueKeys;
		this.settings = settings;
		this.history = history;
		this.historyRetention = historyRetention;
		this.rates = rates;
	}

	@Override
	protected void runOnce() {
		clean();
		pruneEndedKeys();
		pruneHistory();
		pruneIdleRateKeys();
	}

	/**
	 * Deletes the windows of per-key rate limits that granted nothing for a whole period: one row is
	 * made per key that ever started a job, and would otherwise stay. Returns how many.
	 */
	public int pruneIdleRateKeys() {
		return (this.rates != null) ? this.rates.pruneIdle(RateRepository.KEY_WINDOW_PREFIX) : 0;
	}

	/** Deletes the queues' history minutes past their retention; returns how many. */
	public int pruneHistory() {
		return (this.history != null) ? this.history.pruneOlderThan(this.historyRetention) : 0;
	}

	/** Deletes the unique keys whose period ended, in batches; returns how many. */
	public int pruneEndedKeys() {
		int batchSize = this.settings.cleanupBatchSize();
		int total = 0;
		int deleted;
		do {
			deleted = this.uniqueKeys.pruneEndedPeriods(batchSize);
			total += deleted;
		}
		while (deleted == batchSize);
		return total;
	}

	/**
	 * Prunes finished jobs past their retention, in batches, unless another instance is doing it.
	 * Returns how many were deleted.
	 */
	public int clean() {
		boolean partitioned = rotatePartitions();
		return Math.max(0, this.repository.pruneAllFinished(this.settings.completedRetention(),
				this.settings.failedRetention(), this.settings.cleanupBatchSize(), partitioned));
	}

	/**
	 * Drops the time partitions of completed jobs past the retention and creates the next ones, unless
	 * another instance is doing it. Returns whether completed jobs are kept in time partitions here:
	 * false when this role may not create or drop them, so that its cleaner deletes completed jobs
	 * row by row wherever they are.
	 */
	boolean rotatePartitions() {
		Duration retention = this.settings.completedRetention();
		try {
			PartitionPass pass = this.repository.changeCompletedPartitions(
					(existing, now) -> CompletedPartitions.plan(existing, now, retention));
			if (pass.status() == PartitionPass.Status.NOT_OWNER) {
				reportNotOwner();
				return false;
			}
			if (!pass.changes().isEmpty()) {
				logger.debug("Completed jobs' time partitions: dropped {}, created {}", pass.changes().drop(),
						pass.changes().create());
			}
			return true;
		}
		catch (DataAccessException ex) {
			if (LOCK_NOT_AVAILABLE.equals(sqlState(ex))) {
				logger.debug("Completed jobs' time partitions not changed now: a transaction holds the table; "
						+ "the next pass tries again", ex);
				return true;
			}
			throw ex;
		}
	}

	/**
	 * Says once per instance, and again at most every ten minutes at debug level, that this role keeps
	 * no partitions: a deployment choice (a runtime role without DDL), not a fault.
	 */
	private synchronized void reportNotOwner() {
		long now = System.nanoTime();
		if (this.warned && now - this.lastWarning < WARNING_PERIOD.toNanos()) {
			return;
		}
		String message = "This database role does not own pgqueue's completed jobs' table, so this instance's cleaner "
				+ "keeps no time partitions: it deletes completed jobs past pgqueue.retention.completed row by row, "
				+ "which writes more and leaves more for autovacuum than dropping a partition. An instance that runs "
				+ "as the table's owner (the role that ran the migrations) keeps them for every instance.";
		if (this.warned) {
			logger.debug(message);
		}
		else {
			logger.info(message);
		}
		this.warned = true;
		this.lastWarning = now;
	}

	private static @Nullable String sqlState(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && sql.getSQLState() != null) {
				return sql.getSQLState();
			}
		}
		return null;
	}

}
