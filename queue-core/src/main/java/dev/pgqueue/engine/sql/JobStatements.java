package dev.pgqueue.engine.sql;

import java.util.HashMap;
import java.util.Map;

import dev.pgqueue.schema.SchemaName;

/**
 * The texts of every statement on the hot path (enqueue, claim, outcome, lease), for one schema's
 * jobs table, each named after what it does. {@link JobRepository} runs them; the benchmark's raw
 * JDBC baseline runs the very same texts, so that the two can never drift apart.
 *
 * <p>Parameters are positional; each statement's Javadoc lists them in order. Queue and kind names
 * are always parameters; the schema name is validated by {@link SchemaName} and quoted.
 */
public final class JobStatements {

	/**
	 * Columns of a claimed job, in this order: {@code id, public_id, kind, queue, attempt,
	 * max_attempts, priority, payload, run_at, created_at, claimed_at, trace_context, snoozes}.
	 * {@code JobRepository} reads them by position, so the order is part of the contract.
	 * {@code claimed_at} is the claim's {@code now()}, so that lateness against {@code run_at} is
	 * measured on one clock; {@code trace_context} is the enqueue's trace headers as JSON text, or null.
	 */
	public static final String CLAIMED_COLUMNS = "id, public_id, kind, queue, attempt, max_attempts, priority, "
			+ "payload::text AS payload, run_at, created_at, now() AS claimed_at, trace_context::text AS trace_context, "
			+ "snoozes, rate_weight";

	/** {@link #CLAIMED_COLUMNS} as an {@code UPDATE … RETURNING} of the table aliased {@code j} lists them. */
	static final String CLAIMED_COLUMNS_OF_J = "j.id, j.public_id, j.kind, j.queue, j.attempt, j.max_attempts, "
			+ "j.priority, j.payload::text AS payload, j.run_at, j.created_at, now() AS claimed_at, "
			+ "j.trace_context::text AS trace_context, j.snoozes, j.rate_weight";

	/**
	 * When a new job falls due: its run-at, or now plus its delay, plus a random part of its jitter.
	 * Computed once per row in a lateral subquery (a volatile expression there is not pulled up), so
	 * that the state is decided on the same instant that is stored.
	 */
	static final String DUE_AT = "coalesce(r.run_at, now() + coalesce(r.delay_us, 0) * interval '1 microsecond')"
			+ " + CASE WHEN r.jitter_us > 0 THEN random() * r.jitter_us * interval '1 microsecond' ELSE interval '0' END";

	/**
	 * The parameter row {@code p} of the statements that record an attempt that did not complete, so
	 * that each value is bound once and named. Parameters, in order: next state, delay before the next
	 * run in milliseconds, last error, attempts spent (1, or 0 for a snooze), whether it snoozed (1 or
	 * 0), the attempt's number, its outcome as the history names it, error class, error message,
	 * entries of history to keep, and the attempt's start (or null for the row's or the
	 * transaction's).
	 */
	static final String ATTEMPT_END = """
			(SELECT ?::text AS state, ?::bigint AS delay_ms, ?::text AS last_error, ?::int AS spent, ?::int AS snoozed,
			        ?::int AS attempt_no, ?::text AS outcome, ?::text AS error_class, ?::text AS message, ?::int AS keep,
			        ?::timestamptz AS started) p""";

	/** When a job whose attempt ended runs next: later if scheduled, else as it was. */
	private static final String NEXT_RUN_AT = "CASE WHEN p.state = 'scheduled' "
			+ "THEN clock_timestamp() + p.delay_ms * interval '1 millisecond' ELSE j.run_at END";

	/** When a job whose attempt ended finished: now if it failed or was cancelled, else not yet. */
	private static final String FINISHED_AT = "CASE WHEN p.state IN ('failed', 'cancelled') THEN clock_timestamp() END";

	/** A snooze is not an error: it keeps the job's last error as it was. */
	private static final String LAST_ERROR = "CASE WHEN p.snoozed = 1 THEN j.last_error ELSE p.last_error END";

