package dev.pgqueue.engine.sql;

import dev.pgqueue.schema.SchemaName;

/**
 * The texts of the background services' statements (promoter, rescuer, cleaner, stats reader) for
 * one schema's jobs table, each named after what it does; {@link MaintenanceRepository} runs them.
 * Parameters are positional, listed in each statement's Javadoc.
 */
final class MaintenanceStatements {

	/** The completed jobs' partition of {@code pgqueue_finished_jobs}, itself partitioned by finish time. */
	static final String COMPLETED_TABLE = "pgqueue_finished_jobs_completed";

	/** The names of the time partitions of completed jobs: the prefix, then the lower bound's UTC minute. */
	private static final java.util.regex.Pattern PARTITION_NAME = java.util.regex.Pattern
		.compile(COMPLETED_TABLE + "_p[0-9]{8}t[0-9]{4}");

	/**
	 * Makes due scheduled jobs available, a limited number at a time; one row per queue with the count
	 * and, when notifying, a notification of that queue. Parameter: limit.
	 */
	public final String promoteDue;

	/**
	 * Returns running jobs whose lease expired to the queue, or fails those on their last attempt (the
	 * expired attempt counts), adding the expired attempt to each job's history. Parameters: limit,
	 * history entries to keep, the same again. Returns public id, kind, queue, attempt, new state.
	 */
	public final String rescueExpired;

	/**
	 * Deletes one batch of finished jobs of a state past their retention, if this transaction gets the
	 * cleaner's advisory lock. Parameters: lock key, state, retention in milliseconds, limit. Returns
	 * one row: whether the lock was taken, and how many rows were deleted.
	 *
	 * <p>The lock is transaction-scoped ({@code pg_try_advisory_xact_lock}) and the statement commits
	 * on its own, so the lock never outlives the batch: a session lock held across batches would stick
	 * to one server connection behind a pooler in transaction mode and be released, if ever, on another.
	 * The lock function is volatile, so PostgreSQL evaluates the {@code lock} CTE once, before the
	 * delete reads it.
	 *
	 * <p>The statement's snapshot can predate the commit of the batch another instance deleted just
	 * before this one got the lock. Without {@code FOR UPDATE} the batch would pick those rows, find
	 * them gone and come back short, which reads as "nothing left": both instances could stop with
	 * rows still to prune. Locking skips rows deleted since the snapshot and keeps reading until the
	 * batch is full.
	 */
	public final String pruneFinished;

	/**
	 * {@link #pruneFinished} of completed jobs in the default partition only: the rows that found no
	 * time partition, while the cleaner drops whole time partitions past the retention. Parameters and
	 * result as {@link #pruneFinished}.
	 */
	public final String pruneCompletedDefault;

	/**
	 * Takes the cleaner's advisory lock for the caller's transaction, without waiting. Parameter: lock
	 * key. Returns whether it was taken.
	 */
	public final String tryCleanerLock = "SELECT pg_try_advisory_xact_lock(hashtext(?))";

	/**
	 * Whether this role may create and drop the time partitions of completed jobs: it owns the
	 * completed jobs' table (or is a member of its owner's role) and may create tables in its schema.
	 */
	public final String mayKeepPartitions;

	/** The database's clock. */
	public final String databaseNow = "SELECT clock_timestamp()";

	/** Waits at most a second for a table's lock in this transaction (partition changes). */
	public final String partitionLockTimeout = "SET LOCAL lock_timeout = '1s'";

	/**
	 * Takes the finished jobs' table's weakest lock, alone, before a partition of completed jobs is
	 * created, attached or dropped. Those statements lock the completed jobs' table first and then,
	 * to read its partition bound, the finished jobs' table above it: the reverse of the order in
	 * which a statement on the whole table (a {@code TRUNCATE}, a migration's {@code ALTER}) locks
	 * them, and the two would deadlock. Taking the upper table first keeps one order; the pass
	 * waits, at most its lock timeout, and gives way.
	 */
	public final String lockFinishedTableFirst;

