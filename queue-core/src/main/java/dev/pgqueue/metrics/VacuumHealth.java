package dev.pgqueue.metrics;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * Whether the jobs table gets vacuumed. Every finished, retried or rescued job leaves a dead row
 * behind; the table's storage settings (fillfactor, aggressive per-table autovacuum) assume that
 * autovacuum removes them within a minute or so. When it cannot, dead rows pile up, claims walk
 * past them and the table and its indexes grow, and nothing else says so.
 *
 * @param table the jobs table, schema-qualified as an operator would type it
 * @param serverAutovacuum whether the server's {@code autovacuum} setting is on
 * @param trackCounts whether the server's {@code track_counts} setting is on: autovacuum cannot
 * tell which tables need it without, and the row counts here stay at zero
 * @param tableAutovacuum whether autovacuum may vacuum the jobs table (its {@code autovacuum_enabled}
 * storage parameter is not false)
 * @param deadRows dead rows in the jobs table, as the server's statistics count them
 * @param liveRows live rows in the jobs table, likewise
 * @param lastVacuum when the jobs table was last vacuumed, by hand or by autovacuum, or
 * {@code null} when it has not been since its statistics began
 * @param findings what is wrong, most fundamental first; empty when all is fine
 */
public record VacuumHealth(String table, boolean serverAutovacuum, boolean trackCounts, boolean tableAutovacuum,
		long deadRows, long liveRows, @Nullable Instant lastVacuum, List<Verdict> findings) {

	public VacuumHealth {
		findings = List.copyOf(findings);
	}

	/** The most fundamental finding, or {@link Verdict#FINE}. */
	public Verdict verdict() {
		return this.findings.isEmpty() ? Verdict.FINE : this.findings.get(0);
	}

	/** Whether autovacuum cannot run on the jobs table: off for the server, without its counts, or off for the table. */
	public boolean autovacuumOff() {
		return !this.serverAutovacuum || !this.trackCounts || !this.tableAutovacuum;
	}

	/** What is wrong and what to do, each finding in turn; or that all is fine. */
	public String message() {
		if (this.findings.isEmpty()) {
			return "Autovacuum is on for the server and for " + this.table + ", and its dead rows (" + this.deadRows
					+ ") are within bounds.";
		}
		return this.findings.stream().map(this::explain).collect(Collectors.joining(" "));
	}

	private String explain(Verdict finding) {
		return switch (finding) {
			case SERVER_AUTOVACUUM_OFF -> serverMessage();
			case TABLE_AUTOVACUUM_OFF -> "Autovacuum is disabled for pgqueue's jobs table (autovacuum_enabled = false): "
					+ "its dead rows are only removed by a VACUUM run by hand. Turn it back on: ALTER TABLE " + this.table
					+ " RESET (autovacuum_enabled);";
			case DEAD_ROWS_GROWING -> "pgqueue's jobs table " + this.table + " holds " + this.deadRows
					+ " dead rows against " + this.liveRows + " live ones, and "
					+ ((this.lastVacuum != null) ? "was last vacuumed at " + this.lastVacuum
							: "has not been vacuumed since its statistics began")
					+ ": claims walk past them and the table grows. Run VACUUM " + this.table
					+ "; and find out why autovacuum does not get to it: a long transaction holding back cleanup "
					+ "(see pgqueue.database.oldest.transaction.age), autovacuum workers busy with other tables "
					+ "(autovacuum_max_workers), or cost limits that slow it down (autovacuum_vacuum_cost_limit).";
			case FINE -> "";
		};
	}

	private String serverMessage() {
		StringBuilder text = new StringBuilder();
		if (!this.serverAutovacuum) {
			text.append("Autovacuum is off for the server (autovacuum = off): dead rows of pgqueue's jobs table ")
				.append(this.table)
				.append(", as of every table, are never removed but by a VACUUM run by hand, and the table and its ")
				.append("indexes grow. Turn it on: ALTER SYSTEM SET autovacuum = on; SELECT pg_reload_conf();");
		}
		if (!this.trackCounts) {
			text.append(this.serverAutovacuum ? "" : " ")
				.append("Statistics are off for the server (track_counts = off), and autovacuum needs them to tell ")
				.append("which tables to vacuum. Turn them on: ALTER SYSTEM SET track_counts = on; ")
				.append("SELECT pg_reload_conf();");
		}
		return text.toString();
	}

	/** The state of the jobs table's vacuum, most fundamental problem first. */
	public enum Verdict {

		/** Autovacuum runs for the table and its dead rows stay within bounds. */
		FINE,

		/** The server's {@code autovacuum} (or {@code track_counts}, which it needs) is off. */
		SERVER_AUTOVACUUM_OFF,

		/** The jobs table's {@code autovacuum_enabled} storage parameter is false. */
		TABLE_AUTOVACUUM_OFF,

		/** Dead rows passed the threshold, outnumber the live ones, and no vacuum ran for a while. */
		DEAD_ROWS_GROWING;

		/** The verdict as health details show it: {@code fine}, {@code server-autovacuum-off}… */
		public String label() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

	}

}
