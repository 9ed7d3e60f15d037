package dev.pgqueue.engine.sql;

import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.pgqueue.JobQuery;
import dev.pgqueue.schema.SchemaName;

/**
 * The texts of the operators' statements ({@code JobAdmin}) and of the pause table, for one schema;
 * {@link AdminRepository} runs them. Parameters are positional, listed in each statement's Javadoc.
 *
 * <p>A statement on one job locks its row with {@code FOR UPDATE NOWAIT}: a row held by a
 * transactional batch fails at once with SQLSTATE 55P03 instead of waiting for the batch. The lock
 * also returns the row as committed last, so the state it reports is the one the change is guarded
 * by; the change repeats the guard on the row it updates.
 */
public final class AdminStatements {

	/**
	 * Columns of a job as an operator sees it, in this order: {@code id, public_id, kind, queue, state,
	 * priority, attempt, max_attempts, last_error, created_at, run_at, started_at, finished_at, snoozes,
	 * tags, concurrency_key, rate_weight}.
	 */
	static final String DETAIL_COLUMNS = "id, public_id, kind, queue, state, priority, attempt, max_attempts, "
			+ "last_error, created_at, run_at, started_at, finished_at, snoozes, tags, concurrency_key, rate_weight";

	/** Finds a job by public id. Parameter: public id. Returns {@link #DETAIL_COLUMNS}. */
	public final String findJob;

	/** {@link #findJob}, with the payload as a last column. */
	public final String findJobWithPayload;

	/**
	 * The attempts of a job, oldest first: those its history keeps, then the one its row shows when it
	 * completed or runs under a lease (the history holds only attempts that did not complete).
	 * Parameter: public id, twice. Returns attempt, started at, finished at, outcome, error class,
	 * message.
	 */
	public final String jobAttempts;

	/** The output a job's listener returned, as JSON text (null for none). Parameter: public id. */
	public final String jobOutput;

	/** The largest id given so far, or null on an empty table: the bound of a bulk action. */
	public final String largestId;

	/** Every job, unfinished and finished (the view {@code pgqueue_all_jobs}): what reads read. */
	private final String table;

	/** The unfinished jobs' table. */
	private final String unfinished;

	/**
	 * The kinds this schema knows: those a poller of some instance handles (as last seen), and those
	 * its schedules enqueue; sorted.
	 */
	public final String knownKinds;

	/**
	 * The insert of a retry: the failed jobs of {@code moved} back into the jobs table, with their ids,
	 * due now, with one attempt more if they used them all.
	 */
	private final String retryMoves;

	/** The finished jobs' table. */
	private final String finished;

	/** Counts jobs by queue and state. */
	public final String countJobs;

	/**
	 * Counts, by queue, the jobs that completed or failed within a window, through the cleaner's
	 * index on (state, finished_at). Parameter: the window in seconds.
	 */
	public final String countFinishedWithin;

	/**
	 * Makes a failed job available now, with one attempt more if it used them all. Parameter: public
	 * id. Returns one row unless no job has the id: state found, kind, queue, rows changed.
	 */
	public final String retryJob;

	/**
	 * Cancels a job that waits (available or scheduled). Parameter: public id. Returns as
	 * {@link #retryJob}.
	 */
	public final String cancelJob;

	/**
	 * Deletes a finished job (completed, failed or cancelled). Parameter: public id. Returns as
	 * {@link #retryJob}.
	 */
	public final String deleteJob;

	/** A job's state as committed, without locking. Parameter: public id. */
	public final String jobState;

	/**
	 * Pauses a queue, notifying the change when it is one. Parameters: queue, who paused it. Returns a
	 * row if the queue was not paused before.
	 */
	public final String pauseQueue;

	/** Resumes a queue, notifying the change. Parameter: queue. Returns a row if it was paused. */
	public final String resumeQueue;

	/** The paused queues. */
	public final String pausedQueues;

	/** The channel on which pauses and resumes are announced; the payload is the queue's name. */
	public final String pausesChannel;