	/**
	 * The time partitions of completed jobs: name, lower bound, upper bound, by lower bound (the
	 * default partition is not among them). The bounds are read from the partition's catalog entry,
	 * as PostgreSQL prints them in this session, and cast back in the same session.
	 */
	public final String completedPartitions;

	/** The completed jobs' table, partitioned by finish time, qualified and quoted. */
	private final String completedTable;

	private final SchemaName schema;

	/**
	 * Counts due jobs that have waited past a threshold in the given queues whose kind has no listener
	 * for that queue here. Parameters: array of queues, threshold in milliseconds, arrays of the
	 * (queue, kind) pairs that have listeners. Returns queue, kind, count, age of the oldest in seconds.
	 */
	public final String unclaimedKinds;

	/**
	 * Counts unfinished jobs by queue and state, with the age of the oldest by run-at, in seconds.
	 */
	public final String stats;

	/**
	 * Finds what holds back cleanup the longest in this database: sessions holding a snapshot,
	 * prepared transactions, replication slots. Returns one row: the next transaction id, then (all
	 * null when nothing holds one) pid, holder, state, transaction ids assigned since its snapshot,
	 * and seconds since its transaction started (null when this role may not see it).
	 */
	public final String oldestTransaction = """
			WITH holders AS (
			    SELECT pid, application_name AS holder, state, age(backend_xmin) AS xids,
			           extract(epoch FROM clock_timestamp() - xact_start) AS seconds
			    FROM pg_stat_activity
			    WHERE datname = current_database() AND backend_xmin IS NOT NULL AND pid <> pg_backend_pid()
			    UNION ALL
			    SELECT NULL, 'prepared transaction ' || gid, 'prepared', age(transaction),
			           extract(epoch FROM clock_timestamp() - prepared)
			    FROM pg_prepared_xacts WHERE database = current_database()
			    UNION ALL
			    SELECT NULL, 'replication slot ' || slot_name, CASE WHEN active THEN 'active' ELSE 'inactive' END,
			           age(xmin), NULL
			    FROM pg_replication_slots WHERE xmin IS NOT NULL)
			SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint, h.pid, h.holder, h.state, h.xids, h.seconds
			FROM (SELECT 1) AS one
			LEFT JOIN LATERAL (SELECT * FROM holders ORDER BY xids DESC, seconds DESC NULLS LAST LIMIT 1) AS h ON true
			""";

	/**
	 * Counts the sessions on this server that wait on a lock and carry this session's
	 * {@code application_name}: the connections of this application, when it names them. Returns one
	 * row: the name, and the count.
	 */
	public final String lockWaits = """
			SELECT current_setting('application_name'), count(*)
			FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND application_name = current_setting('application_name')
			""";

	/**
	 * Reads what decides whether the jobs table gets vacuumed: the server's {@code autovacuum} and
	 * {@code track_counts}, whether the table's {@code autovacuum_enabled} storage parameter is false,
	 * and from the table's statistics its dead and live rows, when it was last vacuumed (by hand or by
	 * autovacuum) and how many seconds ago by the server's clock. Returns one row; the last two
	 * columns are null when the table has not been vacuumed since its statistics began. A catalog
	 * read, cheap enough for every stats interval.
	 */
	public final String vacuumHealth;

	/**
	 * What the planner believes of the jobs table against what it holds: from {@code pg_class} the
	 * row count and page count of the last {@code VACUUM} or {@code ANALYZE}, the table's pages now,
	 * the live rows the statistics collector counts (inserts less deletes since then), and whether
	 * this role may analyze the table (it owns it, is a member of its owner's role, or from PostgreSQL
	 * 17 on holds {@code MAINTAIN} on it). Returns one row.
	 */
	public final String tableEstimate;

	/**
	 * Counts the jobs table's rows up to a limit, reading the table in its physical order and stopping
	 * at the limit (no index, so no plan that statistics could spoil). Parameter: the limit.
	 */
	public final String countRowsUpTo;

