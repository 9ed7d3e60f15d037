package dev.pgqueue.engine.sql;

import java.util.List;
import java.util.Map;

/**
 * The columns a job's row carries from {@code pgqueue_jobs} to {@code pgqueue_finished_jobs} and
 * back. Both tables have these columns in this order (the migration makes one from the other, and
 * {@code SchemaCatalogTests} checks it), so a move names them all and changes only what the move is
 * about: the state and its times on the way out, the new run on the way back (a retry).
 */
final class FinishedMoves {

	/** Every column of both tables, in table order. */
	static final List<String> COLUMN_LIST = List.of("id", "public_id", "kind", "queue", "payload", "state", "priority",
			"run_at", "attempt", "max_attempts", "lease_owner", "lease_until", "last_error", "created_at", "started_at",
			"finished_at", "bucket", "concurrency_key", "trace_context", "unique_key", "attempts", "output", "snoozes",
			"tags", "rate_weight");

	/** {@link #COLUMN_LIST} as an SQL list. */
	static final String COLUMNS = String.join(", ", COLUMN_LIST);

	private FinishedMoves() {
	}

	/**
	 * The select list of a move: each column of the row aliased {@code alias}, or the SQL expression
	 * the changes give for it.
	 */
	static String select(String alias, Map<String, String> changes) {
		for (String column : changes.keySet()) {
			if (!COLUMN_LIST.contains(column)) {
				throw new IllegalArgumentException("No column " + column + " in the jobs tables");
			}
		}
		StringBuilder select = new StringBuilder();
		for (String column : COLUMN_LIST) {
			if (!select.isEmpty()) {
				select.append(", ");
			}
			select.append(changes.getOrDefault(column, alias + "." + column));
		}
		return select.toString();
	}

}