	/**
	 * @param notify whether pauses, resumes and retries notify
	 */
	public AdminStatements(SchemaName schema, boolean notify) {
		String table = schema.qualify("pgqueue_jobs");
		String finished = schema.qualify("pgqueue_finished_jobs");
		String all = schema.qualify("pgqueue_all_jobs");
		String pauses = schema.qualify("pgqueue_queue_pauses");
		JobStatements jobs = new JobStatements(schema);
		this.pausesChannel = jobs.channel + ":pauses";
		this.findJob = "SELECT " + DETAIL_COLUMNS + " FROM " + all + " WHERE public_id = ?";
		this.findJobWithPayload = "SELECT " + DETAIL_COLUMNS + ", payload::text FROM " + all + " WHERE public_id = ?";
		this.jobOutput = "SELECT output::text FROM " + all + " WHERE public_id = ?";
		this.largestId = "SELECT max(id) FROM " + table;
		this.jobAttempts = """
				SELECT (a.e->>'attempt')::int, (a.e->>'startedAt')::timestamptz, (a.e->>'finishedAt')::timestamptz,
				       a.e->>'outcome', a.e->>'error', a.e->>'message', 0 AS part, a.o
				FROM %1$s j CROSS JOIN LATERAL jsonb_array_elements(coalesce(j.attempts, '[]'::jsonb))
				     WITH ORDINALITY AS a(e, o)
				WHERE j.public_id = ?
				UNION ALL
				SELECT j.attempt, j.started_at, j.finished_at, j.state, NULL, NULL, 1, 0
				FROM %1$s j
				WHERE j.public_id = ? AND j.state IN ('completed', 'running')
				ORDER BY part, o""".formatted(all);
		this.table = all;
		this.unfinished = table;
		this.knownKinds = "SELECT kind FROM " + schema.qualify("pgqueue_handled_kinds") + " UNION SELECT kind FROM "
				+ schema.qualify("pgqueue_schedules") + " ORDER BY 1";
		this.countJobs = "SELECT queue, state, count(*) FROM " + all + " GROUP BY queue, state";
		this.countFinishedWithin = "SELECT queue, count(*) FROM " + finished + " WHERE state IN ('completed', 'failed') "
				+ "AND finished_at > now() - make_interval(secs => ?) GROUP BY queue";
		this.retryMoves = """
				INSERT INTO %1$s (%2$s) OVERRIDING SYSTEM VALUE
				SELECT %3$s FROM moved m""".formatted(table, FinishedMoves.COLUMNS, FinishedMoves.select("m",
				Map.of("state", "'available'", "run_at", "now()", "finished_at", "NULL", "max_attempts",
						"greatest(m.max_attempts, m.attempt + 1)")));
		this.finished = finished;
		this.retryJob = guarded(table, finished, """
				moved AS (DELETE FROM %1$s f USING target WHERE f.id = target.id AND f.state = 'failed' RETURNING f.*),
				changed AS (%2$s RETURNING id)""".formatted(finished, this.retryMoves));
		this.cancelJob = guarded(table, finished, """
				changed AS (UPDATE %1$s j SET state = 'cancelled', finished_at = clock_timestamp()
				            FROM target WHERE j.id = target.id AND j.state IN ('available', 'scheduled') RETURNING j.id)"""
			.formatted(table));
		this.deleteJob = guarded(table, finished, """
				changed AS (DELETE FROM %1$s f USING target WHERE f.id = target.id RETURNING f.id)""".formatted(finished));
		this.jobState = "SELECT state FROM " + all + " WHERE public_id = ?";
		String announce = notify ? "pg_notify('" + this.pausesChannel + "', queue)" : "NULL";
		this.pauseQueue = """
				WITH paused AS (
				    INSERT INTO %1$s (queue, paused_by) VALUES (?, ?) ON CONFLICT (queue) DO NOTHING RETURNING queue)
				SELECT queue, %2$s FROM paused
				""".formatted(pauses, announce);
		this.resumeQueue = """
				WITH resumed AS (DELETE FROM %1$s WHERE queue = ? RETURNING queue)
				SELECT queue, %2$s FROM resumed
				""".formatted(pauses, announce);
		this.pausedQueues = "SELECT queue FROM " + pauses;
	}

	/**
	 * A change of one job, guarded twice by the state it expects: the job's row locked with
	 * {@code NOWAIT} first, in whichever table holds it (the lock returns the row as last committed),
	 * and the change's own predicate on the row it changes. Parameter: public id.
	 * @param change the change's common table expressions, the last named {@code changed}, reading
	 * the locked row as {@code target}
	 */
	private static String guarded(String table, String finished, String change) {
		return """
				WITH k AS (SELECT ?::uuid AS public_id),
				     unfinished AS (SELECT id, state, kind, queue FROM %1$s WHERE public_id = (SELECT public_id FROM k)
				                    FOR UPDATE NOWAIT),
				     done AS (SELECT id, state, kind, queue FROM %2$s WHERE public_id = (SELECT public_id FROM k)
				              FOR UPDATE NOWAIT),
				     target AS (SELECT * FROM unfinished UNION ALL SELECT * FROM done),
				     %3$s
				SELECT target.state, target.kind, target.queue, (SELECT count(*) FROM changed)::int FROM target
				""".formatted(table, finished, change);
	}

	/** Lists the jobs a query matches, newest first, one page. Returns {@link #DETAIL_COLUMNS}. */
	public Statement listJobs(JobQuery query) {
		List<Object> arguments = new ArrayList<>();
		String where = conditions(query, arguments);
		if (query.before() != null) {
			where += " AND id < ?";
			arguments.add(Long.parseLong(query.before()));
		}
		arguments.add(query.limit());
		return new Statement("SELECT " + DETAIL_COLUMNS + " FROM " + source(query) + " WHERE true" + where
				+ " ORDER BY id DESC LIMIT ?", arguments);
	}