	/**
	 * Refreshes the jobs table's statistics; skips it at once, instead of waiting, while autovacuum
	 * or another instance analyzes or vacuums it.
	 */
	public final String analyzeJobs;

	/**
	 * @param notify whether promotions notify the queues of the jobs they made available
	 */
	public MaintenanceStatements(SchemaName schema, boolean notify) {
		this.schema = schema;
		String table = schema.qualify("pgqueue_jobs");
		this.completedTable = schema.qualify(COMPLETED_TABLE);
		this.lockFinishedTableFirst = "LOCK TABLE ONLY %s IN ACCESS SHARE MODE"
			.formatted(schema.qualify("pgqueue_finished_jobs"));
		this.mayKeepPartitions = """
				SELECT pg_has_role(c.relowner, 'USAGE') AND has_schema_privilege(c.relnamespace, 'CREATE')
				FROM pg_class c WHERE c.oid = '%s'::regclass""".formatted(this.completedTable);
		this.completedPartitions = """
				SELECT c.relname, b.bounds[1]::timestamptz, b.bounds[2]::timestamptz
				FROM pg_inherits i
				JOIN pg_class c ON c.oid = i.inhrelid
				CROSS JOIN LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid),
				                                $$FROM [(]'([^']+)'[)] TO [(]'([^']+)'[)]$$) AS b(bounds)
				WHERE i.inhparent = '%s'::regclass AND b.bounds IS NOT NULL
				ORDER BY 2""".formatted(this.completedTable);
		String channel = new JobStatements(schema).channel;
		this.tableEstimate = """
				SELECT c.reltuples, c.relpages, pg_relation_size(c.oid) / current_setting('block_size')::bigint,
				       coalesce(pg_stat_get_live_tuples(c.oid), 0),
				       pg_has_role(c.relowner, 'USAGE')
				           OR CASE WHEN current_setting('server_version_num')::int >= 170000
				                   THEN has_table_privilege(c.oid, 'MAINTAIN') ELSE false END
				FROM pg_class c
				WHERE c.oid = '%s'::regclass
				""".formatted(table);
		this.countRowsUpTo = "SELECT count(*) FROM (SELECT 1 FROM %s LIMIT ?) AS r".formatted(table);
		this.analyzeJobs = "ANALYZE (SKIP_LOCKED) " + table;
		this.promoteDue = """
				WITH due AS MATERIALIZED (
				         SELECT id FROM %1$s
				         WHERE state = 'scheduled' AND run_at <= now()
				         ORDER BY run_at
				         LIMIT ?
				         FOR UPDATE SKIP LOCKED),
				     promoted AS (
				         UPDATE %1$s j SET state = 'available'
				         FROM due
				         WHERE j.id = due.id
				         RETURNING j.queue)
				SELECT count(*)::int, %2$s FROM promoted GROUP BY queue
				""".formatted(table, notify ? "pg_notify('" + channel + "', queue)" : "NULL");
		this.rescueExpired = """
				WITH expired AS (
				    SELECT id FROM %1$s
				    WHERE state = 'running' AND lease_until < clock_timestamp()
				    ORDER BY lease_until
				    LIMIT ?
				    FOR UPDATE SKIP LOCKED)
				UPDATE %1$s j
				SET state = CASE WHEN j.attempt >= j.max_attempts THEN 'failed' ELSE 'available' END,
				    finished_at = CASE WHEN j.attempt >= j.max_attempts THEN clock_timestamp() END,
				    last_error = 'Lease held by ' || coalesce(j.lease_owner, '?') || ' expired at '
				                 || j.lease_until || ' before attempt ' || j.attempt || ' finished',
				    attempts = %2$s,
				    lease_owner = NULL, lease_until = NULL
				FROM expired
				WHERE j.id = expired.id
				RETURNING j.public_id, j.kind, j.queue, j.attempt, j.state
				""".formatted(table, JobStatements.historyAppended("?::int", "j.attempt", "j.started_at",
				"'expired'", "NULL", "'lease held by ' || coalesce(j.lease_owner, '?') || ' expired at ' || j.lease_until"));
		this.pruneFinished = pruning(schema.qualify("pgqueue_finished_jobs"));
		this.pruneCompletedDefault = pruning(schema.qualify(COMPLETED_TABLE + "_default"));
		this.unclaimedKinds = """
				SELECT queue, kind, count(*), extract(epoch FROM clock_timestamp() - min(run_at))
				FROM %s
				WHERE state = 'available' AND queue = ANY(?)
				  AND run_at < clock_timestamp() - ? * interval '1 millisecond'
				  AND (queue, kind) NOT IN (SELECT * FROM unnest(?::text[], ?::text[]))
				GROUP BY queue, kind
				""".formatted(table);
		this.stats = """
				SELECT queue, state, count(*),
				       extract(epoch FROM clock_timestamp() - min(run_at)) AS oldest_age
				FROM %s
				WHERE state IN ('available', 'scheduled', 'running')
				GROUP BY queue, state
				""".formatted(table);
		// The storage parameter keeps the value as written (off, false, 0, no): cast it to compare.
		this.vacuumHealth = """
				SELECT current_setting('autovacuum')::bool, current_setting('track_counts')::bool,
				       NOT EXISTS (SELECT 1 FROM pg_options_to_table(c.reloptions)
				                   WHERE option_name = 'autovacuum_enabled' AND NOT option_value::bool),
				       coalesce(s.n_dead_tup, 0), coalesce(s.n_live_tup, 0),
				       greatest(s.last_vacuum, s.last_autovacuum),
				       extract(epoch FROM now() - greatest(s.last_vacuum, s.last_autovacuum))
				FROM pg_class c
				LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
				WHERE c.oid = '%s'::regclass
				""".formatted(table);
	}

