package dev.pgqueue.engine.maintenance;

import java.time.Duration;

import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository.TableEstimate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Analyzes the jobs table when the planner's picture of it has fallen far behind: when the table
 * holds at least {@value #STALE_FACTOR} times the rows the planner would estimate now (and at least
 * {@value #MIN_ROWS}). Checked every {@link #INTERVAL}: one catalog read, whose live-row count comes
 * from the statistics collector up to a second late; while the planner believes the table (nearly)
 * empty, also a count of its first {@value #MIN_ROWS} rows in physical order, which sees a burst as
 * soon as it is committed and costs a read of the table's first pages (all of them while it is
 * empty and vacuumed: tens of microseconds here for a table that had held 200 000 jobs).
 *
 * <p>Why: a queue's table swings from empty to a burst and back within seconds, faster than
 * autovacuum's analyze follows (a minute or more; never, with autovacuum off). The dangerous moment
 * is a {@code VACUUM} of a drained table that cannot truncate it (claimers polling keep taking the
 * table's lock, and truncation gives way to them): it records zero rows over the pages that remain,
 * and from then on the planner believes the table empty however many jobs land. (A vacuum that did
 * truncate it records no pages; the plans made while it is empty, such as the generic plans the
 * pollers' idle claims cache, are made for an empty table all the same and stay in use when the jobs
 * land.) A claim planned so
 * reads every due job of the queue through a bitmap scan and sorts them, to lock the first hundred:
 * milliseconds per thousand jobs, 200 000 entries and 30–900 ms per claim in a burst of 200 000,
 * on the server's CPU, until the next analyze. An analyze invalidates the cached plans, and the
 * claims read from the head of the index again. A role that does not own the table cannot analyze
 * it; then a warning says so, at most every ten minutes.
 *
 * <p>Every instance checks; {@code ANALYZE (SKIP_LOCKED)} lets one analyze at a time and never
 * waits for autovacuum.
 */
public final class StatisticsRefresher extends PeriodicService {

	private static final Logger logger = LoggerFactory.getLogger(StatisticsRefresher.class);

	/** How often the planner's estimate is compared with the table. */
	public static final Duration INTERVAL = Duration.ofMillis(100);

	/** How many times the planner's estimate the table must hold to be analyzed. */
	static final int STALE_FACTOR = 10;

	/** Fewer live rows than this are never worth an analyze: any plan reads them quickly. */
	static final long MIN_ROWS = 1_000;

	private static final Duration WARNING_PERIOD = Duration.ofMinutes(10);

	private final MaintenanceRepository repository;

	private long lastWarning;

	private boolean warned;

	public StatisticsRefresher(MaintenanceRepository repository) {
		this(repository, INTERVAL);
	}

	public StatisticsRefresher(MaintenanceRepository repository, Duration interval) {
		super("statistics refresher", interval);
		this.repository = repository;
	}

	@Override
	protected void runOnce() {
		refreshIfStale();
	}

	/**
	 * Analyzes the jobs table if the planner's estimate of it is stale; returns whether it did (not
	 * when another ANALYZE or a VACUUM held the table, which {@code SKIP_LOCKED} steps over).
	 */
	public boolean refreshIfStale() {
		TableEstimate estimate = this.repository.tableEstimate();
		if (believedEmpty(estimate) && estimate.liveRows() < MIN_ROWS) {
			// The collector's count may be a second late; the burst that matters may have just landed.
			estimate = estimate.withLiveRows(this.repository.countRowsUpTo(MIN_ROWS));
		}
		if (!isStale(estimate)) {
			return false;
		}
		if (!estimate.analyzable()) {
			warnNotOwner(estimate);
			return false;
		}
		this.repository.analyzeJobs();
		if (isStale(this.repository.tableEstimate().withLiveRows(estimate.liveRows()))) {
			// ANALYZE (SKIP_LOCKED) skips the table, without an error, while another ANALYZE or a VACUUM
			// (autovacuum's, most often) holds it; the next check tries again.
			logger.debug("Could not analyze the jobs table now: another ANALYZE or a VACUUM holds it; the planner "
					+ "still estimates {} rows, and it holds {}", Math.round(estimate.plannerRows()), estimate.liveRows());
			return false;
		}
		logger.info("Analyzed the jobs table: the planner estimated {} rows from its last statistics, and it holds {}. "
				+ "Claims planned on such statistics read every due job of the queue each time.",
				Math.round(estimate.plannerRows()), estimate.liveRows());
		return true;
	}

	/** Whether the planner would estimate too few rows for {@value #MIN_ROWS} to be stale. */
	static boolean believedEmpty(TableEstimate estimate) {
		return STALE_FACTOR * Math.max(estimate.plannerRows(), 1) < MIN_ROWS;
	}

	/** Whether the table holds far more rows than the planner's plans may have been made for. */
	static boolean isStale(TableEstimate estimate) {
		return estimate.liveRows() >= MIN_ROWS && estimate.liveRows() > STALE_FACTOR * Math.max(estimate.plannerRows(), 1);
	}

	private synchronized void warnNotOwner(TableEstimate estimate) {
		long now = System.nanoTime();
		if (this.warned && now - this.lastWarning < WARNING_PERIOD.toNanos()) {
			return;
		}
		this.warned = true;
		this.lastWarning = now;
		logger.warn("The planner estimates {} rows in the jobs table, which holds {}, and this database role does not "
				+ "own the table, so pgqueue cannot analyze it. Claims planned on such statistics read every due job "
				+ "each time. Run the application as the table's owner (the role that ran its migrations), or have "
				+ "autovacuum analyze it sooner (autovacuum_analyze_threshold on the table).",
				Math.round(estimate.plannerRows()), estimate.liveRows());
	}

}