	/**
	 * The job's attempt history ({@code j.attempts}) with the attempt of the parameter row {@code p}
	 * appended, keeping the newest {@code p.keep} entries; none at all when {@code p.keep} is 0. Null
	 * fields are left out of each entry.
	 * @param startedAt the SQL expression of the attempt's start
	 */
	static String historyAppended(String startedAt) {
		return historyAppended("p.keep", "p.attempt_no", startedAt, "p.outcome", "p.error_class", "p.message");
	}

	/**
	 * The job's attempt history ({@code j.attempts}) with one entry appended, keeping the newest
	 * {@code keep}; each argument is an SQL expression.
	 */
	static String historyAppended(String keep, String attempt, String startedAt, String outcome, String errorClass,
			String message) {
		return """
				CASE WHEN %1$s <= 0 THEN NULL ELSE (
				    SELECT jsonb_agg(h.e ORDER BY h.o) FROM (
				        SELECT a.e, a.o
				        FROM jsonb_array_elements(coalesce(j.attempts, '[]'::jsonb) || jsonb_build_array(jsonb_strip_nulls(
				                 jsonb_build_object('attempt', %2$s, 'startedAt', %3$s, 'finishedAt', clock_timestamp(),
				                                    'outcome', %4$s, 'error', %5$s, 'message', %6$s))))
				             WITH ORDINALITY AS a(e, o)
				        ORDER BY a.o DESC LIMIT %1$s) h) END""".formatted(keep, attempt, startedAt, outcome, errorClass,
				message);
	}

	/**
	 * Leases the jobs a query selects, as every leased claim does: running, under the owner's lease,
	 * their attempt counted, started now unless a start is given. Parameters: those of
	 * {@code claimed}, then lease owner, lease in milliseconds, start instant (or null for the
	 * transaction's).
	 * @param claimed the query of the jobs' ids, which locks their rows
	 * @param table the jobs table, qualified and quoted, which the statement aliases {@code j}
	 * @param returning what the statement returns, in columns of {@code j}
	 */
	static String leasing(String claimed, String table, String returning) {
		return """
				WITH claimed AS (%s)
				UPDATE %s j
				SET state = 'running', attempt = j.attempt + 1,
				    lease_owner = ?, lease_until = now() + ? * interval '1 millisecond', started_at = coalesce(?, now())
				FROM claimed
				WHERE j.id = claimed.id
				RETURNING %s
				""".formatted(claimed, table, returning);
	}

	/**
	 * What a transactional completion changes in the row it moves to the finished jobs (of the moved
	 * row {@code m} and the parameter row {@code p}): the attempt counted, the start recorded, finished now.
	 */
	private static final Map<String, String> COMPLETED_LOCKED = Map.of("state", "'completed'", "attempt",
			"m.attempt + 1", "started_at", "coalesce(p.started, now())", "finished_at", "clock_timestamp()",
			"last_error", "NULL");

	/** What a leased completion changes in the row it moves: finished now, the lease given up. */
	private static final Map<String, String> COMPLETED_LEASED = Map.of("state", "'completed'", "finished_at",
			"clock_timestamp()", "lease_owner", "NULL", "lease_until", "NULL", "last_error", "NULL");

	/** A completion's changes, with the output the moved row carries as {@code new_output}. */
	private static Map<String, String> withOutput(Map<String, String> changes) {
		Map<String, String> all = new HashMap<>(changes);
		all.put("output", "m.new_output::jsonb");
		return all;
	}

	/** The schema's jobs table, qualified and quoted. */
	public final String table;

	/**
	 * The schema's finished jobs ({@code pgqueue_finished_jobs}), qualified and quoted: a job leaves
	 * {@link #table} for it in the statement (or the transaction) that finishes it.
	 */
	public final String finishedTable;

	/** The channel on which enqueues and promotions announce due jobs; the payload is the queue's name. */
	public final String channel;

	/**
	 * Inserts one job, available if due now, else scheduled. Parameters: public id, kind, queue,
	 * payload (JSON text), priority, run-at (or null), delay in microseconds on the database clock (or
	 * null), max attempts, jitter in microseconds (the job falls due at a random instant that much
	 * later at most; 0 for none), bucket, concurrency key (or null), trace context (JSON text of the
	 * enqueue's trace headers, or null), tags (the text of a {@code text[]}, or null).
	 */
	public final String insertOne;

