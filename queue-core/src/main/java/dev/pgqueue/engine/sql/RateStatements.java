package dev.pgqueue.engine.sql;

import dev.pgqueue.schema.SchemaName;

/**
 * The statements on the windows of rate limits ({@code pgqueue_rate_windows}), each named after
 * what it does; {@link RateRepository} runs them, each as a short transaction of its own. The ones
 * that reserve or give back turn {@code synchronous_commit} off for their transaction (the first
 * column of their row, which nothing reads). Parameters are positional and listed in each
 * statement's Javadoc.
 *
 * <p>A window counts its grants in a ring of 51 sub-windows of a fiftieth of the period each, kept
 * by the functions of the schema ({@code pgqueue_rate_reserve}, {@code pgqueue_rate_reserve_all},
 * {@code pgqueue_rate_give_back}).
 */
final class RateStatements {

	/**
	 * Reserves starts of one limit. Parameters: window name, most starts in one period, period in
	 * microseconds, starts wanted, starts wanted ahead. Returns one row: granted, granted at (the
	 * database's clock), and free_in_us (microseconds after the grant until the next start frees, or
	 * null).
	 */
	final String reserve;

	/**
	 * Reserves units of several limits at once, locking their rows in the order of their names.
	 * Parameters: arrays of window names, most starts, periods in microseconds and units wanted.
	 * Returns one row per limit: name, granted, granted at, free_in_us.
	 */
	final String reserveAll;

	/**
	 * Gives back units of a grant that no job used. Parameters: window name, units, the grant's
	 * instant.
	 */
	final String giveBack;

	/**
	 * Gives back units of several grants, in the order of their names. Parameters: arrays of window
	 * names, units, the grants' instants.
	 */
	final String giveBackAll;

	/**
	 * The starts granted in the last period of a window, by the database's clock now. Parameter:
	 * window name.
	 */
	final String used;

	/**
	 * Deletes the windows whose names match a pattern and that granted nothing for a whole period.
	 * Parameter: a {@code LIKE} pattern escaped with a backslash.
	 */
	final String pruneIdle;

	RateStatements(SchemaName schema) {
		String windows = schema.qualify("pgqueue_rate_windows");
		this.reserve = "SELECT set_config('synchronous_commit', 'off', true), r.granted, r.granted_at, "
				+ "(extract(epoch FROM r.free_at - r.granted_at) * 1000000)::bigint AS free_in_us FROM "
				+ schema.qualify("pgqueue_rate_reserve") + "(?, ?, ?, ?, ?) r";
		this.reserveAll = "SELECT set_config('synchronous_commit', 'off', true), r.name, r.granted, r.granted_at, "
				+ "(extract(epoch FROM r.free_at - r.granted_at) * 1000000)::bigint AS free_in_us FROM "
				+ schema.qualify("pgqueue_rate_reserve_all") + "(?::text[], ?::int[], ?::bigint[], ?::int[]) r";
		this.giveBack = "SELECT set_config('synchronous_commit', 'off', true), " + schema.qualify("pgqueue_rate_give_back")
				+ "(?, ?, ?)";
		this.giveBackAll = "SELECT set_config('synchronous_commit', 'off', true), count(" + schema.qualify(
				"pgqueue_rate_give_back") + "(g.name, g.units, g.at)) FROM (SELECT * FROM unnest(?::text[], ?::int[], "
				+ "?::timestamptz[]) AS u(name, units, at) ORDER BY name) g";
		// The ring's slot i holds the sub-window that is congruent to i - 1 modulo 51 and no later than
		// the head; it counts while it is one of the last 51 sub-windows by the clock now.
		this.used = """
				SELECT coalesce(sum(c.n), 0) FROM %s w
				CROSS JOIN LATERAL unnest(w.counts) WITH ORDINALITY AS c(n, i)
				WHERE w.name = ?
				  AND w.head - (((w.head - (c.i - 1)) %% 51) + 51) %% 51
				      > floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint
				        / greatest(w.period_us / 50, 1) - 51""".formatted(windows);
		this.pruneIdle = """
				DELETE FROM %s WHERE name LIKE ? ESCAPE '\\'
				  AND head < floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint
				             / greatest(period_us / 50, 1) - 51""".formatted(windows);
	}

}
