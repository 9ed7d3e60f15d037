package dev.pgqueue.engine.sql;

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
	 * max_attempts, priority, payload, run_at, created_at}. {@code JobRepository} reads them by
	 * position, so the order is part of the contract.
	 */
	public static final String CLAIMED_COLUMNS = "id, public_id, kind, queue, attempt, max_attempts, priority, "
			+ "payload::text AS payload, run_at, created_at";

	private static final String DUE_AT = "coalesce(r.run_at, now() + coalesce(r.delay_us, 0) * interval '1 microsecond')";

	/** The schema's jobs table, qualified and quoted. */
	public final String table;

	/** The channel on which enqueues and promotions announce due jobs; the payload is the queue's name. */
	public final String channel;

	/**
	 * Inserts one job, available if due now, else scheduled. Parameters: public id, kind, queue,
	 * payload (JSON text), priority, run-at (or null), delay in microseconds on the database clock (or
	 * null), max attempts.
	 */
	public final String insertOne;

	/** {@link #insertOne}, notifying the job's queue in the same statement if it is due. */
	public final String insertOneNotifying;

	/**
	 * Inserts many jobs with one statement. Parameters: arrays of public ids, kinds, queues, payloads,
	 * priorities, run-ats, delays and max attempts, as for {@link #insertOne}.
	 */
	public final String insertMany;

	/** {@link #insertMany}, notifying the queues that received due jobs in the same statement. */
	public final String insertManyNotifying;

	/** Notifies queues of new jobs. Parameters: the channel, an array of queue names. */
	public final String notifyQueues = "SELECT pg_notify(?, q) FROM unnest(?::text[]) q";

	/**
	 * Locks up to a limit of due jobs for the caller's transaction, skipping rows others hold; the
	 * rows stay available. Parameters: queue, array of kinds, limit. Returns {@link #CLAIMED_COLUMNS}.
	 * Matches {@code pgqueue_jobs_claim_idx}: equality on queue, the index's order, available rows only.
	 */
	public final String claimLocked;

	/**
	 * {@link #claimLocked} from floors: reads each priority level given from its floor on, in the
	 * order given, so that the entries of jobs claimed before the floor are never visited (see
	 * {@code ClaimFloor}). Parameters: array of priorities (highest first), array of their floors
	 * (run-at), queue, array of kinds, limit, limit.
	 *
	 * <p>The levels are read one after the other by a nested loop, each by an index range scan that
	 * starts at {@code (queue, priority, floor)}; the outer limit stops the loop, and rows are locked
	 * only as they are returned, so no more than the limit is ever locked.
	 */
	public final String claimLockedFrom;

	/**
	 * Claims up to a limit of due jobs as running under a lease, counting the attempt, in one
	 * statement. Parameters: queue, array of kinds, limit, lease owner, lease in milliseconds.
	 * Returns {@link #CLAIMED_COLUMNS}.
	 */
	public final String claimLeased;

	/**
	 * {@link #claimLeased} from floors, as {@link #claimLockedFrom} reads them. Parameters: array of
	 * priorities (highest first), array of their floors, queue, array of kinds, limit, limit, lease
	 * owner, lease in milliseconds.
	 */
	public final String claimLeasedFrom;

	/** Completes jobs locked by {@link #claimLocked}, counting the attempt. Parameter: array of ids. */
	public final String completeLocked;

	/** Deletes jobs locked by {@link #claimLocked} as they complete. Parameter: array of ids. */
	public final String deleteLocked;

	/**
	 * Records a failed attempt of a job locked by {@link #claimLocked}: counts it and schedules the
	 * next attempt, or fails the job. Parameters: next state, next state, retry delay in milliseconds,
	 * next state, last error, id.
	 */
	public final String recordLockedFailure;

	/**
	 * Completes leased jobs still running the attempt given; returns the ids that were. Parameters:
	 * array of ids, array of attempts.
	 */
	public final String completeLeased;

	/** {@link #completeLeased}, deleting the jobs instead. */
	public final String deleteLeased;

	/**
	 * Records a failed attempt of a leased job if it still runs that attempt. Parameters: next state,
	 * next state, retry delay in milliseconds, next state, last error, id, attempt.
	 */
	public final String recordLeasedFailure;

	/**
	 * Extends the leases an owner holds on running jobs; returns the ids it extended. Parameters:
	 * lease in milliseconds, array of ids, owner.
	 */
	public final String extendLeases;

	/**
	 * Returns running jobs of an owner to the queue without using an attempt. Parameters: array of
	 * ids, owner.
	 */
	public final String releaseLeased;

	public JobStatements(SchemaName schema) {
		this.table = schema.qualify("pgqueue_jobs");
		this.channel = "pgqueue:" + schema.value();
		this.insertOne = """
				INSERT INTO %1$s (public_id, kind, queue, payload, priority, run_at, max_attempts, state)
				SELECT r.public_id, r.kind, r.queue, r.payload, r.priority, %2$s, r.max_attempts,
				       CASE WHEN %2$s <= now() THEN 'available' ELSE 'scheduled' END
				FROM (SELECT ?::uuid AS public_id, ?::text AS kind, ?::text AS queue, ?::jsonb AS payload,
				             ?::smallint AS priority, ?::timestamptz AS run_at, ?::bigint AS delay_us,
				             ?::integer AS max_attempts) r
				""".formatted(this.table, DUE_AT);
		this.insertOneNotifying = notifying(this.insertOne);
		this.insertMany = """
				INSERT INTO %1$s (public_id, kind, queue, payload, priority, run_at, max_attempts, state)
				SELECT r.public_id, r.kind, r.queue, r.payload::jsonb, r.priority, %2$s, r.max_attempts,
				       CASE WHEN %2$s <= now() THEN 'available' ELSE 'scheduled' END
				FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::smallint[], ?::timestamptz[],
				            ?::bigint[], ?::integer[])
				     AS r(public_id, kind, queue, payload, priority, run_at, delay_us, max_attempts)
				""".formatted(this.table, DUE_AT);
		this.insertManyNotifying = notifying(this.insertMany);
		String claimable = """
				SELECT %s FROM %s
				WHERE queue = ? AND state = 'available' AND kind = ANY(?)
				ORDER BY priority DESC, run_at, id
				LIMIT ?
				FOR UPDATE SKIP LOCKED""";
		String claimableFrom = """
				SELECT c.* FROM unnest(?::smallint[], ?::timestamptz[]) AS f(priority, floor_at)
				CROSS JOIN LATERAL (
				    SELECT %s FROM %s
				    WHERE queue = ? AND state = 'available' AND kind = ANY(?)
				      AND priority = f.priority AND run_at >= f.floor_at
				    ORDER BY priority DESC, run_at, id
				    LIMIT ?
				    FOR UPDATE SKIP LOCKED) c
				LIMIT ?""";
		this.claimLocked = claimable.formatted(CLAIMED_COLUMNS, this.table);
		this.claimLockedFrom = claimableFrom.formatted(CLAIMED_COLUMNS, this.table);
		String leasing = """
				WITH claimed AS (%s)
				UPDATE %s j
				SET state = 'running', attempt = j.attempt + 1, started_at = now(),
				    lease_owner = ?, lease_until = now() + ? * interval '1 millisecond'
				FROM claimed
				WHERE j.id = claimed.id
				RETURNING j.id, j.public_id, j.kind, j.queue, j.attempt, j.max_attempts, j.priority,
				          j.payload::text AS payload, j.run_at, j.created_at
				""";
		this.claimLeased = leasing.formatted(claimable.formatted("id", this.table), this.table);
		this.claimLeasedFrom = leasing.formatted(claimableFrom.formatted("id", this.table), this.table);
		this.completeLocked = "UPDATE " + this.table + " SET state = 'completed', attempt = attempt + 1, "
				+ "started_at = now(), finished_at = clock_timestamp(), last_error = NULL WHERE id = ANY(?)";
		this.deleteLocked = "DELETE FROM " + this.table + " WHERE id = ANY(?)";
		this.recordLockedFailure = "UPDATE " + this.table + " SET attempt = attempt + 1, state = ?, "
				+ "run_at = CASE WHEN ? = 'scheduled' THEN clock_timestamp() + ? * interval '1 millisecond' ELSE run_at END, "
				+ "started_at = now(), finished_at = CASE WHEN ? = 'failed' THEN clock_timestamp() END, last_error = ? "
				+ "WHERE id = ?";
		this.completeLeased = """
				UPDATE %1$s j SET state = 'completed', finished_at = clock_timestamp(),
				       lease_owner = NULL, lease_until = NULL, last_error = NULL
				FROM unnest(?::bigint[], ?::integer[]) AS d(id, attempt)
				WHERE j.id = d.id AND j.attempt = d.attempt AND j.state = 'running'
				RETURNING j.id""".formatted(this.table);
		this.deleteLeased = """
				DELETE FROM %1$s j USING unnest(?::bigint[], ?::integer[]) AS d(id, attempt)
				WHERE j.id = d.id AND j.attempt = d.attempt AND j.state = 'running'
				RETURNING j.id""".formatted(this.table);
		this.recordLeasedFailure = "UPDATE " + this.table + " SET state = ?, "
				+ "run_at = CASE WHEN ? = 'scheduled' THEN clock_timestamp() + ? * interval '1 millisecond' ELSE run_at END, "
				+ "finished_at = CASE WHEN ? = 'failed' THEN clock_timestamp() END, last_error = ?, "
				+ "lease_owner = NULL, lease_until = NULL "
				+ "WHERE id = ? AND attempt = ? AND state = 'running'";
		this.extendLeases = "UPDATE " + this.table + " SET lease_until = clock_timestamp() + ? * interval '1 millisecond'"
				+ " WHERE id = ANY(?) AND state = 'running' AND lease_owner = ? RETURNING id";
		this.releaseLeased = "UPDATE " + this.table + " SET state = 'available', attempt = attempt - 1, "
				+ "started_at = NULL, lease_owner = NULL, lease_until = NULL "
				+ "WHERE id = ANY(?) AND state = 'running' AND lease_owner = ?";
	}

	/**
	 * Wraps an insert so that the same statement notifies the queues that received due jobs: one round
	 * trip, and PostgreSQL folds identical notifications of one transaction into one.
	 */
	private String notifying(String insert) {
		return "WITH inserted AS (" + insert.strip() + " RETURNING queue, state)\n"
				+ "SELECT pg_notify('" + this.channel + "', q.queue) FROM (SELECT DISTINCT queue FROM inserted "
				+ "WHERE state = 'available') q";
	}

}
