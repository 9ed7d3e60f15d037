package dev.pgqueue.engine;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import dev.pgqueue.JobState;
import dev.pgqueue.schema.SchemaName;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.PreparedStatementCreator;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.jdbc.core.RowMapper;

/**
 * Every SQL statement pgqueue runs against the jobs table.
 *
 * <p>Statements go through {@link JdbcTemplate}, so they join the caller's Spring transaction when
 * there is one. Queue and kind names are always bound as parameters; the schema name is validated
 * by {@link SchemaName} and quoted.
 *
 * <p>Every statement that records an outcome names the state (and, in leased mode, the attempt) it
 * expects, so that a late finish can never overwrite a job that was rescued or reclaimed meanwhile.
 */
public class JobRepository {

	private static final String COLUMNS = "id, public_id, kind, queue, attempt, max_attempts, priority, "
			+ "payload::text AS payload, run_at, created_at";

	private static final RowCallbackHandler IGNORE_ROWS = (rs) -> {
	};

	private static final Duration MAX_DELAY = Duration.ofDays(365L * 1000);

	private final JdbcTemplate jdbc;

	private final SchemaName schema;

	private final String table;

	private final boolean notify;

	private final String insertOne;

	private final String insertOneNotifying;

	private final String insertMany;

	private final String insertManyNotifying;

	private final String claimLocked;

	private final String claimLeased;

	/** A repository that does not notify listeners of new jobs. */
	public JobRepository(JdbcTemplate jdbc, SchemaName schema) {
		this(jdbc, schema, false);
	}

	/**
	 * @param notify whether notifications are on: inserts of due jobs may send one on
	 * {@link #channel()} (delivered when the inserting transaction commits) naming their queue, and
	 * promotions of scheduled jobs always do
	 */
	public JobRepository(JdbcTemplate jdbc, SchemaName schema, boolean notify) {
		this.jdbc = jdbc;
		this.schema = schema;
		this.notify = notify;
		this.table = schema.qualify("pgqueue_jobs");
		String dueAt = "coalesce(r.run_at, now() + coalesce(r.delay_us, 0) * interval '1 microsecond')";
		String insertOne = """
				INSERT INTO %1$s (public_id, kind, queue, payload, priority, run_at, max_attempts, state)
				SELECT r.public_id, r.kind, r.queue, r.payload, r.priority, %2$s, r.max_attempts,
				       CASE WHEN %2$s <= now() THEN 'available' ELSE 'scheduled' END
				FROM (SELECT ?::uuid AS public_id, ?::text AS kind, ?::text AS queue, ?::jsonb AS payload,
				             ?::smallint AS priority, ?::timestamptz AS run_at, ?::bigint AS delay_us,
				             ?::integer AS max_attempts) r
				""".formatted(this.table, dueAt);
		this.insertOne = insertOne;
		this.insertOneNotifying = notifying(insertOne);
		String insertMany = """
				INSERT INTO %1$s (public_id, kind, queue, payload, priority, run_at, max_attempts, state)
				SELECT r.public_id, r.kind, r.queue, r.payload::jsonb, r.priority, %2$s, r.max_attempts,
				       CASE WHEN %2$s <= now() THEN 'available' ELSE 'scheduled' END
				FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::smallint[], ?::timestamptz[],
				            ?::bigint[], ?::integer[])
				     AS r(public_id, kind, queue, payload, priority, run_at, delay_us, max_attempts)
				""".formatted(this.table, dueAt);
		this.insertMany = insertMany;
		this.insertManyNotifying = notifying(insertMany);
		// Matches pgqueue_jobs_claim_idx: equality on queue, the index's order, only available rows.
		String claimable = """
				SELECT %s FROM %s
				WHERE queue = ? AND state = 'available' AND kind = ANY(?)
				ORDER BY priority DESC, run_at, id
				LIMIT ?
				FOR UPDATE SKIP LOCKED""";
		this.claimLocked = claimable.formatted(COLUMNS, this.table);
		this.claimLeased = """
				WITH claimed AS (%s)
				UPDATE %s j
				SET state = 'running', attempt = j.attempt + 1, started_at = now(),
				    lease_owner = ?, lease_until = now() + ? * interval '1 millisecond'
				FROM claimed
				WHERE j.id = claimed.id
				RETURNING j.id, j.public_id, j.kind, j.queue, j.attempt, j.max_attempts, j.priority,
				          j.payload::text AS payload, j.run_at, j.created_at
				""".formatted(claimable.formatted("id", this.table), this.table);
	}