	/** Counts the jobs a query matches, ignoring its cursor and limit. Returns one bigint. */
	public Statement countJobs(JobQuery query) {
		List<Object> arguments = new ArrayList<>();
		String where = conditions(query, arguments);
		return new Statement("SELECT count(*) FROM " + source(query) + " WHERE true" + where, arguments);
	}

	/**
	 * Where the jobs a query asks for are: in one table when it names a state (finished jobs in
	 * theirs, unfinished ones in the claimed table), else in both.
	 */
	private String source(JobQuery query) {
		if (query.state() == null) {
			return this.table;
		}
		return query.state().isFinished() ? this.finished : this.unfinished;
	}

	/**
	 * Retries up to {@code batch} failed jobs a query matches, as {@link #retryJob} does, skipping rows
	 * another transaction holds. Returns one row per queue: the queue and how many jobs it got back.
	 */
	public Statement retryMatching(JobQuery query, Duration failedFor, int batch) {
		List<Object> arguments = new ArrayList<>();
		String where = conditions(query, arguments);
		if (!failedFor.isZero()) {
			// A failed job's finished_at is when it failed; (state, finished_at) serves the range.
			where += " AND finished_at <= now() - ? * interval '1 millisecond'";
			arguments.add(failedFor.toMillis());
		}
		arguments.add(batch);
		return new Statement("""
				WITH target AS MATERIALIZED (
				         SELECT id FROM %1$s WHERE state = 'failed'%3$s LIMIT ? FOR UPDATE SKIP LOCKED),
				     moved AS (
				         DELETE FROM %1$s f USING target WHERE f.id = target.id AND f.state = 'failed' RETURNING f.*),
				     retried AS (%2$s RETURNING queue)
				SELECT queue, count(*)::int FROM retried GROUP BY queue
				""".formatted(this.finished, this.retryMoves, where), arguments);
	}

	/**
	 * Cancels up to {@code batch} waiting (available or scheduled) jobs a query matches, skipping rows
	 * another transaction holds (a poller claiming them). Returns each cancelled job's public id,
	 * kind and queue.
	 */
	public Statement cancelMatching(JobQuery query, int batch, long upTo) {
		List<Object> arguments = new ArrayList<>();
		String where = conditions(query, arguments);
		arguments.add(upTo);
		arguments.add(batch);
		return new Statement("""
				WITH target AS MATERIALIZED (
				         SELECT id FROM %1$s WHERE state IN ('available', 'scheduled')%2$s AND id <= ?
				         LIMIT ? FOR UPDATE SKIP LOCKED)
				UPDATE %1$s j SET state = 'cancelled', finished_at = clock_timestamp()
				FROM target
				WHERE j.id = target.id AND j.state IN ('available', 'scheduled')
				RETURNING j.public_id, j.kind, j.queue
				""".formatted(this.unfinished, where), arguments);
	}

	/**
	 * The conditions of a query's filters, each {@code " AND ..."}, adding their parameters in order.
	 * Indexes that serve them (docs/operations.md, "Finding jobs"): the state's partial indexes, the
	 * failed jobs' (state, queue, id), the finished jobs' (state, finished_at), the tags' GIN index,
	 * (kind, id), and the jobs with an error; a queue alone filters the rows the primary key reads.
	 */
	private static String conditions(JobQuery query, List<Object> arguments) {
		StringBuilder where = new StringBuilder();
		if (query.queue() != null) {
			where.append(" AND queue = ?");
			arguments.add(query.queue());
		}
		if (query.kind() != null) {
			where.append(" AND kind = ?");
			arguments.add(query.kind());
		}
		if (query.state() != null) {
			where.append(" AND state = ?");
			arguments.add(query.state().sqlValue());
		}
		if (query.tag() != null) {
			// Served by pgqueue_jobs_tags_idx, which holds only tagged jobs.
			where.append(" AND tags @> ARRAY[?::text]");
			arguments.add(query.tag());
		}
		if (query.finishedSince() != null) {
			where.append(" AND finished_at >= ?");
			arguments.add(Timestamp.from(query.finishedSince()));
		}
		if (query.error() != null) {
			// Served by pgqueue_jobs_errors_idx, which holds only jobs with an error.
			where.append(" AND last_error IS NOT NULL AND last_error ILIKE ? ESCAPE '\\'");
			arguments.add("%" + likeLiteral(query.error()) + "%");
		}
		return where.toString();
	}

	/** The text with LIKE's wildcards and escape character escaped, to match itself. */
	private static String likeLiteral(String text) {
		return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
	}

	/** A statement's text and its parameters, in order. */
	public record Statement(String sql, List<Object> arguments) {

		public Object[] argumentArray() {
			return this.arguments.toArray();
		}

	}

}
