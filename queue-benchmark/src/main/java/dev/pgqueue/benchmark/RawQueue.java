package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

import dev.pgqueue.engine.sql.JobStatements;
import dev.pgqueue.schema.SchemaName;

/**
 * The baseline: the engine's own statement texts ({@link JobStatements}, the very strings
 * {@code JobRepository} runs), run over plain JDBC connections with statements prepared once per
 * connection. No pool hand-offs, no templates, no transaction manager, no savepoints, no JSON mapper,
 * no metrics: what pgqueue costs on top of its SQL is the difference between the two.
 */
final class RawQueue implements AutoCloseable {

	private static final String[] KINDS = { BenchSchema.KIND };

	private final Connection connection;

	private final JobStatements sql;

	private final SchemaName schema;

	/** The engine's unique-job insert and holder look-up, read on first use. */
	private String uniqueInsert;

	private String uniqueHolders;

	/** Prepared on first use: a loop that borrows a connection per statement prepares only what it runs. */
	private final Map<String, PreparedStatement> prepared = new HashMap<>();

	/**
	 * Statements run on {@code connection}, which the caller keeps for as long as it uses this.
	 * Inserts do not notify: the engine's mostly do not either, as it notifies a queue at most once
	 * per interval.
	 */
	RawQueue(Connection connection, SchemaName schema) {
		this.connection = connection;
		this.sql = new JobStatements(schema);
		this.schema = schema;
	}

	private PreparedStatement statement(String sql) throws SQLException {
		PreparedStatement statement = this.prepared.get(sql);
		if (statement == null) {
			statement = this.connection.prepareStatement(sql);
			this.prepared.put(sql, statement);
		}
		return statement;
	}

	Connection connection() {
		return this.connection;
	}

	/** Locks up to {@code limit} due jobs for the current transaction (autocommit must be off). */
	List<RawJob> claimLocked(int limit) throws SQLException {
		PreparedStatement ps = statement(this.sql.claimLocked);
		ps.setString(1, BenchSchema.QUEUE);
		ps.setArray(2, this.connection.createArrayOf("text", KINDS));
		ps.setInt(3, limit);
		return read(ps);
	}

	/**
	 * {@link #claimLocked} from the given buckets only, read one after the other in the order given:
	 * the engine's bucket claim.
	 */
	List<RawJob> claimLockedInBuckets(Integer[] buckets, int limit) throws SQLException {
		PreparedStatement ps = statement(this.sql.claimLockedInBuckets);
		ps.setArray(1, this.connection.createArrayOf("int2", buckets));
		ps.setString(2, BenchSchema.QUEUE);
		ps.setArray(3, this.connection.createArrayOf("text", KINDS));
		ps.setInt(4, limit);
		ps.setInt(5, limit);
		return read(ps);
	}

	/** Deletes the jobs claimed with {@link #claimLocked}, in the same transaction. */
	void deleteLocked(List<RawJob> jobs) throws SQLException {
		Long[] ids = new Long[jobs.size()];
		for (int i = 0; i < ids.length; i++) {
			ids[i] = jobs.get(i).id();
		}
		PreparedStatement ps = statement(this.sql.deleteLocked);
		ps.setArray(1, this.connection.createArrayOf("int8", ids));
		ps.executeUpdate();
	}

	/** Claims up to {@code limit} due jobs as running under a lease (autocommit on: commits at once). */
	List<RawJob> claimLeased(int limit, String owner, long leaseMillis) throws SQLException {
		PreparedStatement ps = statement(this.sql.claimLeased);
		ps.setString(1, BenchSchema.QUEUE);
		ps.setArray(2, this.connection.createArrayOf("text", KINDS));
		ps.setInt(3, limit);
		ps.setString(4, owner);
		ps.setLong(5, leaseMillis);
		// The instant a rate limit granted the claim's starts: none here, so the claim's now().
		ps.setObject(6, null);
		return read(ps);
	}