	/**
	 * {@link #insertOne}, notifying the job's queue in the same statement. Parameters: those of
	 * {@link #insertOne}, then the queue to notify.
	 */
	public final String insertOneNotifying;

	/**
	 * Inserts many jobs with one statement. Parameters: arrays of public ids, kinds, queues, payloads,
	 * priorities, run-ats, delays, max attempts, jitters, buckets, concurrency keys, trace contexts and
	 * tags (each the text of a {@code text[]}, or null), as for {@link #insertOne}.
	 */
	public final String insertMany;

	/**
	 * {@link #insertMany}, notifying queues in the same statement. Parameters: those of
	 * {@link #insertMany}, then an array of the queues to notify (those the caller knows received due
	 * jobs).
	 */
	public final String insertManyNotifying;

	/**
	 * Inserts many jobs that use none of the optional columns (due now: no run-at, delay or jitter; no
	 * concurrency key, tags or rate weight), available at once, with one statement that carries only
	 * the columns such a job has. Parameters: arrays of public ids, kinds, queues, payloads, priorities,
	 * max attempts, buckets and trace contexts.
	 */
	public final String insertManyPlain;

	/** {@link #insertManyPlain}, then an array of the queues to notify, as {@link #insertManyNotifying}. */
	public final String insertManyPlainNotifying;

	/** Notifies queues of new jobs. Parameters: the channel, an array of queue names. */
	public final String notifyQueues = "SELECT pg_notify(?, q) FROM unnest(?::text[]) q";

	/**
	 * {@link #notifyQueues} in a transaction of its own that does not wait for its commit to reach
	 * disk: a notification needs a transaction id, so each such transaction writes a commit record,
	 * which would otherwise wait for a WAL flush as an enqueue's commit does. A notification is only a
	 * hint (a lost one costs a poll interval), so nothing needs it durable. {@code set_config(…, true)}
	 * holds for the statement's own transaction only: run it in autocommit, never in a caller's
	 * transaction, whose commit it would make asynchronous too. Parameters: the channel, an array of
	 * queue names.
	 */
	public final String notifyQueuesAlone = """
			SELECT pg_notify(?, q) FROM set_config('synchronous_commit', 'off', true) AS c, unnest(?::text[]) q""";

	/**
	 * Locks up to a limit of due jobs for the caller's transaction, skipping rows others hold; the
	 * rows stay available. Parameters: queue, array of kinds, limit. Returns {@link #CLAIMED_COLUMNS}.
	 * Matches {@code pgqueue_jobs_claim_idx}: equality on queue, the index's order, available rows only.
	 */
	public final String claimLocked;

	/**
	 * {@link #claimLocked} from floors: reads the given ranges of priority levels, in the order given,
	 * so that the entries of jobs claimed before the floors are never visited (see
	 * {@code ClaimFloor}). Parameters: arrays of each range's priority (highest first), first run-at,
	 * first id within that run-at, and run-at it stops before (null: the end of the level); queue,
	 * array of kinds, limit, limit.
	 *
	 * <p>The ranges are read one after the other by a nested loop, each by an index range scan that
	 * starts at {@code (queue, priority, run_at, id)} (a row comparison, which the index takes as its
	 * start key); the outer limit stops the loop, and rows are locked only as they are returned, so no
	 * more than the limit is ever locked.
	 */
	public final String claimLockedFrom;

	/**
	 * {@link #claimLocked} in the given buckets only: reads each bucket in the order given, by an index
	 * range scan of {@code pgqueue_jobs_bucket_claim_idx} at {@code (queue, bucket)}, until the limit.
	 * Parameters: array of buckets, queue, array of kinds, limit, limit. {@code SKIP LOCKED} stays: the
	 * instance's own concurrent claims read the same buckets, and a bucket that just moved may still
	 * have rows locked by its former owner's last batch.
	 */
	public final String claimLockedInBuckets;

	/**
	 * Claims up to a limit of due jobs as running under a lease, counting the attempt, in one
	 * statement. Parameters: queue, array of kinds, limit, lease owner, lease in milliseconds.
	 * Returns {@link #CLAIMED_COLUMNS}.
	 */
	public final String claimLeased;

