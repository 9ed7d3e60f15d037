package dev.pgqueue.engine.sql;

import dev.pgqueue.schema.SchemaName;

/**
 * The statements behind unique jobs ({@link UniqueJobRepository}): an insert that the database turns
 * away when the key is taken, the change of a waiting job that holds a key, and the look-up of the job
 * that holds one.
 *
 * <p>Two guards, each enforced by a unique index rather than by a read before the insert: a key held
 * while its job is unfinished is the partial unique index {@code pgqueue_jobs_unique_idx} on
 * ({@code kind}, {@code unique_key}) of the unfinished jobs; a key held for a period is the primary key
 * of {@code pgqueue_unique_periods}, whose row outlives the job's.
 */
final class UniqueStatements {

	/** The start of a request's period: the one given, else the period of the database's clock now. */
	private static final String PERIOD_START = "coalesce(r.period_start, "
			+ "to_timestamp(floor(extract(epoch FROM now()) / nullif(r.period_s, 0)) * r.period_s))";

	private static final String UNFINISHED = "('available', 'scheduled', 'running')";

	/** The partial unique index that holds a key while its job is unfinished (migration V8). */
	static final String UNFINISHED_INDEX = "pgqueue_jobs_unique_idx";

	/**
	 * Inserts the jobs whose keys are free; returns {@code public_id, queue, state} of those inserted.
	 * Rows go in sorted by kind and key, whatever the order of the request: an insert that meets a key
	 * another transaction inserted and has not committed waits for it, so two enqueues of the same keys
	 * in opposite orders would each hold a key the other waits for, a deadlock that fails one of them.
	 * In one order, the later waits for the earlier and reads its jobs.
	 * Parameters: arrays of public id, kind, queue, payload, priority, run-at, delay (µs), max
	 * attempts, jitter (µs), bucket, concurrency key, trace context, unique key, period (s, zero for
	 * none), period start.
	 */
	final String insert;

	/**
	 * {@link #insert} for jobs whose keys are held while they are unfinished only: without the period
	 * table, which costs a second insert in the statement.
	 */
	final String insertWhileUnfinished;

	/**
	 * {@link #insertWhileUnfinished} of one job, its parameters single values rather than arrays: the
	 * common enqueue of one job, which arrays of one element would only slow down.
	 */
	final String insertOneWhileUnfinished;

	/** {@link #insertOneWhileUnfinished} that also notifies the job's queue if it is due. */
	final String insertOneWhileUnfinishedNotifying;

	/** {@link #insert} that also notifies, in the same statement, the queues that got due jobs. */
	final String insertNotifying;

	/** {@link #insertWhileUnfinished} that also notifies the queues that got due jobs. */
	final String insertWhileUnfinishedNotifying;

	/**
	 * {@link #insertWhileUnfinished} without {@code ON CONFLICT}: the whole statement fails with a
	 * unique violation of {@code pgqueue_jobs_unique_idx} at the first key that is held. Where it
	 * succeeds it is cheaper, because PostgreSQL inserts each row once rather than speculatively (a
	 * probe of the index, the insert, and a second check that confirms it); see
	 * {@link UniqueJobRepository} for when it is tried.
	 */
	final String insertWhileUnfinishedOrFail;

	/** {@link #insertWhileUnfinishedOrFail} that also notifies the queues that got due jobs. */
	final String insertWhileUnfinishedOrFailNotifying;

	/** {@link #insertWhileUnfinishedOrFail} of one job, its parameters single values. */
	final String insertOneWhileUnfinishedOrFail;

	/** {@link #insertOneWhileUnfinishedOrFail} that also notifies the job's queue if it is due. */
	final String insertOneWhileUnfinishedOrFailNotifying;

	/**
	 * Changes the waiting jobs that hold keys as the requests' conflict policies say, skipping those a
	 * transaction holds (a batch running them); returns {@code kind, unique_key, public_id, queue, state}
	 * of those changed. Parameters: arrays of kind, unique key, policy, payload, run-at, delay (µs),
	 * jitter (µs).
	 */
	final String changeWaiting;