	/**
	 * Completes one leased job if it still runs the attempt claimed: not an engine statement but the
	 * what-if diagnostics' variant, a completion per job (the engine's before it had a completer).
	 */
	boolean completeLeased(RawJob job) throws SQLException {
		PreparedStatement ps = statement("UPDATE " + this.sql.table
				+ " SET state = 'completed', finished_at = clock_timestamp(), "
				+ "lease_owner = NULL, lease_until = NULL, last_error = NULL "
				+ "WHERE id = ? AND attempt = ? AND state = 'running'");
		ps.setLong(1, job.id());
		ps.setInt(2, job.attempt());
		return ps.executeUpdate() == 1;
	}

	/**
	 * Completes many leased jobs with one statement, each only if it still runs the attempt claimed:
	 * the statement the engine's completer flushes with.
	 * @return how many were still running that attempt
	 */
	int completeLeasedMany(List<RawJob> jobs) throws SQLException {
		Long[] ids = new Long[jobs.size()];
		Integer[] attempts = new Integer[jobs.size()];
		for (int i = 0; i < ids.length; i++) {
			ids[i] = jobs.get(i).id();
			attempts[i] = jobs.get(i).attempt();
		}
		PreparedStatement ps = statement(this.sql.completeLeased);
		ps.setArray(1, this.connection.createArrayOf("int8", ids));
		ps.setArray(2, this.connection.createArrayOf("int4", attempts));
		int completed = 0;
		try (ResultSet rs = ps.executeQuery()) {
			while (rs.next()) {
				completed++;
			}
		}
		return completed;
	}

	/** Inserts one due job. */
	void insertOne(UUID publicId, String payloadJson) throws SQLException {
		PreparedStatement ps = statement(this.sql.insertOne);
		ps.setObject(1, publicId);
		ps.setString(2, BenchSchema.KIND);
		ps.setString(3, BenchSchema.QUEUE);
		ps.setString(4, payloadJson);
		ps.setInt(5, 0);
		ps.setNull(6, Types.TIMESTAMP_WITH_TIMEZONE);
		ps.setNull(7, Types.BIGINT);
		ps.setInt(8, 10);
		ps.setLong(9, 0);
		ps.setInt(10, ThreadLocalRandom.current().nextInt(64));
		ps.setNull(11, Types.VARCHAR);
		ps.setNull(12, Types.VARCHAR);
		ps.setNull(13, Types.ARRAY);
		ps.setNull(14, Types.INTEGER);
		ps.executeUpdate();
	}

	/**
	 * Inserts {@code count} due jobs with one multi-row statement: the engine's insert of jobs that use
	 * no optional column, as {@code enqueueAll} sends it for such jobs.
	 */
	void insertMany(int count, String payloadJson) throws SQLException {
		UUID[] ids = new UUID[count];
		String[] kinds = new String[count];
		String[] queues = new String[count];
		String[] payloads = new String[count];
		Integer[] priorities = new Integer[count];
		Integer[] maxAttempts = new Integer[count];
		Integer[] buckets = new Integer[count];
		for (int i = 0; i < count; i++) {
			ids[i] = UUID.randomUUID();
			kinds[i] = BenchSchema.KIND;
			queues[i] = BenchSchema.QUEUE;
			payloads[i] = payloadJson;
			priorities[i] = 0;
			maxAttempts[i] = 10;
			buckets[i] = ThreadLocalRandom.current().nextInt(64);
		}
		PreparedStatement ps = statement(this.sql.insertManyPlain);
		ps.setArray(1, this.connection.createArrayOf("uuid", ids));
		ps.setArray(2, this.connection.createArrayOf("text", kinds));
		ps.setArray(3, this.connection.createArrayOf("text", queues));
		ps.setArray(4, this.connection.createArrayOf("text", payloads));
		ps.setArray(5, this.connection.createArrayOf("int4", priorities));
		ps.setArray(6, this.connection.createArrayOf("int4", maxAttempts));
		ps.setArray(7, this.connection.createArrayOf("int4", buckets));
		ps.setArray(8, this.connection.createArrayOf("text", new String[count]));
		ps.executeUpdate();
	}