	public SchemaName schema() {
		return this.schema;
	}

	/** The notification channel of this schema's jobs table. */
	public String channel() {
		return channel(this.schema);
	}

	/** The notification channel of a schema's jobs table. */
	public static String channel(SchemaName schema) {
		return "pgqueue:" + schema.value();
	}

	/**
	 * Wraps an insert so that the same statement notifies the queues that received due jobs: one round
	 * trip, and PostgreSQL folds identical notifications of one transaction into one.
	 */
	private String notifying(String insert) {
		return "WITH inserted AS (" + insert.strip() + " RETURNING queue, state)\n"
				+ "SELECT pg_notify('" + channel() + "', q.queue) FROM (SELECT DISTINCT queue FROM inserted "
				+ "WHERE state = 'available') q";
	}

	/** Whether notifications are on for this schema's jobs table. */
	public boolean notifies() {
		return this.notify;
	}

	/**
	 * Inserts one job, in the caller's transaction if there is one.
	 * @param notify whether the same statement notifies the job's queue, if the job is due and
	 * notifications are on
	 */
	public void insert(NewJob job, boolean notify) {
		Object[] arguments = { job.publicId(), job.kind(), job.queue(), job.payloadJson(), job.priority(),
				timestamp(job.runAt()), delayMicros(job.delay()), job.maxAttempts() };
		if (notify && this.notify) {
			this.jdbc.query(this.insertOneNotifying, IGNORE_ROWS, arguments);
		}
		else {
			this.jdbc.update(this.insertOne, arguments);
		}
	}

	/**
	 * Inserts many jobs with one statement, in the caller's transaction if there is one.
	 * @param notify whether the same statement notifies the queues that received due jobs, if
	 * notifications are on
	 */
	public void insertAll(List<NewJob> jobs, boolean notify) {
		if (jobs.isEmpty()) {
			return;
		}
		int n = jobs.size();
		UUID[] ids = new UUID[n];
		String[] kinds = new String[n];
		String[] queues = new String[n];
		String[] payloads = new String[n];
		Integer[] priorities = new Integer[n];
		Timestamp[] runAts = new Timestamp[n];
		Long[] delays = new Long[n];
		Integer[] maxAttempts = new Integer[n];
		for (int i = 0; i < n; i++) {
			NewJob job = jobs.get(i);
			ids[i] = job.publicId();
			kinds[i] = job.kind();
			queues[i] = job.queue();
			payloads[i] = job.payloadJson();
			priorities[i] = job.priority();
			runAts[i] = timestamp(job.runAt());
			delays[i] = delayMicros(job.delay());
			maxAttempts[i] = job.maxAttempts();
		}
		boolean notifying = notify && this.notify;
		PreparedStatementCreator statement = (Connection con) -> {
			PreparedStatement ps = con.prepareStatement(notifying ? this.insertManyNotifying : this.insertMany);
			ps.setArray(1, con.createArrayOf("uuid", ids));
			ps.setArray(2, con.createArrayOf("text", kinds));
			ps.setArray(3, con.createArrayOf("text", queues));
			ps.setArray(4, con.createArrayOf("text", payloads));
			ps.setArray(5, con.createArrayOf("int4", priorities));
			ps.setArray(6, con.createArrayOf("timestamptz", runAts));
			ps.setArray(7, con.createArrayOf("int8", delays));
			ps.setArray(8, con.createArrayOf("int4", maxAttempts));
			return ps;
		};
		if (notifying) {
			this.jdbc.query(statement, IGNORE_ROWS);
		}
		else {
			this.jdbc.update(statement);
		}
	}

