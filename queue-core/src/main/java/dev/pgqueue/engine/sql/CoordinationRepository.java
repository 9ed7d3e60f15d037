package dev.pgqueue.engine.sql;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.pgqueue.schema.SchemaName;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The statements of the bucket coordinator, over three small tables: members and their heartbeats,
 * one leader per group with a fencing generation, and the owner of each bucket. A group is the
 * instances that poll one queue for the same kinds ({@code queue}, {@code kinds_hash}).
 *
 * <p>Times are compared on the database clock only, so that instances whose clocks disagree still
 * agree on who is alive.
 */
public class CoordinationRepository {

	private final JdbcTemplate jdbc;

	private final TransactionTemplate transactions;

	private final String members;

	private final String leaders;

	private final String buckets;

	private final String jobs;

	public CoordinationRepository(JdbcTemplate jdbc, SchemaName schema) {
		this.jdbc = jdbc;
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(jdbc.getDataSource()));
		this.members = schema.qualify("pgqueue_members");
		this.leaders = schema.qualify("pgqueue_leaders");
		this.buckets = schema.qualify("pgqueue_buckets");
		this.jobs = schema.qualify("pgqueue_jobs");
	}

	/** Records that a member is alive (and joins it if it was not a member). */
	public void heartbeat(Group group, String member) {
		this.jdbc.update("INSERT INTO " + this.members + " (queue, kinds_hash, member) VALUES (?, ?, ?) "
				+ "ON CONFLICT (queue, kinds_hash, member) DO UPDATE SET heartbeat_at = now()", group.queue(),
				group.kindsHash(), member);
	}

	/**
	 * Takes or keeps the group's leadership and, while this member leads, rebalances, all in one
	 * transaction: a member becomes leader when there is none or the leader's lease expired (with a
	 * new generation), and a leader extends its own lease. The leader row stays locked until the
	 * transaction ends, and bucket rows are locked as they are read, so that an owner handing a bucket
	 * over waits for the rebalance (or the rebalance for the hand-over) instead of one overwriting the
	 * other; members never see a new generation without its assignments.
	 * @param expiry how long a leader's lease and a member's heartbeat last
	 * @param rebalance the rows to write, given the live members and the bucket rows, in the
	 * generation this member leads
	 * @return the generation this member leads, or {@code null} when another member leads
	 */
	public Long leadAndRebalance(Group group, String member, Duration expiry, Rebalance rebalance) {
		return this.transactions.execute((status) -> {
			List<Long> led = this.jdbc.queryForList("INSERT INTO " + this.leaders
					+ " AS l (queue, kinds_hash, leader, generation, lease_until) "
					+ "VALUES (?, ?, ?, 1, now() + ? * interval '1 millisecond') "
					+ "ON CONFLICT (queue, kinds_hash) DO UPDATE SET leader = excluded.leader, "
					+ "lease_until = excluded.lease_until, "
					+ "generation = CASE WHEN l.leader = excluded.leader AND l.lease_until >= now() THEN l.generation "
					+ "ELSE l.generation + 1 END "
					+ "WHERE l.leader = excluded.leader OR l.lease_until < now() RETURNING generation", Long.class,
					group.queue(), group.kindsHash(), member, expiry.toMillis());
			if (led.isEmpty()) {
				return null;
			}
			long generation = led.get(0);
			this.jdbc.update("DELETE FROM " + this.members + " WHERE queue = ? AND kinds_hash = ? "
					+ "AND heartbeat_at < now() - ? * interval '1 millisecond'", group.queue(), group.kindsHash(),
					expiry.toMillis());
			List<String> live = this.jdbc.queryForList("SELECT member FROM " + this.members
					+ " WHERE queue = ? AND kinds_hash = ? ORDER BY joined_at, member", String.class, group.queue(),
					group.kindsHash());
			List<BucketOwner> owners = this.jdbc.query("SELECT bucket, owner, next_owner, generation FROM "
					+ this.buckets + " WHERE queue = ? AND kinds_hash = ? ORDER BY bucket FOR UPDATE",
					(rs, i) -> new BucketOwner(rs.getInt(1), rs.getString(2), rs.getString(3), rs.getLong(4)),
					group.queue(), group.kindsHash());
			write(group, rebalance.plan(generation, live, owners));
			return generation;
		});
	}

	private void write(Group group, List<BucketOwner> changed) {
		if (changed.isEmpty()) {
			return;
		}
		Integer[] bucketNumbers = new Integer[changed.size()];
		String[] owners = new String[changed.size()];
		String[] nextOwners = new String[changed.size()];
		Long[] generations = new Long[changed.size()];
		for (int i = 0; i < changed.size(); i++) {
			bucketNumbers[i] = changed.get(i).bucket();
			owners[i] = changed.get(i).owner();
			nextOwners[i] = changed.get(i).nextOwner();
			generations[i] = changed.get(i).generation();
		}
		this.jdbc.update((Connection con) -> {
			PreparedStatement ps = con.prepareStatement("INSERT INTO " + this.buckets
					+ " (queue, kinds_hash, bucket, owner, next_owner, generation) "
					+ "SELECT ?, ?, b.bucket, b.owner, b.next_owner, b.generation "
					+ "FROM unnest(?::smallint[], ?::text[], ?::text[], ?::bigint[]) AS b(bucket, owner, next_owner, generation) "
					+ "ON CONFLICT (queue, kinds_hash, bucket) DO UPDATE SET owner = excluded.owner, "
					+ "next_owner = excluded.next_owner, generation = excluded.generation");
			ps.setString(1, group.queue());
			ps.setString(2, group.kindsHash());
			ps.setArray(3, con.createArrayOf("int4", bucketNumbers));
			ps.setArray(4, con.createArrayOf("text", owners));
			ps.setArray(5, con.createArrayOf("text", nextOwners));
			ps.setArray(6, con.createArrayOf("int8", generations));
			return ps;
		});
	}

	/** Removes the rows of buckets at or above {@code count} (the queue's bucket count went down). */
	public int dropBucketsFrom(Group group, int count) {
		return this.jdbc.update("DELETE FROM " + this.buckets + " WHERE queue = ? AND kinds_hash = ? AND bucket >= ?",
				group.queue(), group.kindsHash(), count);
	}

	/**
	 * Moves due jobs whose bucket is outside the queue's buckets (enqueued by an application that
	 * configured more) into range, so that no job waits in a bucket nobody owns. Reads an empty range
	 * of the bucket claim index when there are none.
	 */
	public int foldStrayJobs(String queue, int count, int limit) {
		return this.jdbc.update("UPDATE " + this.jobs + " SET bucket = bucket % ? WHERE id IN (SELECT id FROM "
				+ this.jobs + " WHERE queue = ? AND bucket >= ? AND state = 'available' LIMIT ? FOR UPDATE SKIP LOCKED)",
				count, queue, count, limit);
	}

	/**
	 * The buckets a member owns in the group's current generation, and whether the leader asked it to
	 * hand each over.
	 */
	public List<BucketOwner> owned(Group group, String member) {
		return this.jdbc.query("SELECT b.bucket, b.owner, b.next_owner, b.generation FROM " + this.buckets + " b JOIN "
				+ this.leaders + " l ON l.queue = b.queue AND l.kinds_hash = b.kinds_hash AND l.generation = b.generation "
				+ "WHERE b.queue = ? AND b.kinds_hash = ? AND b.owner = ? ORDER BY b.bucket",
				(rs, i) -> new BucketOwner(rs.getInt(1), rs.getString(2), rs.getString(3), rs.getLong(4)), group.queue(),
				group.kindsHash(), member);
	}

	/**
	 * Hands buckets over to the owners the leader chose, once this member has stopped claiming from
	 * them. Returns how many it handed over.
	 */
	public int handOver(Group group, String member, List<Integer> bucketNumbers) {
		if (bucketNumbers.isEmpty()) {
			return 0;
		}
		return this.jdbc.update((Connection con) -> {
			PreparedStatement ps = con.prepareStatement("UPDATE " + this.buckets
					+ " SET owner = next_owner, next_owner = NULL WHERE queue = ? AND kinds_hash = ? AND owner = ? "
					+ "AND next_owner IS NOT NULL AND bucket = ANY(?::smallint[])");
			ps.setString(1, group.queue());
			ps.setString(2, group.kindsHash());
			ps.setString(3, member);
			Array array = con.createArrayOf("int4", bucketNumbers.toArray(new Integer[0]));
			ps.setArray(4, array);
			return ps;
		});
	}

	/**
	 * A member leaves: its row goes, and so does its leadership, so that the others take over its
	 * buckets at their next heartbeat rather than after its membership expires.
	 */
	public void leave(Group group, String member) {
		this.jdbc.update("DELETE FROM " + this.members + " WHERE queue = ? AND kinds_hash = ? AND member = ?",
				group.queue(), group.kindsHash(), member);
		this.jdbc.update("UPDATE " + this.leaders + " SET lease_until = now() - interval '1 millisecond' "
				+ "WHERE queue = ? AND kinds_hash = ? AND leader = ?", group.queue(), group.kindsHash(), member);
	}

	/** Live members of a group, oldest first (for tests and operators). */
	public List<String> members(Group group) {
		return new ArrayList<>(this.jdbc.queryForList("SELECT member FROM " + this.members
				+ " WHERE queue = ? AND kinds_hash = ? ORDER BY joined_at, member", String.class, group.queue(),
				group.kindsHash()));
	}

	/**
	 * The instances that poll one queue for the same kinds.
	 * @param kindsHash a short digest of the sorted kinds
	 */
	public record Group(String queue, String kindsHash) {
	}

	/**
	 * One bucket's row.
	 * @param nextOwner the member the leader asked the owner to hand the bucket to, or {@code null}
	 * @param generation the leader's generation that wrote the row
	 */
	public record BucketOwner(int bucket, String owner, String nextOwner, long generation) {
	}

	/** What a rebalance writes, given the leader's generation, the live members (oldest first) and the bucket rows. */
	@FunctionalInterface
	public interface Rebalance {

		/** The rows to write (new or changed). */
		List<BucketOwner> plan(long generation, List<String> liveMembers, List<BucketOwner> owners);

	}

}
