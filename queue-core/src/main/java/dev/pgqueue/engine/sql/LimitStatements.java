package dev.pgqueue.engine.sql;

import dev.pgqueue.schema.SchemaName;

/**
 * The statements of claims under concurrency limits (see {@code engine.limits.LimitedClaims}), for
 * one schema's jobs table. Parameters are positional and listed in each statement's Javadoc.
 */
final class LimitStatements {

	/**
	 * Reads, without locking, the next due jobs a limited claim may consider, in claim order: their
	 * id, kind and concurrency key. Leaves out rows that a transaction in progress has locked or
	 * updated (a transactional batch holds them): their {@code xmax} is one of the snapshot's
	 * running transactions, or one that began after it (at or above the snapshot's {@code xmax},
	 * compared modulo 2<sup>32</sup> as transaction ids wrap). Leaves out keys that already run as many jobs as the per-key
	 * limit allows (in leased mode, where running jobs are rows; a hint, checked again under the
	 * groups' locks), keys and jobs the caller excludes, and, on queues ordered by key, every job
	 * whose key has an unfinished job enqueued before it. Parameters: queue, per-key limit (0 for
	 * none) twice, queue, kinds, buckets (or null for all) twice, excluded keys, excluded ids, whether
	 * ordered by key, limit.
	 */
	final String candidates;

	/**
	 * Tries, without waiting, to take the given slots of each group for the caller's transaction, at
	 * most the wanted number per group, lowest slot first. Parameters: group keys, wanted counts,
	 * the slots to try per group (as {@code int[]} literals). Returns the group key and slot of each
	 * lock taken.
	 */
	final String trySlots = """
			SELECT g.k, s.slot FROM unnest(?::int[], ?::int[], ?::text[]) AS g(k, wanted, slots)
			CROSS JOIN LATERAL (
			    SELECT slot FROM unnest(g.slots::int[]) AS slot
			    WHERE pg_try_advisory_xact_lock(g.k, slot)
			    LIMIT g.wanted) s""";

	/**
	 * Takes each group's lock for the caller's transaction, waiting for it, in the order given (the
	 * caller sorts them, so that two claims never wait on each other). Parameter: group keys.
	 */
	final String lockGroups = "SELECT count(pg_advisory_xact_lock(k, 0)) FROM unnest(?::int[]) AS k";

	/**
	 * Running jobs of a queue (leased mode), by kind and concurrency key, found through the lease
	 * index. Parameter: queue.
	 */
	final String running;

	/**
	 * Locks the given jobs if they are still available and no other transaction holds them, in
	 * claim order. Parameter: array of ids. Returns {@link JobStatements#CLAIMED_COLUMNS}.
	 */
	final String lockChosen;

	/**
	 * Leases the given jobs if they are still available and no other transaction holds them,
	 * counting the attempt. Parameters: array of ids, lease owner, lease in milliseconds. Returns
	 * {@link JobStatements#CLAIMED_COLUMNS}.
	 */
	final String leaseChosen;

	/**
	 * The concurrency keys that have due jobs in a queue, in key order from a key on, read from
	 * {@code pgqueue_jobs_key_claim_idx} by skipping from each key to the next (one index probe per key,
	 * however many jobs each holds). Parameters: queue, the key to start after (empty: from the first),
	 * queue, limit.
	 */
	final String fairKeys;

	/**
	 * Locks, for the caller's transaction, up to the given number of due jobs of each given key, each
	 * key's in the queue's order, skipping rows others hold; then up to a number of due jobs without a
	 * key. Parameters: keys, takes, queue, kinds, buckets (or null) twice, queue, kinds, buckets (or
	 * null) twice, take of jobs without a key. Returns {@link JobStatements#CLAIMED_COLUMNS}, then the
	 * job's concurrency key.
	 */
	final String lockFair;

	/**
	 * Leases what {@link #lockFair} would lock, counting the attempt. Parameters: those of
	 * {@link #lockFair}, then lease owner, lease in milliseconds, start instant (or null). Returns
	 * {@link JobStatements#CLAIMED_COLUMNS}, then the job's concurrency key.
	 */
	final String leaseFair;