	/**
	 * {@link #claimLeased} from floors, as {@link #claimLockedFrom} reads them. Parameters: the four
	 * arrays of ranges, queue, array of kinds, limit, limit, lease owner, lease in milliseconds.
	 */
	public final String claimLeasedFrom;

	/**
	 * {@link #claimLeased} in the given buckets only, as {@link #claimLockedInBuckets} reads them.
	 * Parameters: array of buckets, queue, array of kinds, limit, limit, lease owner, lease in
	 * milliseconds.
	 */
	public final String claimLeasedInBuckets;

	/**
	 * Locks one job by its public id for the caller's transaction, whether it is due or scheduled for
	 * later, if it is of one of the kinds and no other transaction holds it: for running a chosen job
	 * now (the test kit). Parameters: public id, array of kinds. Returns {@link #CLAIMED_COLUMNS}.
	 */
	public final String claimLockedById;

	/**
	 * {@link #claimLockedById} as a leased claim, counting the attempt. Parameters: public id, array of
	 * kinds, lease owner, lease in milliseconds. Returns {@link #CLAIMED_COLUMNS}.
	 */
	public final String claimLeasedById;

	/**
	 * Completes jobs locked by {@link #claimLocked}, counting the attempt: moves their rows to
	 * {@link #finishedTable} as completed. Parameters: the attempts' start (or null for the
	 * transaction's), array of ids.
	 */
	public final String completeLocked;

	/**
	 * {@link #completeLocked}, storing each job's output. Parameters: the attempts' start (or null),
	 * array of ids, array of outputs (JSON text, or null for none).
	 */
	public final String completeLockedWithOutput;

	/** Deletes jobs locked by {@link #claimLocked} as they complete. Parameter: array of ids. */
	public final String deleteLocked;

	/**
	 * Records an attempt that did not complete, of a job locked by {@link #claimLocked}: counts it
	 * (unless it snoozed) and schedules the next attempt, or fails the job, and adds the attempt to the
	 * job's history. Parameters: those of {@link #ATTEMPT_END}, then id.
	 */
	public final String recordLockedFailure;

	/**
	 * Records a failed attempt of a job that is no longer locked (its prepared transaction was rolled
	 * back), if it is still available with the attempt it had. It waits for a row lock rather than
	 * skipping the row: a claimer that locked it meanwhile finds the recording worker's advisory lock
	 * held and lets go at once, and a skipped row would leave the attempt uncounted (the job would run
	 * its effect once more than its attempts allow). Parameters: those of {@link #ATTEMPT_END}, then id,
	 * attempt as stored.
	 */
	public final String recordFailureIfAvailable;

	/**
	 * Completes leased jobs still running the attempt given, moving their rows to
	 * {@link #finishedTable}; returns the ids that were. Parameters:
	 * array of ids, array of attempts.
	 */
	public final String completeLeased;

	/**
	 * {@link #completeLeased}, storing each job's output. Parameters: array of ids, array of attempts,
	 * array of outputs (JSON text, or null for none).
	 */
	public final String completeLeasedWithOutput;

	/** {@link #completeLeased}, deleting the jobs instead. */
	public final String deleteLeased;

	/**
	 * Records an attempt of a leased job that did not complete, if the job still runs that attempt; a
	 * snooze gives the attempt the claim counted back. Parameters: those of {@link #ATTEMPT_END}, then
	 * id, attempt.
	 */
	public final String recordLeasedFailure;

	/**
	 * Extends the leases an owner holds on running jobs, without waiting for a row another transaction
	 * has locked (the completer writing its outcome, a rescuer); returns each job still the owner's
	 * with whether its lease was extended or skipped. Parameters: array of ids, owner, lease in
	 * milliseconds. The rows are read twice: as the statement's snapshot has them (still the owner's),
	 * and locked, skipping those another transaction holds.
	 */
	public final String extendLeases;

	/**
	 * Returns running jobs of an owner to the queue without using an attempt. Parameters: array of
	 * ids, owner.
	 */
	public final String releaseLeased;