	/** {@link #pruneFinished}'s text for one table of finished jobs, qualified and quoted. */
	private static String pruning(String table) {
		return """
				WITH cleaner_lock AS (SELECT pg_try_advisory_xact_lock(hashtext(?)) AS held),
				     old AS MATERIALIZED (
				         SELECT id FROM %1$s
				         WHERE state = ? AND finished_at < clock_timestamp() - ? * interval '1 millisecond'
				           AND (SELECT held FROM cleaner_lock)
				         LIMIT ? FOR UPDATE SKIP LOCKED),
				     pruned AS (
				         DELETE FROM %1$s j USING old WHERE j.id = old.id
				         RETURNING 1)
				SELECT (SELECT held FROM cleaner_lock), (SELECT count(*) FROM pruned)::int
				""".formatted(table);
	}

	/**
	 * Creates an empty table for a time partition of completed jobs, with the columns, defaults and
	 * constraints of the completed jobs' table. No bind parameters: DDL takes none, so the validated
	 * name is written in.
	 */
	String createPartitionTable(String name) {
		return "CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)".formatted(partition(name),
				this.completedTable);
	}

	/**
	 * Attaches a table made by {@link #createPartitionTable} as the time partition of completed jobs
	 * that finished from {@code from} (inclusive) to {@code to} (exclusive): a lock on the completed
	 * jobs' table that lets completions go on, the new table's indexes made from the parent's.
	 */
	String attachPartition(String name, java.time.Instant from, java.time.Instant to) {
		return "ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM ('%s') TO ('%s')".formatted(this.completedTable,
				partition(name), from, to);
	}

	/** Drops a time partition of completed jobs, with its rows. */
	String dropPartition(String name) {
		return "DROP TABLE %s".formatted(partition(name));
	}

	/** The qualified name of a time partition, which must be named as pgqueue names them. */
	private String partition(String name) {
		if (!PARTITION_NAME.matcher(name).matches()) {
			throw new IllegalArgumentException("Not a time partition of completed jobs: " + name);
		}
		return this.schema.qualify(name);
	}

}
