package dev.pgqueue.engine.sql;

import dev.pgqueue.schema.SchemaName;

/** The statements of recurring jobs, on {@code pgqueue_schedules}; run by {@link ScheduleRepository}. */
final class ScheduleStatements {

	private static final String COLUMNS = "name, cron, zone, kind, queue, payload::text, missed, overlap, next_tick, "
			+ "last_tick, last_job, paused_at, paused_by, declared, updated_at";

	/** The database's clock. */
	final String now = "SELECT now()";

	/**
	 * Locks the running schedules whose next tick is due, oldest tick first, skipping those another
	 * instance's pass holds; each row also carries the database's clock. Parameters: limit.
	 */
	final String lockDue;

	/** Which of some jobs are unfinished. Parameters: array of public ids. */
	final String unfinished;

	/** Moves schedules on after a pass. Parameters: arrays of name, next tick, last tick, last job. */
	final String advance;

	/**
	 * Creates a schedule or changes its definition; the next tick moves only if the cron expression or
	 * zone changed. Returns the row if it was written. Parameters: name, cron, zone, kind, queue,
	 * payload, missed, overlap, next tick, declared.
	 */
	final String save;

	/** One schedule. Parameters: name. */
	final String get;

	/** Every schedule by name. */
	final String list;

	/** Pauses a running schedule. Parameters: who, name. */
	final String pause;

	/** Resumes a paused schedule. Parameters: name. */
	final String resume;

	/** Records a job enqueued outside the ticks. Parameters: job, name. */
	final String recordJob;

	/** Deletes a schedule. Parameters: name. */
	final String delete;

	/** Running schedules whose next tick is later than the grace. Parameters: grace in milliseconds. */
	final String overdue;

	ScheduleStatements(SchemaName schema) {
		String table = schema.qualify("pgqueue_schedules");
		String jobs = schema.qualify("pgqueue_jobs");
		this.lockDue = """
				SELECT %2$s, now() FROM %1$s
				WHERE paused_at IS NULL AND next_tick <= now()
				ORDER BY next_tick
				LIMIT ?
				FOR UPDATE SKIP LOCKED""".formatted(table, COLUMNS);
		this.unfinished = """
				SELECT public_id FROM %s WHERE public_id = ANY(?) AND state IN ('available', 'scheduled', 'running')"""
			.formatted(jobs);
		this.advance = """
				UPDATE %s s
				SET next_tick = m.next_tick, last_tick = coalesce(m.last_tick, s.last_tick),
				    last_job = coalesce(m.last_job, s.last_job)
				FROM unnest(?::text[], ?::timestamptz[], ?::timestamptz[], ?::uuid[]) AS m(name, next_tick, last_tick, last_job)
				WHERE s.name = m.name""".formatted(table);
		this.save = """
				INSERT INTO %1$s AS s (name, cron, zone, kind, queue, payload, missed, overlap, next_tick, declared)
				VALUES (?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?)
				ON CONFLICT (name) DO UPDATE
				SET cron = EXCLUDED.cron, zone = EXCLUDED.zone, kind = EXCLUDED.kind, queue = EXCLUDED.queue,
				    payload = EXCLUDED.payload, missed = EXCLUDED.missed, overlap = EXCLUDED.overlap,
				    declared = EXCLUDED.declared, updated_at = now(),
				    next_tick = CASE WHEN (s.cron, s.zone) IS DISTINCT FROM (EXCLUDED.cron, EXCLUDED.zone)
				                     THEN EXCLUDED.next_tick ELSE s.next_tick END
				WHERE (s.cron, s.zone, s.kind, s.queue, s.payload, s.missed, s.overlap, s.declared)
				      IS DISTINCT FROM (EXCLUDED.cron, EXCLUDED.zone, EXCLUDED.kind, EXCLUDED.queue, EXCLUDED.payload,
				                        EXCLUDED.missed, EXCLUDED.overlap, EXCLUDED.declared)
				RETURNING %2$s""".formatted(table, COLUMNS);
		this.get = "SELECT %s FROM %s WHERE name = ?".formatted(COLUMNS, table);
		this.list = "SELECT %s FROM %s ORDER BY name".formatted(COLUMNS, table);
		this.pause = "UPDATE %s SET paused_at = now(), paused_by = ? WHERE name = ? AND paused_at IS NULL".formatted(table);
		this.resume = "UPDATE %s SET paused_at = NULL, paused_by = NULL WHERE name = ? AND paused_at IS NOT NULL"
			.formatted(table);
		this.recordJob = "UPDATE %s SET last_job = ? WHERE name = ?".formatted(table);
		this.delete = "DELETE FROM %s WHERE name = ?".formatted(table);
		this.overdue = """
				SELECT name FROM %s
				WHERE paused_at IS NULL AND next_tick < now() - ? * interval '1 millisecond'
				ORDER BY name""".formatted(table);
	}

}
