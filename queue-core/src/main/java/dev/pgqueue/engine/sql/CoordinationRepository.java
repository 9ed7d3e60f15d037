package dev.pgqueue.engine.sql;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Runs the statements of the bucket coordinator ({@link CoordinationStatements}), over three small
 * tables: members and their heartbeats, one leader per group with a fencing generation, and the
 * owner of each bucket. A group is the instances that poll one queue for the same kinds
 * ({@code queue}, {@code kinds_hash}).
 *
 * <p>Times are compared on the database clock only, so that instances whose clocks disagree still
 * agree on who is alive.
 */
public class CoordinationRepository {

	private static final RowMapper<BucketOwner> BUCKET_OWNER = (rs, i) -> new BucketOwner(rs.getInt(1),
			rs.getString(2), rs.getString(3), rs.getLong(4));

	private final JdbcTemplate jdbc;

	private final TransactionTemplate transactions;

	private final CoordinationStatements sql;

	public CoordinationRepository(JdbcTemplate jdbc, SchemaName schema) {
		this.jdbc = jdbc;
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(jdbc.getDataSource()));
		this.sql = new CoordinationStatements(schema);
	}

	/** Records that a member is alive (and joins it if it was not a member). */
	public void heartbeat(Group group, String member) {
		this.jdbc.update(this.sql.heartbeat, group.queue(), group.kindsHash(), member);
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
	public @Nullable Long leadAndRebalance(Group group, String member, Duration expiry, Rebalance rebalance) {
		return this.transactions.execute((status) -> {
			List<Long> led = this.jdbc.queryForList(this.sql.lead, Long.class, group.queue(), group.kindsHash(), member,
					expiry.toMillis());
			if (led.isEmpty()) {
				return null;
			}
			long generation = led.get(0);
			this.jdbc.update(this.sql.dropExpiredMembers, group.queue(), group.kindsHash(), expiry.toMillis());
			List<String> live = this.jdbc.queryForList(this.sql.members, String.class, group.queue(),
					group.kindsHash());
			List<BucketOwner> owners = this.jdbc.query(this.sql.lockBuckets, BUCKET_OWNER, group.queue(),
					group.kindsHash());
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
			PreparedStatement ps = con.prepareStatement(this.sql.writeBuckets);
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
		return this.jdbc.update(this.sql.dropBucketsFrom, group.queue(), group.kindsHash(), count);
	}

	/**
	 * Moves due jobs whose bucket is outside the queue's buckets (enqueued by an application that
	 * configured more) into range, so that no job waits in a bucket nobody owns. Reads an empty range
	 * of the bucket claim index when there are none.
	 */
	public int foldStrayJobs(String queue, int count, int limit) {
		return this.jdbc.update(this.sql.foldStrayJobs, queue, count, limit, count);
	}

	/**
	 * The buckets a member owns in the group's current generation, and whether the leader asked it to
	 * hand each over.
	 */
	public List<BucketOwner> owned(Group group, String member) {
		return this.jdbc.query(this.sql.owned, BUCKET_OWNER, group.queue(), group.kindsHash(), member);
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
			PreparedStatement ps = con.prepareStatement(this.sql.handOver);
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
		this.jdbc.update(this.sql.leave, group.queue(), group.kindsHash(), member);
		this.jdbc.update(this.sql.resign, group.queue(), group.kindsHash(), member);
	}

	/** Live members of a group, oldest first (for tests and operators). */
	public List<String> members(Group group) {
		return new ArrayList<>(this.jdbc.queryForList(this.sql.members, String.class, group.queue(), group.kindsHash()));
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
	public record BucketOwner(int bucket, String owner, @Nullable String nextOwner, long generation) {
	}

	/** What a rebalance writes, given the leader's generation, the live members (oldest first) and the bucket rows. */
	@FunctionalInterface
	public interface Rebalance {

		/** The rows to write (new or changed). */
		List<BucketOwner> plan(long generation, List<String> liveMembers, List<BucketOwner> owners);

	}

}