	/**
	 * Enqueues one due job of kind {@value BenchSchema#KIND} per key, each held while its job is
	 * unfinished, as {@code UniqueJobRepository} does for {@code uniqueKey(key)}: the engine's insert,
	 * which the unique index turns away for every key already held ({@code ON CONFLICT DO NOTHING}),
	 * then, only if some were turned away, the engine's look-up of the jobs holding their keys. No
	 * notification.
	 * @return for each key, the public id of the job holding it: the new job's, or the holder's
	 */
	UUID[] enqueueUnique(String[] keys, String payloadJson) throws SQLException {
		UUID[] ids = new UUID[keys.length];
		for (int i = 0; i < ids.length; i++) {
			ids[i] = UUID.randomUUID();
		}
		String[] payloads = new String[keys.length];
		Arrays.fill(payloads, payloadJson);
		Set<UUID> inserted = insertUnique(ids, keys, payloads, new Timestamp[keys.length], new Long[keys.length],
				new Timestamp[keys.length]);
		if (inserted.size() == keys.length) {
			return ids;
		}
		List<Integer> conflicted = new ArrayList<>();
		for (int i = 0; i < ids.length; i++) {
			if (!inserted.contains(ids[i])) {
				conflicted.add(i);
			}
		}
		Map<Integer, UUID> holders = holders(conflicted, keys);
		for (int i : conflicted) {
			UUID holder = holders.get(i);
			if (holder == null) {
				throw new IllegalStateException("Key '" + keys[i] + "' was neither free nor held");
			}
			ids[i] = holder;
		}
		return ids;
	}

	/**
	 * The engine's unique-job insert ({@code UniqueStatements.insert}) of one due job of kind
	 * {@value BenchSchema#KIND} per key: held while unfinished where {@code periods[i]} is null or zero,
	 * else for that many seconds from {@code periodStarts[i]}.
	 * @param runAts when each job is due; null for now
	 * @return the public ids of the jobs inserted (the others' keys were held)
	 */
	Set<UUID> insertUnique(UUID[] ids, String[] keys, String[] payloads, Timestamp[] runAts, Long[] periods,
			Timestamp[] periodStarts) throws SQLException {
		if (this.uniqueInsert == null) {
			this.uniqueInsert = EngineStatements.unique(this.schema, "insert");
		}
		int count = keys.length;
		String[] kinds = new String[count];
		String[] queues = new String[count];
		Integer[] priorities = new Integer[count];
		Long[] delays = new Long[count];
		Integer[] maxAttempts = new Integer[count];
		Long[] jitters = new Long[count];
		Integer[] buckets = new Integer[count];
		Long[] periodSeconds = new Long[count];
		for (int i = 0; i < count; i++) {
			kinds[i] = BenchSchema.KIND;
			queues[i] = BenchSchema.QUEUE;
			priorities[i] = 0;
			maxAttempts[i] = 10;
			jitters[i] = 0L;
			buckets[i] = ThreadLocalRandom.current().nextInt(64);
			periodSeconds[i] = (periods[i] != null) ? periods[i] : 0L;
		}
		PreparedStatement ps = statement(this.uniqueInsert);
		ps.setArray(1, this.connection.createArrayOf("uuid", ids));
		ps.setArray(2, this.connection.createArrayOf("text", kinds));
		ps.setArray(3, this.connection.createArrayOf("text", queues));
		ps.setArray(4, this.connection.createArrayOf("text", payloads));
		ps.setArray(5, this.connection.createArrayOf("int4", priorities));
		ps.setArray(6, this.connection.createArrayOf("timestamptz", runAts));
		ps.setArray(7, this.connection.createArrayOf("int8", delays));
		ps.setArray(8, this.connection.createArrayOf("int4", maxAttempts));
		ps.setArray(9, this.connection.createArrayOf("int8", jitters));
		ps.setArray(10, this.connection.createArrayOf("int4", buckets));
		ps.setArray(11, this.connection.createArrayOf("text", new String[count]));
		ps.setArray(12, this.connection.createArrayOf("text", new String[count]));
		ps.setArray(13, this.connection.createArrayOf("text", new String[count]));
		ps.setArray(14, this.connection.createArrayOf("int4", new Integer[count]));
		ps.setArray(15, this.connection.createArrayOf("text", keys));
		ps.setArray(16, this.connection.createArrayOf("int8", periodSeconds));
		ps.setArray(17, this.connection.createArrayOf("timestamptz", periodStarts));
		Set<UUID> inserted = new HashSet<>();
		try (ResultSet rs = ps.executeQuery()) {
			while (rs.next()) {
				inserted.add(rs.getObject(1, UUID.class));
			}
		}
		return inserted;
	}

