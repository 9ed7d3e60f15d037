package dev.pgqueue.engine.maintenance;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.sql.MaintenanceRepository.VacuumReading;
import dev.pgqueue.metrics.VacuumHealth;
import dev.pgqueue.metrics.VacuumHealth.Verdict;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Judges whether the jobs table gets vacuumed ({@link VacuumHealth}): autovacuum off for the
 * server (or its statistics off, which it needs), autovacuum off for the table, or dead rows
 * growing without vacuum. The last is found when the dead rows reach
 * {@link MaintenanceSettings#deadRowsWarning()}, outnumber the live ones, and the table was not
 * vacuumed (by hand or by autovacuum) for {@link MaintenanceSettings#VACUUM_OVERDUE_AFTER}: the
 * table's own autovacuum settings start a vacuum at a small fraction of that, so a pile that large
 * and that old means autovacuum is not getting to it.
 *
 * <p>Warns when a reading finds a problem the previous one did not (the first reading, at start-up,
 * compares with none), and says so when all is fine again; readings that find the same do not log.
 */
public final class VacuumWatch {

	private static final Logger logger = LoggerFactory.getLogger(VacuumWatch.class);

	private final String table;

	private final long deadRowsWarning;

	private volatile @Nullable VacuumHealth last;

	/**
	 * @param schema where the jobs table is
	 * @param deadRowsWarning dead rows from which they count as growing without vacuum
	 */
	public VacuumWatch(SchemaName schema, long deadRowsWarning) {
		this.table = schema.value() + ".pgqueue_jobs";
		this.deadRowsWarning = deadRowsWarning;
	}

	/** Judges a fresh reading, keeps it, and logs when its findings changed for the worse or cleared. */
	public synchronized VacuumHealth read(VacuumReading reading) {
		VacuumHealth health = judge(reading);
		List<Verdict> before = (this.last != null) ? this.last.findings() : List.of();
		this.last = health;
		if (!Set.copyOf(before).containsAll(health.findings())) {
			logger.warn("pgqueue's jobs table {} is not vacuumed as its settings assume ({} dead rows, {} live): {}",
					health.table(), health.deadRows(), health.liveRows(), health.message());
		}
		else if (!before.isEmpty() && health.findings().isEmpty()) {
			logger.info("pgqueue's jobs table {} is vacuumed again: {}", health.table(), health.message());
		}
		return health;
	}

	/** The last reading judged, or {@code null} before the first. */
	public @Nullable VacuumHealth last() {
		return this.last;
	}

	private VacuumHealth judge(VacuumReading reading) {
		List<Verdict> findings = new ArrayList<>();
		if (!reading.serverAutovacuum() || !reading.trackCounts()) {
			findings.add(Verdict.SERVER_AUTOVACUUM_OFF);
		}
		if (!reading.tableAutovacuum()) {
			findings.add(Verdict.TABLE_AUTOVACUUM_OFF);
		}
		if (deadRowsGrowing(reading)) {
			findings.add(Verdict.DEAD_ROWS_GROWING);
		}
		return new VacuumHealth(this.table, reading.serverAutovacuum(), reading.trackCounts(),
				reading.tableAutovacuum(), reading.deadRows(), reading.liveRows(), reading.lastVacuum(), findings);
	}

	private boolean deadRowsGrowing(VacuumReading reading) {
		return reading.deadRows() >= this.deadRowsWarning && reading.deadRows() > reading.liveRows()
				&& (reading.sinceLastVacuum() == null
						|| reading.sinceLastVacuum().compareTo(MaintenanceSettings.VACUUM_OVERDUE_AFTER) >= 0);
	}

}