	/**
	 * After a claim that came back short: counts, without locking, the due jobs of its kinds that a
	 * transaction holds (a row lock leaves the locker in {@code xmax}; a job that became due since the
	 * claim has none), among the first of the queue's due jobs other than the claim's own.
	 * Parameters: queue, array of kinds, array of the claim's ids, limit.
	 */
	public final String countHeldElsewhere;

	public JobStatements(SchemaName schema) {
		this.table = schema.qualify("pgqueue_jobs");
		this.channel = "pgqueue:" + schema.value();
		this.insertOne = """
				INSERT INTO %1$s (public_id, kind, queue, payload, priority, run_at, max_attempts, bucket,
				                  concurrency_key, trace_context, tags, rate_weight, state)
				SELECT r.public_id, r.kind, r.queue, r.payload, r.priority, d.due, r.max_attempts, r.bucket,
				       r.concurrency_key, r.trace_context, r.tags, r.rate_weight,
				       CASE WHEN d.due <= now() THEN 'available' ELSE 'scheduled' END
				FROM (SELECT ?::uuid AS public_id, ?::text AS kind, ?::text AS queue, ?::jsonb AS payload,
				             ?::smallint AS priority, ?::timestamptz AS run_at, ?::bigint AS delay_us,
				             ?::integer AS max_attempts, ?::bigint AS jitter_us, ?::smallint AS bucket,
				             ?::text AS concurrency_key, ?::jsonb AS trace_context, ?::text[] AS tags,
				             ?::integer AS rate_weight) r
				CROSS JOIN LATERAL (SELECT %2$s AS due) d
				""".formatted(this.table, DUE_AT);
		this.insertOneNotifying = """
				WITH inserted AS (%s)
				SELECT pg_notify('%s', ?::text)""".formatted(this.insertOne.strip(), this.channel);
		this.insertMany = """
				INSERT INTO %1$s (public_id, kind, queue, payload, priority, run_at, max_attempts, bucket,
				                  concurrency_key, trace_context, tags, rate_weight, state)
				SELECT r.public_id, r.kind, r.queue, r.payload::jsonb, r.priority, d.due, r.max_attempts, r.bucket,
				       r.concurrency_key, r.trace_context::jsonb, r.tags::text[], r.rate_weight,
				       CASE WHEN d.due <= now() THEN 'available' ELSE 'scheduled' END
				FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::smallint[], ?::timestamptz[],
				            ?::bigint[], ?::integer[], ?::bigint[], ?::smallint[], ?::text[], ?::text[], ?::text[],
				            ?::integer[])
				     AS r(public_id, kind, queue, payload, priority, run_at, delay_us, max_attempts, jitter_us, bucket,
				          concurrency_key, trace_context, tags, rate_weight)
				CROSS JOIN LATERAL (SELECT %2$s AS due) d
				""".formatted(this.table, DUE_AT);
		this.insertManyNotifying = notifying(this.insertMany);
		this.insertManyPlain = """
				INSERT INTO %s (public_id, kind, queue, payload, priority, max_attempts, bucket, trace_context, state)
				SELECT r.public_id, r.kind, r.queue, r.payload::jsonb, r.priority, r.max_attempts, r.bucket,
				       r.trace_context::jsonb, 'available'
				FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::smallint[], ?::integer[], ?::smallint[],
				            ?::text[])
				     AS r(public_id, kind, queue, payload, priority, max_attempts, bucket, trace_context)
				""".formatted(this.table);
		this.insertManyPlainNotifying = notifying(this.insertManyPlain);
		String claimable = """
				SELECT %s FROM %s
				WHERE queue = ? AND state = 'available' AND kind = ANY(?)
				ORDER BY priority DESC, run_at, id
				LIMIT ?
				FOR UPDATE SKIP LOCKED""";
		String claimableFrom = """
				SELECT c.* FROM unnest(?::smallint[], ?::timestamptz[], ?::bigint[], ?::timestamptz[])
				     AS f(priority, from_at, from_id, until_at)
				CROSS JOIN LATERAL (
				    SELECT %s FROM %s
				    WHERE queue = ? AND state = 'available' AND kind = ANY(?)
				      AND priority = f.priority AND (run_at, id) >= (f.from_at, f.from_id)
				      AND run_at < coalesce(f.until_at, 'infinity')
				    ORDER BY priority DESC, run_at, id
				    LIMIT ?
				    FOR UPDATE SKIP LOCKED) c
				LIMIT ?""";
		String claimableInBuckets = """
				SELECT c.* FROM unnest(?::smallint[]) AS b(bucket)
				CROSS JOIN LATERAL (
				    SELECT %s FROM %s
				    WHERE queue = ? AND bucket = b.bucket AND state = 'available' AND kind = ANY(?)
				    ORDER BY priority DESC, run_at, id
				    LIMIT ?
				    FOR UPDATE SKIP LOCKED) c
				LIMIT ?""";
		this.claimLocked = claimable.formatted(CLAIMED_COLUMNS, this.table);
		this.claimLockedInBuckets = claimableInBuckets.formatted(CLAIMED_COLUMNS, this.table);
		this.claimLockedFrom = claimableFrom.formatted(CLAIMED_COLUMNS, this.table);
		this.claimLeased = leasing(claimable.formatted("id", this.table), this.table, CLAIMED_COLUMNS_OF_J);
		this.claimLeasedFrom = leasing(claimableFrom.formatted("id", this.table), this.table, CLAIMED_COLUMNS_OF_J);
		this.claimLeasedInBuckets = leasing(claimableInBuckets.formatted("id", this.table), this.table,
				CLAIMED_COLUMNS_OF_J);
		String claimableById = """
				SELECT %s FROM %s
				WHERE public_id = ? AND kind = ANY(?) AND state IN ('available', 'scheduled')
				FOR UPDATE SKIP LOCKED""";
		this.claimLockedById = claimableById.formatted(CLAIMED_COLUMNS, this.table);
		this.claimLeasedById = leasing(claimableById.formatted("id", this.table), this.table, CLAIMED_COLUMNS_OF_J);
		this.finishedTable = schema.qualify("pgqueue_finished_jobs");
		this.completeLocked = """
				WITH p AS (SELECT ?::timestamptz AS started),
				     moved AS (DELETE FROM %1$s WHERE id = ANY(?) RETURNING *)
				INSERT INTO %2$s (%3$s)
				SELECT %4$s FROM moved m, p""".formatted(this.table, this.finishedTable, FinishedMoves.COLUMNS,
				FinishedMoves.select("m", COMPLETED_LOCKED));
		this.completeLockedWithOutput = """
				WITH p AS (SELECT ?::timestamptz AS started),
				     d AS (SELECT * FROM unnest(?::bigint[], ?::text[]) AS d(id, output)),
				     moved AS (DELETE FROM %1$s j USING d WHERE j.id = d.id RETURNING j.*, d.output AS new_output)
				INSERT INTO %2$s (%3$s)
				SELECT %4$s FROM moved m, p""".formatted(this.table, this.finishedTable, FinishedMoves.COLUMNS,
				FinishedMoves.select("m", withOutput(COMPLETED_LOCKED)));
		this.deleteLocked = """
				DELETE FROM %s WHERE id = ANY(?)""".formatted(this.table);
		this.recordLockedFailure = """
				UPDATE %1$s j SET attempt = j.attempt + p.spent, state = p.state, run_at = %2$s,
				       started_at = coalesce(p.started, now()), finished_at = %3$s, last_error = %4$s,
				       snoozes = j.snoozes + p.snoozed, attempts = %5$s
				FROM %6$s
				WHERE j.id = ?""".formatted(this.table, NEXT_RUN_AT, FINISHED_AT, LAST_ERROR,
				historyAppended("coalesce(p.started, now())"), ATTEMPT_END);
		this.recordFailureIfAvailable = """
				UPDATE %1$s j SET attempt = j.attempt + p.spent, state = p.state, run_at = %2$s,
				       started_at = coalesce(p.started, now()), finished_at = %3$s, last_error = %4$s,
				       snoozes = j.snoozes + p.snoozed, attempts = %5$s
				FROM %6$s
				WHERE j.id = (SELECT id FROM %1$s WHERE id = ? AND attempt = ? AND state = 'available'
				              FOR UPDATE)""".formatted(this.table, NEXT_RUN_AT, FINISHED_AT, LAST_ERROR,
				historyAppended("coalesce(p.started, now())"), ATTEMPT_END);
		this.completeLeased = """
				WITH moved AS (
				    DELETE FROM %1$s j USING unnest(?::bigint[], ?::integer[]) AS d(id, attempt)
				    WHERE j.id = d.id AND j.attempt = d.attempt AND j.state = 'running'
				    RETURNING j.*)
				INSERT INTO %2$s (%3$s)
				SELECT %4$s FROM moved m
				RETURNING id""".formatted(this.table, this.finishedTable, FinishedMoves.COLUMNS,
				FinishedMoves.select("m", COMPLETED_LEASED));
		this.completeLeasedWithOutput = """
				WITH moved AS (
				    DELETE FROM %1$s j USING unnest(?::bigint[], ?::integer[], ?::text[]) AS d(id, attempt, output)
				    WHERE j.id = d.id AND j.attempt = d.attempt AND j.state = 'running'
				    RETURNING j.*, d.output AS new_output)
				INSERT INTO %2$s (%3$s)
				SELECT %4$s FROM moved m
				RETURNING id""".formatted(this.table, this.finishedTable, FinishedMoves.COLUMNS,
				FinishedMoves.select("m", withOutput(COMPLETED_LEASED)));
		this.deleteLeased = """
				DELETE FROM %1$s j USING unnest(?::bigint[], ?::integer[]) AS d(id, attempt)
				WHERE j.id = d.id AND j.attempt = d.attempt AND j.state = 'running'
				RETURNING j.id""".formatted(this.table);
		this.recordLeasedFailure = """
				UPDATE %1$s j SET state = p.state, attempt = j.attempt - p.snoozed, run_at = %2$s,
				       finished_at = %3$s, last_error = %4$s, snoozes = j.snoozes + p.snoozed,
				       attempts = %5$s, lease_owner = NULL, lease_until = NULL
				FROM %6$s
				WHERE j.id = ? AND j.attempt = ? AND j.state = 'running'""".formatted(this.table, NEXT_RUN_AT,
				FINISHED_AT, LAST_ERROR, historyAppended("j.started_at"), ATTEMPT_END);
		this.extendLeases = """
				WITH p AS (SELECT ?::bigint[] AS ids, ?::text AS owner, ? * interval '1 millisecond' AS lease),
				mine AS (
				    SELECT j.id FROM %1$s j, p WHERE j.id = ANY(p.ids) AND j.state = 'running' AND j.lease_owner = p.owner),
				locked AS (
				    SELECT j.id FROM %1$s j, p WHERE j.id = ANY(p.ids) AND j.state = 'running' AND j.lease_owner = p.owner
				    FOR UPDATE OF j SKIP LOCKED),
				extended AS (
				    UPDATE %1$s j SET lease_until = clock_timestamp() + p.lease
				    FROM locked, p WHERE j.id = locked.id
				    RETURNING j.id)
				SELECT mine.id, extended.id IS NOT NULL FROM mine LEFT JOIN extended ON extended.id = mine.id"""
			.formatted(this.table);
		this.releaseLeased = """
				UPDATE %s SET state = 'available', attempt = attempt - 1, started_at = NULL, lease_owner = NULL,
				       lease_until = NULL
				WHERE id = ANY(?) AND state = 'running' AND lease_owner = ?""".formatted(this.table);
		this.countHeldElsewhere = """
				SELECT count(*) FILTER (WHERE s.xmax <> '0'::xid) FROM (
				    SELECT xmax FROM %s
				    WHERE queue = ? AND state = 'available' AND kind = ANY(?) AND id <> ALL(?)
				    LIMIT ?) s""".formatted(this.table);
	}

	/**
	 * Wraps an insert so that the same statement notifies the queues named by its last parameter, an
	 * array: one round trip. The caller names the queues it knows received due jobs, so the insert
	 * returns nothing (a {@code WITH} holding an insert runs it whether or not the query reads it), and
	 * PostgreSQL folds identical notifications of one transaction into one.
	 */
	private String notifying(String insert) {
		return """
				WITH inserted AS (%s)
				SELECT pg_notify('%s', q) FROM unnest(?::text[]) q""".formatted(insert.strip(), this.channel);
	}

}
