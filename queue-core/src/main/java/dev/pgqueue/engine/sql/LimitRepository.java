package dev.pgqueue.engine.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.RowMapper;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The statements of claims under concurrency limits. Each runs in the caller's transaction: a
 * limited claim is several statements, and the advisory locks they take last until it ends.
 */
public class LimitRepository {

	private final JdbcTemplate jdbc;

	private final LimitStatements sql;

	public LimitRepository(JdbcTemplate jdbc, SchemaName schema) {
		this.jdbc = jdbc;
		this.sql = new LimitStatements(schema);
	}

	/**
	 * The next due jobs a limited claim may consider, in claim order, without locking them.
	 * @param perKey the per-key limit, 0 for none: in leased mode keys running that many are left out
	 * @param buckets the buckets to read, or {@code null} for the whole queue
	 * @param excludedKeys keys to leave out (found at their limit earlier in the same claim)
	 * @param excludedIds jobs to leave out (already chosen)
	 * @param orderedByKey whether to leave out jobs whose key has an unfinished job enqueued earlier
	 */
	public List<Candidate> candidates(String queue, int perKey, String[] kinds, int @Nullable [] buckets,
			Collection<String> excludedKeys, Collection<Long> excludedIds, boolean orderedByKey, int limit) {
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.candidates);
			Object[] bucketArray = (buckets != null) ? java.util.Arrays.stream(buckets).boxed().toArray() : null;
			ps.setString(1, queue);
			ps.setInt(2, perKey);
			ps.setInt(3, perKey);
			ps.setString(4, queue);
			ps.setArray(5, con.createArrayOf("text", kinds));
			ps.setArray(6, (bucketArray != null) ? con.createArrayOf("int2", bucketArray) : null);
			ps.setArray(7, (bucketArray != null) ? con.createArrayOf("int2", bucketArray) : null);
			ps.setArray(8, con.createArrayOf("text", excludedKeys.toArray()));
			ps.setArray(9, con.createArrayOf("int8", excludedIds.toArray()));
			ps.setBoolean(10, orderedByKey);
			ps.setInt(11, limit);
			return ps;
		}, (rs, i) -> new Candidate(rs.getLong(1), rs.getString(2), rs.getString(3),
				rs.getObject(4, Integer.class)));
	}

	/**
	 * Tries to take, without waiting, up to {@code wanted[i]} of the slots {@code slots[i]} of group
	 * {@code groups[i]}, lowest first; returns the slots taken as {@code {group, slot}} pairs. They
	 * are held until the caller's transaction ends.
	 */
	public List<int[]> trySlots(int[] groups, int[] wanted, List<int[]> slots) {
		Object[] groupArray = java.util.Arrays.stream(groups).boxed().toArray();
		Object[] wantedArray = java.util.Arrays.stream(wanted).boxed().toArray();
		String[] slotLiterals = slots.stream().map(LimitRepository::intArrayLiteral).toArray(String[]::new);
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.trySlots);
			ps.setArray(1, con.createArrayOf("int4", groupArray));
			ps.setArray(2, con.createArrayOf("int4", wantedArray));
			ps.setArray(3, con.createArrayOf("text", slotLiterals));
			return ps;
		}, (rs, i) -> new int[] { rs.getInt(1), rs.getInt(2) });
	}

	/** Takes each group's lock for the caller's transaction, waiting, in the order given. */
	public void lockGroups(int[] groups) {
		Object[] groupArray = java.util.Arrays.stream(groups).boxed().toArray();
		this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.lockGroups);
			ps.setArray(1, con.createArrayOf("int4", groupArray));
			return ps;
		}, (rs) -> {
		});
	}

	/** The queue's running jobs (leased mode), counted by kind and concurrency key. */
	public List<Running> running(String queue) {
		return this.jdbc.query(this.sql.running, (rs, i) -> new Running(rs.getString(1), rs.getString(2), rs.getInt(3)),
				queue);
	}

	/** Locks the chosen jobs that are still available and free, for the caller's transaction. */
	public List<ClaimedJob> lockChosen(Collection<Long> ids) {
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.lockChosen);
			ps.setArray(1, con.createArrayOf("int8", ids.toArray()));
			return ps;
		}, JobRepository.claimedMapper(false));
	}

	/** Leases the chosen jobs that are still available and free to {@code owner}, counting the attempt. */
	public List<ClaimedJob> leaseChosen(Collection<Long> ids, String owner, Duration lease, @Nullable Instant startedAt) {
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.leaseChosen);
			ps.setArray(1, con.createArrayOf("int8", ids.toArray()));
			ps.setString(2, owner);
			ps.setLong(3, lease.toMillis());
			ps.setObject(4, JobRepository.timestamp(startedAt));
			return ps;
		}, JobRepository.claimedMapper(true));
	}

	/**
	 * Up to {@code limit} concurrency keys that have due jobs in the queue, in key order, after
	 * {@code after} (empty: from the first).
	 */
	public List<String> fairKeys(String queue, String after, int limit) {
		return this.jdbc.queryForList(this.sql.fairKeys, String.class, queue, after, queue, limit);
	}

	/**
	 * Locks up to {@code takes[i]} due jobs of key {@code keys[i]} each, and up to {@code keyless} due jobs
	 * without a key, for the caller's transaction, skipping rows others hold.
	 * @param buckets only jobs in these buckets; {@code null} for all
	 */
	public List<KeyedJob> lockFair(String queue, String[] kinds, String[] keys, int[] takes, int keyless,
			int @Nullable [] buckets) {
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.lockFair);
			bindFair(con, ps, queue, kinds, keys, takes, keyless, buckets);
			return ps;
		}, keyed(JobRepository.claimedMapper(false)));
	}

	/**
	 * Leases to {@code owner} what {@link #lockFair} would lock, counting the attempt.
	 * @param startedAt the start instant to record; {@code null} for the claim's {@code now()}
	 */
	public List<KeyedJob> leaseFair(String queue, String[] kinds, String[] keys, int[] takes, int keyless,
			int @Nullable [] buckets, String owner, Duration lease, @Nullable Instant startedAt) {
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.leaseFair);
			int next = bindFair(con, ps, queue, kinds, keys, takes, keyless, buckets);
			ps.setString(next, owner);
			ps.setLong(next + 1, lease.toMillis());
			ps.setObject(next + 2, JobRepository.timestamp(startedAt));
			return ps;
		}, keyed(JobRepository.claimedMapper(true)));
	}

	private static RowMapper<KeyedJob> keyed(RowMapper<ClaimedJob> claimed) {
		return (rs, i) -> new KeyedJob(Objects.requireNonNull(claimed.mapRow(rs, i)), rs.getString(15));
	}

	/** A job a fair claim took, with its concurrency key ({@code null} for none). */
	public record KeyedJob(ClaimedJob job, @Nullable String key) {
	}

	private static int bindFair(Connection con, PreparedStatement ps, String queue, String[] kinds, String[] keys,
			int[] takes, int keyless, int @Nullable [] buckets) throws java.sql.SQLException {
		Object[] bucketArray = (buckets != null) ? java.util.Arrays.stream(buckets).boxed().toArray() : null;
		ps.setArray(1, con.createArrayOf("text", keys));
		ps.setArray(2, con.createArrayOf("int4", java.util.Arrays.stream(takes).boxed().toArray()));
		int next = 3;
		for (int branch = 0; branch < 2; branch++) {
			ps.setString(next++, queue);
			ps.setArray(next++, con.createArrayOf("text", kinds));
			ps.setArray(next++, (bucketArray != null) ? con.createArrayOf("int2", bucketArray) : null);
			ps.setArray(next++, (bucketArray != null) ? con.createArrayOf("int2", bucketArray) : null);
		}
		ps.setInt(next++, keyless);
		return next;
	}

	private static String intArrayLiteral(int[] values) {
		StringBuilder literal = new StringBuilder("{");
		for (int i = 0; i < values.length; i++) {
			literal.append((i > 0) ? "," : "").append(values[i]);
		}
		return literal.append('}').toString();
	}

	/**
	 * A due job a limited claim may take: its id, kind, concurrency key (or {@code null}) and its own rate
	 * weight (or {@code null} for its kind's).
	 */
	public record Candidate(long id, String kind, @Nullable String key, @Nullable Integer rateWeight) {
	}

	/** How many jobs of a kind and concurrency key (or {@code null}) are running. */
	public record Running(String kind, @Nullable String key, int count) {
	}

	/** The ids of the candidates, in their order. */
	public static List<Long> ids(List<Candidate> candidates) {
		List<Long> ids = new ArrayList<>(candidates.size());
		candidates.forEach((candidate) -> ids.add(candidate.id()));
		return ids;
	}

}