	/** The engine's look-up of the jobs holding keys held while unfinished, by the keys' positions. */
	private Map<Integer, UUID> holders(List<Integer> positions, String[] allKeys) throws SQLException {
		if (this.uniqueHolders == null) {
			this.uniqueHolders = EngineStatements.unique(this.schema, "holders");
		}
		int count = positions.size();
		String[] kinds = new String[count];
		String[] keys = new String[count];
		Long[] periods = new Long[count];
		for (int k = 0; k < count; k++) {
			kinds[k] = BenchSchema.KIND;
			keys[k] = allKeys[positions.get(k)];
			periods[k] = 0L;
		}
		PreparedStatement ps = statement(this.uniqueHolders);
		ps.setArray(1, this.connection.createArrayOf("int4", positions.toArray(new Integer[0])));
		ps.setArray(2, this.connection.createArrayOf("text", kinds));
		ps.setArray(3, this.connection.createArrayOf("text", keys));
		ps.setArray(4, this.connection.createArrayOf("int8", periods));
		ps.setArray(5, this.connection.createArrayOf("timestamptz", new Timestamp[count]));
		Map<Integer, UUID> holders = new HashMap<>();
		try (ResultSet rs = ps.executeQuery()) {
			while (rs.next()) {
				UUID holder = rs.getObject(2, UUID.class);
				if (holder != null) {
					holders.put(rs.getInt(1), holder);
				}
			}
		}
		return holders;
	}

	/** Reads every column the engine reads, so that both pay for decoding the same rows. */
	private static List<RawJob> read(PreparedStatement statement) throws SQLException {
		List<RawJob> jobs = new ArrayList<>();
		try (ResultSet rs = statement.executeQuery()) {
			while (rs.next()) {
				// By position, timestamps as OffsetDateTime: the cheapest decoding, as the engine does it.
				jobs.add(new RawJob(rs.getLong(1), rs.getObject(2, UUID.class), rs.getString(3), rs.getString(4),
						rs.getInt(5), rs.getInt(6), rs.getInt(7), rs.getString(8),
						instant(rs.getObject(9, OffsetDateTime.class)), instant(rs.getObject(10, OffsetDateTime.class)),
						rs.getString(12)));
			}
		}
		return jobs;
	}

	private static Instant instant(OffsetDateTime timestamp) {
		return (timestamp != null) ? timestamp.toInstant() : null;
	}

	/** Closes the statements; the connection belongs to the caller. */
	@Override
	public void close() throws SQLException {
		for (PreparedStatement statement : this.prepared.values()) {
			statement.close();
		}
		this.prepared.clear();
	}

	/** A claimed row, decoded as the engine decodes it. */
	record RawJob(long id, UUID publicId, String kind, String queue, int attempt, int maxAttempts, int priority,
			String payload, Instant runAt, Instant createdAt, String traceContext) {
	}

}
