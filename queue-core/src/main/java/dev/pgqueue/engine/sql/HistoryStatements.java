package dev.pgqueue.engine.sql;

import dev.pgqueue.schema.SchemaName;

/**
 * The texts of the statements on the queues' per-minute history ({@code pgqueue_queue_history}) for
 * one schema: the flusher's upsert, the cleaner's prune and the operators' read;
 * {@link HistoryRepository} runs them. Parameters are positional, listed in each statement's Javadoc.
 */
final class HistoryStatements {

	/**
	 * Adds what one instance counted to the rows of its queues' minutes, creating those that do not
	 * exist: counts and sums are added, maxima keep the larger. Parameters, each an array with one
	 * element per queue and minute: queues ({@code text[]}), minutes since the epoch, completed,
	 * failed, retried, waits ({@code bigint[]}), wait sums and maxima in milliseconds
	 * ({@code float8[]}), runs ({@code bigint[]}), run sums and maxima ({@code float8[]}).
	 *
	 * <p>The rows are inserted in key order, so that two instances flushing the same minutes take
	 * their row locks in the same order and one waits for the other instead of deadlocking.
	 */
	final String addMinutes;

	/** Deletes the minutes older than the retention. Parameter: retention in milliseconds. */
	final String pruneOlderThan;

	/**
	 * Each queue's history over a window, in steps: one row per queue that has a minute in the
	 * window, per step, steps without a minute included, oldest first. Steps are aligned on the epoch
	 * (a five-minute step starts at :00, :05, …) and the last one holds the current minute.
	 * Parameters: step in seconds, number of steps. Returns queue, step start, completed, failed,
	 * retried, mean and max wait, mean and max run (milliseconds, null when nothing was measured).
	 */
	final String readSteps;

	HistoryStatements(SchemaName schema) {
		String table = schema.qualify("pgqueue_queue_history");
		this.addMinutes = """
				INSERT INTO %s AS h (queue, minute, completed, failed, retried, waits, wait_ms_sum, wait_ms_max,
				                     runs, run_ms_sum, run_ms_max)
				SELECT q, to_timestamp(m * 60), c, f, r, w, ws, wm, n, rs, rm
				FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[],
				            ?::float8[], ?::float8[], ?::bigint[], ?::float8[], ?::float8[])
				     AS counted (q, m, c, f, r, w, ws, wm, n, rs, rm)
				ORDER BY q, m
				ON CONFLICT (queue, minute) DO UPDATE SET
				    completed = h.completed + excluded.completed,
				    failed = h.failed + excluded.failed,
				    retried = h.retried + excluded.retried,
				    waits = h.waits + excluded.waits,
				    wait_ms_sum = h.wait_ms_sum + excluded.wait_ms_sum,
				    wait_ms_max = greatest(h.wait_ms_max, excluded.wait_ms_max),
				    runs = h.runs + excluded.runs,
				    run_ms_sum = h.run_ms_sum + excluded.run_ms_sum,
				    run_ms_max = greatest(h.run_ms_max, excluded.run_ms_max)
				""".formatted(table);
		this.pruneOlderThan = "DELETE FROM %s WHERE minute < now() - ? * interval '1 millisecond'".formatted(table);
		this.readSteps = """
				WITH p AS (SELECT ?::bigint AS step, ?::int AS steps),
				     steps AS (
				         SELECT to_timestamp((floor(extract(epoch FROM now()) / p.step) - g) * p.step) AS start
				         FROM p, generate_series(0, p.steps - 1) AS g),
				     binned AS (
				         SELECT h.queue, to_timestamp(floor(extract(epoch FROM h.minute) / p.step) * p.step) AS start,
				                sum(h.completed) AS completed, sum(h.failed) AS failed, sum(h.retried) AS retried,
				                sum(h.waits) AS waits, sum(h.wait_ms_sum) AS wait_ms_sum, max(h.wait_ms_max) AS wait_ms_max,
				                sum(h.runs) AS runs, sum(h.run_ms_sum) AS run_ms_sum, max(h.run_ms_max) AS run_ms_max
				         FROM %s h, p
				         WHERE h.minute >= (SELECT min(start) FROM steps)
				         GROUP BY 1, 2)
				SELECT q.queue, s.start, coalesce(b.completed, 0), coalesce(b.failed, 0), coalesce(b.retried, 0),
				       b.wait_ms_sum / nullif(b.waits, 0), CASE WHEN b.waits > 0 THEN b.wait_ms_max END,
				       b.run_ms_sum / nullif(b.runs, 0), CASE WHEN b.runs > 0 THEN b.run_ms_max END
				FROM (SELECT DISTINCT queue FROM binned) AS q
				CROSS JOIN steps s
				LEFT JOIN binned b ON b.queue = q.queue AND b.start = s.start
				ORDER BY q.queue, s.start
				""".formatted(table);
	}

}