	LimitStatements(SchemaName schema) {
		String table = schema.qualify("pgqueue_jobs");
		this.candidates = """
				WITH snapshot AS MATERIALIZED (
				    SELECT pg_snapshot_xmax(s)::text::bigint %% 4294967296 AS next,
				           ARRAY(SELECT x::text::bigint %% 4294967296 FROM pg_snapshot_xip(s) AS x) AS running
				    FROM pg_current_snapshot() AS s),
				full_keys AS (
				    SELECT concurrency_key FROM %1$s
				    WHERE queue = ? AND state = 'running' AND lease_until IS NOT NULL AND concurrency_key IS NOT NULL
				    GROUP BY concurrency_key HAVING ?::int > 0 AND count(*) >= ?::int)
				SELECT j.id, j.kind, j.concurrency_key, j.rate_weight FROM %1$s j
				WHERE j.queue = ? AND j.state = 'available' AND j.kind = ANY(?::text[])
				  AND (?::smallint[] IS NULL OR j.bucket = ANY(?::smallint[]))
				  AND (j.concurrency_key IS NULL OR NOT (j.concurrency_key = ANY(?::text[])
				       OR j.concurrency_key IN (SELECT concurrency_key FROM full_keys)))
				  AND j.id <> ALL(?::bigint[])
				  AND (j.xmax = '0'::xid OR NOT EXISTS (
				      SELECT 1 FROM snapshot n
				      WHERE j.xmax::text::bigint = ANY(n.running)
				         OR (j.xmax::text::bigint - n.next + 4294967296) %% 4294967296 < 2147483648))
				  AND (NOT ?::boolean OR j.concurrency_key IS NULL OR NOT EXISTS (
				      SELECT 1 FROM %1$s p
				      WHERE p.queue = j.queue AND p.concurrency_key = j.concurrency_key AND p.id < j.id
				        AND p.state IN ('available', 'scheduled', 'running')))
				ORDER BY j.priority DESC, j.run_at, j.id
				LIMIT ?""".formatted(table);
		// lease_until IS NOT NULL (true of every running row) lets the small lease index find them.
		this.running = """
				SELECT kind, concurrency_key, count(*) FROM %s
				WHERE queue = ? AND state = 'running' AND lease_until IS NOT NULL
				GROUP BY kind, concurrency_key""".formatted(table);
		String chosen = """
				SELECT %s FROM %s
				WHERE id = ANY(?::bigint[]) AND state = 'available'
				ORDER BY priority DESC, run_at, id
				FOR UPDATE SKIP LOCKED""";
		this.lockChosen = chosen.formatted(JobStatements.CLAIMED_COLUMNS, table);
		this.fairKeys = """
				WITH RECURSIVE k(key) AS (
				    (SELECT concurrency_key FROM %1$s
				     WHERE queue = ? AND state = 'available' AND concurrency_key IS NOT NULL AND concurrency_key > ?
				     ORDER BY concurrency_key LIMIT 1)
				  UNION ALL
				    SELECT (SELECT j.concurrency_key FROM %1$s j
				            WHERE j.queue = ? AND j.state = 'available' AND j.concurrency_key IS NOT NULL
				              AND j.concurrency_key > k.key
				            ORDER BY j.concurrency_key LIMIT 1)
				    FROM k WHERE k.key IS NOT NULL)
				SELECT key FROM k WHERE key IS NOT NULL LIMIT ?""".formatted(table);
		// Each key's rows are read from pgqueue_jobs_key_claim_idx in the queue's order and locked as they are
		// returned, up to the key's take; jobs without a key from the claim index.
		String fair = """
				SELECT c.* FROM unnest(?::text[], ?::int[]) WITH ORDINALITY AS k(key, take, ord)
				CROSS JOIN LATERAL (
				    SELECT %2$s FROM %1$s j
				    WHERE j.queue = ? AND j.state = 'available' AND j.concurrency_key = k.key AND j.kind = ANY(?::text[])
				      AND (?::smallint[] IS NULL OR j.bucket = ANY(?::smallint[]))
				    ORDER BY j.priority DESC, j.run_at, j.id
				    LIMIT k.take
				    FOR UPDATE OF j SKIP LOCKED) c
				UNION ALL
				SELECT n.* FROM (
				    SELECT %2$s FROM %1$s j
				    WHERE j.queue = ? AND j.state = 'available' AND j.concurrency_key IS NULL AND j.kind = ANY(?::text[])
				      AND (?::smallint[] IS NULL OR j.bucket = ANY(?::smallint[]))
				    ORDER BY j.priority DESC, j.run_at, j.id
				    LIMIT ?
				    FOR UPDATE OF j SKIP LOCKED) n""";
		this.lockFair = fair.formatted(table, JobStatements.CLAIMED_COLUMNS_OF_J + ", j.concurrency_key");
		this.leaseFair = JobStatements.leasing(fair.formatted(table, "j.id"), table,
				JobStatements.CLAIMED_COLUMNS_OF_J + ", j.concurrency_key");
		this.leaseChosen = JobStatements.leasing(chosen.formatted("id", table), table, JobStatements.CLAIMED_COLUMNS_OF_J);
	}

}
