package dev.pgqueue.engine.sql;

import dev.pgqueue.schema.SchemaName;

/**
 * The statements of the bucket coordinator, over the members, leaders and buckets tables of one
 * schema (and its jobs table, for stray jobs), each named after what it does;
 * {@link CoordinationRepository} runs them. A group is identified by its queue and kinds hash, which
 * are always parameters; parameters are positional and listed in each statement's Javadoc.
 *
 * <p>Times are compared on the database clock only ({@code now()}), so that instances whose clocks
 * disagree still agree on who is alive.
 */
final class CoordinationStatements {

	/**
	 * Records that a member is alive, joining it if it was not a member. Parameters: queue, kinds
	 * hash, member.
	 */
	final String heartbeat;

	/**
	 * Takes the group's leadership when there is no leader or the leader's lease expired (with a new
	 * generation), or extends the lease of the member that leads already (same generation). Locks the
	 * leader row until the transaction ends. Parameters: queue, kinds hash, member, lease in
	 * milliseconds. Returns the generation this member leads, or no row when another member leads.
	 */
	final String lead;

	/**
	 * Removes the members whose last heartbeat is older than the expiry. Parameters: queue, kinds hash,
	 * expiry in milliseconds.
	 */
	final String dropExpiredMembers;

	/** The members of a group, oldest first. Parameters: queue, kinds hash. Returns the member. */
	final String members;

	/**
	 * The bucket rows of a group, locked as they are read, for a rebalance. Parameters: queue, kinds
	 * hash. Returns bucket, owner, next owner, generation.
	 */
	final String lockBuckets;

	/**
	 * Inserts or updates bucket rows. Parameters: queue, kinds hash, arrays of buckets, owners, next
	 * owners and generations.
	 */
	final String writeBuckets;

	/**
	 * Removes the rows of the buckets at or above a count. Parameters: queue, kinds hash, bucket count.
	 */
	final String dropBucketsFrom;

	/**
	 * Moves up to a limit of due jobs whose bucket is at or above the queue's bucket count into range
	 * (bucket modulo the count), skipping rows others hold. Parameters: bucket count, queue, bucket
	 * count, limit.
	 */
	final String foldStrayJobs;

	/**
	 * The buckets a member owns in its group's current generation. Parameters: queue, kinds hash,
	 * member. Returns bucket, owner, next owner, generation.
	 */
	final String owned;

	/**
	 * Hands the given buckets of an owner over to the next owners the leader chose. Parameters: queue,
	 * kinds hash, owner, array of buckets.
	 */
	final String handOver;

	/** Removes a member from its group. Parameters: queue, kinds hash, member. */
	final String leave;

	/**
	 * Ends a leader's lease at once, so that another member takes over at its next heartbeat.
	 * Parameters: queue, kinds hash, leader.
	 */
	final String resign;

	CoordinationStatements(SchemaName schema) {
		String members = schema.qualify("pgqueue_members");
		String leaders = schema.qualify("pgqueue_leaders");
		String buckets = schema.qualify("pgqueue_buckets");
		String jobs = schema.qualify("pgqueue_jobs");
		this.heartbeat = """
				INSERT INTO %s (queue, kinds_hash, member) VALUES (?, ?, ?)
				ON CONFLICT (queue, kinds_hash, member) DO UPDATE SET heartbeat_at = now()
				""".formatted(members);
		this.lead = """
				INSERT INTO %s AS l (queue, kinds_hash, leader, generation, lease_until)
				VALUES (?, ?, ?, 1, now() + ? * interval '1 millisecond')
				ON CONFLICT (queue, kinds_hash) DO UPDATE SET leader = excluded.leader,
				    lease_until = excluded.lease_until,
				    generation = CASE WHEN l.leader = excluded.leader AND l.lease_until >= now() THEN l.generation
				                      ELSE l.generation + 1 END
				WHERE l.leader = excluded.leader OR l.lease_until < now()
				RETURNING generation
				""".formatted(leaders);
		this.dropExpiredMembers = """
				DELETE FROM %s
				WHERE queue = ? AND kinds_hash = ? AND heartbeat_at < now() - ? * interval '1 millisecond'
				""".formatted(members);
		this.members = """
				SELECT member FROM %s
				WHERE queue = ? AND kinds_hash = ?
				ORDER BY joined_at, member
				""".formatted(members);
		this.lockBuckets = """
				SELECT bucket, owner, next_owner, generation FROM %s
				WHERE queue = ? AND kinds_hash = ?
				ORDER BY bucket
				FOR UPDATE
				""".formatted(buckets);
		this.writeBuckets = """
				INSERT INTO %s (queue, kinds_hash, bucket, owner, next_owner, generation)
				SELECT ?, ?, b.bucket, b.owner, b.next_owner, b.generation
				FROM unnest(?::smallint[], ?::text[], ?::text[], ?::bigint[]) AS b(bucket, owner, next_owner, generation)
				ON CONFLICT (queue, kinds_hash, bucket) DO UPDATE SET owner = excluded.owner,
				    next_owner = excluded.next_owner, generation = excluded.generation
				""".formatted(buckets);
		this.dropBucketsFrom = """
				DELETE FROM %s WHERE queue = ? AND kinds_hash = ? AND bucket >= ?
				""".formatted(buckets);
		this.foldStrayJobs = """
				WITH stray AS MATERIALIZED (
				         SELECT id FROM %1$s
				         WHERE queue = ? AND bucket >= ? AND state = 'available'
				         LIMIT ?
				         FOR UPDATE SKIP LOCKED)
				UPDATE %1$s j SET bucket = j.bucket %% ?
				FROM stray WHERE j.id = stray.id
				""".formatted(jobs);
		this.owned = """
				SELECT b.bucket, b.owner, b.next_owner, b.generation FROM %s b
				JOIN %s l ON l.queue = b.queue AND l.kinds_hash = b.kinds_hash AND l.generation = b.generation
				WHERE b.queue = ? AND b.kinds_hash = ? AND b.owner = ?
				ORDER BY b.bucket
				""".formatted(buckets, leaders);
		this.handOver = """
				UPDATE %s SET owner = next_owner, next_owner = NULL
				WHERE queue = ? AND kinds_hash = ? AND owner = ? AND next_owner IS NOT NULL
				  AND bucket = ANY(?::smallint[])
				""".formatted(buckets);
		this.leave = """
				DELETE FROM %s WHERE queue = ? AND kinds_hash = ? AND member = ?
				""".formatted(members);
		this.resign = """
				UPDATE %s SET lease_until = now() - interval '1 millisecond'
				WHERE queue = ? AND kinds_hash = ? AND leader = ?
				""".formatted(leaders);
	}

}