	/**
	 * Notifies the queues on {@link #channel()}, in the caller's transaction if there is one (the
	 * notifications are then delivered when it commits).
	 */
	public void notifyQueues(Collection<String> queues) {
		if (queues.isEmpty()) {
			return;
		}
		String[] names = queues.toArray(String[]::new);
		this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement("SELECT pg_notify(?, q) FROM unnest(?::text[]) q");
			ps.setString(1, channel());
			ps.setArray(2, con.createArrayOf("text", names));
			return ps;
		}, IGNORE_ROWS);
	}

	/**
	 * Locks up to {@code limit} due jobs of the queue for the caller's transaction, skipping rows other
	 * transactions hold. The rows stay available; the caller records each outcome before committing.
	 */
	public List<ClaimedJob> claimLocked(String queue, String[] kinds, int limit) {
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.claimLocked);
			ps.setString(1, queue);
			ps.setArray(2, con.createArrayOf("text", kinds));
			ps.setInt(3, limit);
			return ps;
		}, claimedMapper(false));
	}

	/**
	 * Claims up to {@code limit} due jobs of the queue and commits them as running under a lease held
	 * by {@code owner}, counting the attempt.
	 */
	public List<ClaimedJob> claimLeased(String queue, String[] kinds, int limit, String owner, Duration lease) {
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.claimLeased);
			ps.setString(1, queue);
			ps.setArray(2, con.createArrayOf("text", kinds));
			ps.setInt(3, limit);
			ps.setString(4, owner);
			ps.setLong(5, lease.toMillis());
			return ps;
		}, claimedMapper(true));
	}

	/** Completes jobs claimed with {@link #claimLocked} in the same transaction, or deletes them. */
	public int completeLocked(Collection<Long> ids, boolean delete) {
		if (ids.isEmpty()) {
			return 0;
		}
		String sql = delete ? "DELETE FROM " + this.table + " WHERE id = ANY(?)"
				: "UPDATE " + this.table + " SET state = 'completed', attempt = attempt + 1, started_at = now(), "
						+ "finished_at = clock_timestamp(), last_error = NULL WHERE id = ANY(?)";
		return updateWithIds(sql, ids);
	}

	/** Completes a leased job, or deletes it, if it is still running the given attempt. */
	public boolean completeLeased(long id, int attempt, boolean delete) {
		String sql = delete ? "DELETE FROM " + this.table + " WHERE id = ? AND attempt = ? AND state = 'running'"
				: "UPDATE " + this.table + " SET state = 'completed', finished_at = clock_timestamp(), "
						+ "lease_owner = NULL, lease_until = NULL, last_error = NULL "
						+ "WHERE id = ? AND attempt = ? AND state = 'running'";
		return this.jdbc.update(sql, id, attempt) == 1;
	}

	/**
	 * Completes (or deletes) many leased jobs with one statement, each only if it is still running the
	 * attempt given. Returns the ids that were still ours.
	 */
	public List<Long> completeLeasedMany(List<Long> ids, List<Integer> attempts, boolean delete) {
		if (ids.isEmpty()) {
			return List.of();
		}
		String sql = delete ? """
				DELETE FROM %1$s j USING unnest(?::bigint[], ?::integer[]) AS d(id, attempt)
				WHERE j.id = d.id AND j.attempt = d.attempt AND j.state = 'running'
				RETURNING j.id""".formatted(this.table) : """
				UPDATE %1$s j SET state = 'completed', finished_at = clock_timestamp(),
				       lease_owner = NULL, lease_until = NULL, last_error = NULL
				FROM unnest(?::bigint[], ?::integer[]) AS d(id, attempt)
				WHERE j.id = d.id AND j.attempt = d.attempt AND j.state = 'running'
				RETURNING j.id""".formatted(this.table);
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(sql);
			ps.setArray(1, idArray(con, ids));
			ps.setArray(2, con.createArrayOf("int4", attempts.toArray(new Integer[0])));
			return ps;
		}, (rs, i) -> rs.getLong(1));
	}

	/**
	 * Records a failed attempt of a job claimed with {@link #claimLocked}: counts it and either
	 * schedules the next attempt after {@code retryDelay} or fails the job for good.
	 */
	public void recordLockedFailure(long id, JobState next, Duration retryDelay, String error) {
		this.jdbc.update("UPDATE " + this.table + " SET attempt = attempt + 1, state = ?, "
				+ "run_at = CASE WHEN ? = 'scheduled' THEN clock_timestamp() + ? * interval '1 millisecond' ELSE run_at END, "
				+ "started_at = now(), finished_at = CASE WHEN ? = 'failed' THEN clock_timestamp() END, last_error = ? "
				+ "WHERE id = ?", next.sqlValue(), next.sqlValue(), retryDelay.toMillis(), next.sqlValue(), error, id);
	}

	/**
	 * Records a failed attempt of a leased job if it is still running that attempt.
	 * @return whether the job was still ours to update
	 */
	public boolean recordLeasedFailure(long id, int attempt, JobState next, Duration retryDelay, String error) {
		return this.jdbc.update("UPDATE " + this.table + " SET state = ?, "
				+ "run_at = CASE WHEN ? = 'scheduled' THEN clock_timestamp() + ? * interval '1 millisecond' ELSE run_at END, "
				+ "finished_at = CASE WHEN ? = 'failed' THEN clock_timestamp() END, last_error = ?, "
				+ "lease_owner = NULL, lease_until = NULL "
				+ "WHERE id = ? AND attempt = ? AND state = 'running'", next.sqlValue(), next.sqlValue(),
				retryDelay.toMillis(), next.sqlValue(), error, id, attempt) == 1;
	}

	/**
	 * Extends the leases {@code owner} holds on the given running jobs; returns the ids whose lease it
	 * extended. A job missing from the result is no longer this owner's (finished, released, or rescued
	 * after its lease expired).
	 */
	public Set<Long> extendLeases(String owner, Collection<Long> ids, Duration lease) {
		if (ids.isEmpty()) {
			return Set.of();
		}
		List<Long> extended = this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement("UPDATE " + this.table
					+ " SET lease_until = clock_timestamp() + ? * interval '1 millisecond'"
					+ " WHERE id = ANY(?) AND state = 'running' AND lease_owner = ? RETURNING id");
			ps.setLong(1, lease.toMillis());
			ps.setArray(2, idArray(con, ids));
			ps.setString(3, owner);
			return ps;
		}, (rs, row) -> rs.getLong(1));
		return new HashSet<>(extended);
	}

	/**
	 * Returns running jobs that {@code owner} could not finish (shutdown) to the queue without using
	 * an attempt.
	 */
	public int releaseLeased(String owner, Collection<Long> ids) {
		if (ids.isEmpty()) {
			return 0;
		}
		return this.jdbc.update((Connection con) -> {
			PreparedStatement ps = con.prepareStatement("UPDATE " + this.table
					+ " SET state = 'available', attempt = attempt - 1, started_at = NULL,"
					+ " lease_owner = NULL, lease_until = NULL"
					+ " WHERE id = ANY(?) AND state = 'running' AND lease_owner = ?");
			ps.setArray(1, idArray(con, ids));
			ps.setString(2, owner);
			return ps;
		});
	}

	/**
	 * Returns running jobs whose lease expired (their worker died or hung) to the queue, or fails
	 * those that have used their last attempt. The expired attempt counts.
	 */
	public List<RescuedJob> rescueExpired(int limit) {
		return this.jdbc.query("""
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
				    lease_owner = NULL, lease_until = NULL
				FROM expired
				WHERE j.id = expired.id
				RETURNING j.public_id, j.kind, j.queue, j.attempt, j.state
				""".formatted(this.table),
				(rs, i) -> new RescuedJob(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3), rs.getInt(4),
						JobState.valueOf(rs.getString(5).toUpperCase(java.util.Locale.ROOT))),
				limit);
	}

	/**
	 * Makes scheduled jobs whose run-at has passed available to the pollers, notifying their queues
	 * when notifications are on. Returns how many were promoted.
	 */
	public int promoteDue(int limit) {
		List<Integer> counts = this.jdbc.query("""
				WITH promoted AS (
				    UPDATE %1$s SET state = 'available'
				    WHERE id IN (SELECT id FROM %1$s
				                 WHERE state = 'scheduled' AND run_at <= now()
				                 ORDER BY run_at
				                 LIMIT ?
				                 FOR UPDATE SKIP LOCKED)
				    RETURNING queue)
				SELECT count(*)::int, %2$s FROM promoted GROUP BY queue
				""".formatted(this.table, this.notify ? "pg_notify('" + channel() + "', queue)" : "NULL"),
				(rs, i) -> rs.getInt(1), limit);
		return counts.stream().mapToInt(Integer::intValue).sum();
	}

	/**
	 * Prunes finished jobs past their retention in batches of {@code batchSize}, each batch its own
	 * short transaction, if no other instance is pruning this schema: the cleaner's advisory lock is
	 * held by one pooled connection for the whole run (and released if that session dies). Returns
	 * how many rows were deleted, or -1 when another instance holds the lock.
	 */
	public int pruneAllFinished(Duration completedRetention, Duration failedRetention, int batchSize) {
		Integer deleted = this.jdbc.execute((Connection con) -> {
			String key = "pgqueue.cleaner:" + this.schema.value();
			if (!con.getAutoCommit()) {
				throw new IllegalStateException("The cleaner must not run inside a transaction");
			}
			try (PreparedStatement lock = con.prepareStatement("SELECT pg_try_advisory_lock(hashtext(?))")) {
				lock.setString(1, key);
				try (ResultSet rs = lock.executeQuery()) {
					if (!rs.next() || !rs.getBoolean(1)) {
						return -1;
					}
				}
			}
			try {
				return pruneOnConnection(con, JobState.COMPLETED, completedRetention, batchSize)
						+ pruneOnConnection(con, JobState.FAILED, failedRetention, batchSize);
			}
			finally {
				try (PreparedStatement unlock = con.prepareStatement("SELECT pg_advisory_unlock(hashtext(?))")) {
					unlock.setString(1, key);
					unlock.execute();
				}
			}
		});
		return (deleted != null) ? deleted : 0;
	}

	private int pruneOnConnection(Connection con, JobState state, Duration retention, int batchSize)
			throws SQLException {
		int total = 0;
		try (PreparedStatement delete = con.prepareStatement(pruneSql())) {
			while (true) {
				delete.setString(1, state.sqlValue());
				delete.setLong(2, retention.toMillis());
				delete.setInt(3, batchSize);
				int deleted = delete.executeUpdate();
				total += deleted;
				if (deleted < batchSize) {
					return total;
				}
			}
		}
	}

	private String pruneSql() {
		return """
				DELETE FROM %1$s
				WHERE id IN (SELECT id FROM %1$s
				             WHERE state = ? AND finished_at < clock_timestamp() - ? * interval '1 millisecond'
				             LIMIT ?)
				""".formatted(this.table);
	}

	/**
	 * Finds due jobs that have waited longer than {@code olderThan} in the given queues with a kind that
	 * has no listener for that queue in this application, so no poller here will ever claim them.
	 * Each row: queue, kind, how many, and how long the oldest has waited.
	 */
	public List<UnclaimedKind> unclaimedKinds(Map<String, String[]> kindsByQueue, Duration olderThan) {
		if (kindsByQueue.isEmpty()) {
			return List.of();
		}
		List<String> queues = new java.util.ArrayList<>();
		List<String> kinds = new java.util.ArrayList<>();
		kindsByQueue.forEach((queue, queueKinds) -> {
			for (String kind : queueKinds) {
				queues.add(queue);
				kinds.add(kind);
			}
		});
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement("""
					SELECT queue, kind, count(*), extract(epoch FROM clock_timestamp() - min(run_at))
					FROM %s
					WHERE state = 'available' AND queue = ANY(?)
					  AND run_at < clock_timestamp() - ? * interval '1 millisecond'
					  AND (queue, kind) NOT IN (SELECT * FROM unnest(?::text[], ?::text[]))
					GROUP BY queue, kind
					""".formatted(this.table));
			ps.setArray(1, con.createArrayOf("text", kindsByQueue.keySet().toArray(new String[0])));
			ps.setLong(2, olderThan.toMillis());
			ps.setArray(3, con.createArrayOf("text", queues.toArray(new String[0])));
			ps.setArray(4, con.createArrayOf("text", kinds.toArray(new String[0])));
			return ps;
		}, (rs, i) -> new UnclaimedKind(rs.getString(1), rs.getString(2), rs.getLong(3),
				Duration.ofMillis(Math.round(rs.getDouble(4) * 1000))));
	}

	/** Reads depth, age of the oldest due job, scheduled and running counts per queue. */
	public Map<String, QueueStats> stats() {
		Map<String, long[]> counts = new HashMap<>();
		Map<String, Double> ages = new HashMap<>();
		this.jdbc.query("""
				SELECT queue, state, count(*),
				       extract(epoch FROM clock_timestamp() - min(run_at)) AS oldest_age
				FROM %s
				WHERE state IN ('available', 'scheduled', 'running')
				GROUP BY queue, state
				""".formatted(this.table), (ResultSet rs) -> {
			String queue = rs.getString(1);
			long[] c = counts.computeIfAbsent(queue, (q) -> new long[3]);
			switch (rs.getString(2)) {
				case "available" -> {
					c[0] = rs.getLong(3);
					ages.put(queue, Math.max(0.0, rs.getDouble(4)));
				}
				case "scheduled" -> c[1] = rs.getLong(3);
				default -> c[2] = rs.getLong(3);
			}
		});
		Map<String, QueueStats> result = new HashMap<>();
		counts.forEach((queue, c) -> result.put(queue, new QueueStats(queue, c[0], c[1], c[2],
				Duration.ofMillis(Math.round(ages.getOrDefault(queue, 0.0) * 1000)))));
		return result;
	}

	private int updateWithIds(String sql, Collection<Long> ids) {
		return this.jdbc.update((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(sql);
			ps.setArray(1, idArray(con, ids));
			return ps;
		});
	}

	private static Array idArray(Connection con, Collection<Long> ids) throws SQLException {
		return con.createArrayOf("int8", ids.toArray(new Long[0]));
	}

	private static RowMapper<ClaimedJob> claimedMapper(boolean attemptCounted) {
		return (rs, i) -> {
			int stored = rs.getInt("attempt");
			return ClaimedJob.of(rs.getLong("id"), rs.getObject("public_id", UUID.class), rs.getString("kind"),
					rs.getString("queue"), stored, attemptCounted ? stored : stored + 1, rs.getInt("max_attempts"),
					rs.getInt("priority"), rs.getString("payload"), instant(rs.getTimestamp("run_at")),
					instant(rs.getTimestamp("created_at")));
		};
	}

	private static Instant instant(Timestamp timestamp) {
		return (timestamp != null) ? timestamp.toInstant() : null;
	}

	private static Timestamp timestamp(Instant instant) {
		return (instant != null) ? Timestamp.from(instant) : null;
	}

	private static Long delayMicros(Duration delay) {
		if (delay == null) {
			return null;
		}
		// Saturate: a delay of centuries is still "far in the future" and must not overflow a timestamp.
		Duration capped = (delay.compareTo(MAX_DELAY) > 0) ? MAX_DELAY : delay;
		return capped.getSeconds() * 1_000_000 + capped.getNano() / 1_000;
	}

	/** Due jobs of a kind that no listener in this application claims from their queue. */
	public record UnclaimedKind(String queue, String kind, long jobs, Duration oldestAge) {
	}

	/** A job the rescuer returned to the queue or failed. */
	public record RescuedJob(UUID publicId, String kind, String queue, int attempt, JobState state) {
	}

}