	/**
	 * The job that holds each key now, if any; returns the request's index and the job's public id.
	 * Parameters: arrays of index, kind, unique key, period (s), period start.
	 */
	final String holders;

	/** Deletes keys whose period ended. Parameters: batch size. */
	final String pruneEndedPeriods;

	/** Notifies queues. Parameters: array of queue names. */
	final String notifyQueues;

	/**
	 * An insert that returns its rows and notifies, in the same statement, each queue that got a due
	 * job: one round trip, as the plain enqueue's.
	 */
	private static String notifying(String with, String insert, String channel) {
		return with + """
				,
				inserted AS (%s)
				SELECT i.public_id, i.queue, i.state,
				       (SELECT count(*) FROM (SELECT pg_notify('%s', q.queue)
				                              FROM (SELECT DISTINCT queue FROM inserted WHERE state = 'available') q) n)
				FROM inserted i""".formatted(insert.strip(), channel);
	}

	UniqueStatements(SchemaName schema) {
		String jobs = schema.qualify("pgqueue_jobs");
		String periods = schema.qualify("pgqueue_unique_periods");
		String channel = "pgqueue:" + schema.value();
		String rows = """
				WITH r AS (
				    SELECT * FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::smallint[], ?::timestamptz[],
				                         ?::bigint[], ?::integer[], ?::bigint[], ?::smallint[], ?::text[], ?::text[],
				                         ?::text[], ?::integer[], ?::text[], ?::bigint[], ?::timestamptz[])
				        AS r(public_id, kind, queue, payload, priority, run_at, delay_us, max_attempts, jitter_us, bucket,
				             concurrency_key, trace_context, tags, rate_weight, unique_key, period_s, period_start))""";
		String held = """
				,
				held AS (
				    INSERT INTO %s (kind, unique_key, period_start, period_end, public_id)
				    SELECT r.kind, r.unique_key, p.start, p.start + r.period_s * interval '1 second', r.public_id
				    FROM r CROSS JOIN LATERAL (SELECT %s AS start) p
				    WHERE r.period_s > 0
				    ORDER BY r.kind, r.unique_key, p.start
				    ON CONFLICT (kind, unique_key, period_start) DO NOTHING
				    RETURNING public_id)""".formatted(periods, PERIOD_START);
		String insertJobs = """
				INSERT INTO %1$s (public_id, kind, queue, payload, priority, run_at, max_attempts, bucket,
				                  concurrency_key, trace_context, tags, rate_weight, state, unique_key)
				SELECT r.public_id, r.kind, r.queue, r.payload::jsonb, r.priority, d.due, r.max_attempts, r.bucket,
				       r.concurrency_key, r.trace_context::jsonb, r.tags::text[], r.rate_weight,
				       CASE WHEN d.due <= now() THEN 'available' ELSE 'scheduled' END,
				       CASE WHEN r.period_s = 0 THEN r.unique_key END
				FROM r CROSS JOIN LATERAL (SELECT %2$s AS due) d
				%3$s
				ORDER BY r.kind, r.unique_key
				%4$s
				RETURNING public_id, queue, state""";
		String skipHeld = "ON CONFLICT (kind, unique_key) WHERE unique_key IS NOT NULL AND state IN " + UNFINISHED
				+ " DO NOTHING";
		String whileUnfinished = insertJobs.formatted(jobs, JobStatements.DUE_AT, "", skipHeld);
		String whileUnfinishedOrFail = insertJobs.formatted(jobs, JobStatements.DUE_AT, "", "");
		String withPeriods = insertJobs.formatted(jobs, JobStatements.DUE_AT,
				"WHERE r.period_s = 0 OR r.public_id IN (SELECT public_id FROM held)", skipHeld);
		String oneRow = """
				WITH r AS (
				    SELECT ?::uuid AS public_id, ?::text AS kind, ?::text AS queue, ?::text AS payload,
				           ?::smallint AS priority, ?::timestamptz AS run_at, ?::bigint AS delay_us,
				           ?::integer AS max_attempts, ?::bigint AS jitter_us, ?::smallint AS bucket,
				           ?::text AS concurrency_key, ?::text AS trace_context, ?::text AS tags,
				           ?::integer AS rate_weight, ?::text AS unique_key,
				           ?::bigint AS period_s, ?::timestamptz AS period_start)""";
		this.insertOneWhileUnfinished = oneRow + "\n" + whileUnfinished;
		this.insertOneWhileUnfinishedNotifying = notifying(oneRow, whileUnfinished, channel);
		this.insertWhileUnfinished = rows + "\n" + whileUnfinished;
		this.insert = rows + held + "\n" + withPeriods;
		this.insertWhileUnfinishedNotifying = notifying(rows, whileUnfinished, channel);
		this.insertOneWhileUnfinishedOrFail = oneRow + "\n" + whileUnfinishedOrFail;
		this.insertOneWhileUnfinishedOrFailNotifying = notifying(oneRow, whileUnfinishedOrFail, channel);
		this.insertWhileUnfinishedOrFail = rows + "\n" + whileUnfinishedOrFail;
		this.insertWhileUnfinishedOrFailNotifying = notifying(rows, whileUnfinishedOrFail, channel);
		this.insertNotifying = notifying(rows + held, withPeriods, channel);
		String changed = "CASE WHEN t.policy = 'REPLACE' THEN t.due ELSE greatest(j.run_at, t.due) END";
		this.changeWaiting = """
				WITH r AS (
				    SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[], ?::bigint[],
				                         ?::bigint[], ?::integer[])
				        AS r(kind, unique_key, policy, payload, run_at, delay_us, jitter_us, rate_weight)),
				t AS (
				    SELECT j.id, r.policy, r.payload, r.rate_weight, d.due
				    FROM r CROSS JOIN LATERAL (SELECT %2$s AS due) d
				    JOIN %1$s j ON j.kind = r.kind AND j.unique_key = r.unique_key AND j.state IN ('available', 'scheduled')
				    FOR UPDATE OF j SKIP LOCKED)
				UPDATE %1$s j
				SET payload = CASE WHEN t.policy = 'REPLACE' THEN t.payload::jsonb ELSE j.payload END,
				    rate_weight = CASE WHEN t.policy = 'REPLACE' THEN t.rate_weight ELSE j.rate_weight END,
				    run_at = %3$s,
				    state = CASE WHEN %3$s <= now() THEN 'available' ELSE 'scheduled' END
				FROM t
				WHERE j.id = t.id
				RETURNING j.kind, j.unique_key, j.public_id, j.queue, j.state
				""".formatted(jobs, JobStatements.DUE_AT, changed);
		this.holders = """
				SELECT r.i, coalesce(j.public_id, p.public_id)
				FROM unnest(?::integer[], ?::text[], ?::text[], ?::bigint[], ?::timestamptz[])
				     AS r(i, kind, unique_key, period_s, period_start)
				LEFT JOIN LATERAL (
				    SELECT public_id FROM %1$s
				    WHERE r.period_s = 0 AND kind = r.kind AND unique_key = r.unique_key AND state IN %4$s
				    LIMIT 1) j ON true
				LEFT JOIN LATERAL (
				    SELECT public_id FROM %2$s
				    WHERE r.period_s > 0 AND kind = r.kind AND unique_key = r.unique_key AND period_start = %3$s) p ON true
				""".formatted(jobs, periods, PERIOD_START, UNFINISHED);
		this.pruneEndedPeriods = """
				DELETE FROM %1$s
				WHERE (kind, unique_key, period_start) IN (
				    SELECT kind, unique_key, period_start FROM %1$s
				    WHERE period_end < now()
				    LIMIT ? FOR UPDATE SKIP LOCKED)""".formatted(periods);
		this.notifyQueues = """
				SELECT pg_notify('%s', q) FROM unnest(?::text[]) AS q""".formatted(channel);
	}

}
