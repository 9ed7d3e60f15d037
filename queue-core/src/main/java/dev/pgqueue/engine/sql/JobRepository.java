package dev.pgqueue.engine.sql;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import javax.sql.DataSource;

import dev.pgqueue.JobState;
import dev.pgqueue.engine.job.AttemptEnd;
import dev.pgqueue.engine.job.ClaimStart;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.job.NewJob;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.PreparedStatementCreator;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.support.TransactionSynchronizationManager;

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

	private static final RowCallbackHandler IGNORE_ROWS = (rs) -> {
	};


	private final JdbcTemplate jdbc;

	private final SchemaName schema;

	private final JobStatements sql;

	private final boolean notify;

	/** A repository that does not notify listeners of new jobs. */
	public JobRepository(JdbcTemplate jdbc, SchemaName schema) {
		this(jdbc, schema, false);
	}

	/**
	 * @param notify whether notifications are on: inserts of due jobs may send one on
	 * {@link #channel()} (delivered when the inserting transaction commits) naming their queue
	 */
	public JobRepository(JdbcTemplate jdbc, SchemaName schema, boolean notify) {
		this.jdbc = jdbc;
		this.schema = schema;
		this.notify = notify;
		this.sql = new JobStatements(schema);
	}

	/** The template every statement runs on. */
	public JdbcTemplate jdbcTemplate() {
		return this.jdbc;
	}

	public SchemaName schema() {
		return this.schema;
	}

	/**
	 * The PostgreSQL connection of the caller's transaction, the one every statement of it runs on,
	 * or null when none can be reached (no transaction is bound to this repository's data source, or
	 * its connection is not PostgreSQL's or is closed). A transactional batch keeps it to cancel the
	 * statement of a listener that runs past its time limit: {@link PGConnection#cancelQuery()} may
	 * be called from any thread, since the cancel request travels on a connection of its own.
	 */
	public @Nullable PGConnection transactionConnection() {
		DataSource dataSource = this.jdbc.getDataSource();
		Object holder = (dataSource != null) ? TransactionSynchronizationManager.getResource(dataSource) : null;
		if (!(holder instanceof ConnectionHolder connectionHolder)) {
			return null;
		}
		try {
			Connection connection = connectionHolder.getConnection();
			return connection.isWrapperFor(PGConnection.class) ? connection.unwrap(PGConnection.class) : null;
		}
		catch (SQLException | IllegalStateException ex) {
			return null;
		}
	}

	/** The notification channel of this schema's jobs table. */
	public String channel() {
		return this.sql.channel;
	}

	/** Whether notifications are on for this schema's jobs table. */
	public boolean notifies() {
		return this.notify;
	}

	/**
	 * Inserts one job, in the caller's transaction if there is one.
	 * @param notify whether the same statement notifies the job's queue, if the job is due now (by
	 * {@link NewJob#isDueNow()}) and notifications are on
	 */
	public void insert(NewJob job, boolean notify) {
		Object[] row = { job.publicId(), job.kind(), job.queue(), job.payloadJson(), job.priority(),
				timestamp(job.runAt()), delayMicros(job.delay()), job.maxAttempts(), delayMicros(job.jitter()),
				job.bucket(), job.concurrencyKey(), TraceContextColumn.write(job.traceContext()), job.tagsLiteral(),
				job.rateWeight() };
		if (notify && this.notify && job.isDueNow()) {
			Object[] arguments = Arrays.copyOf(row, row.length + 1);
			arguments[row.length] = job.queue();
			this.jdbc.query(this.sql.insertOneNotifying, IGNORE_ROWS, arguments);
		}
		else {
			this.jdbc.update(this.sql.insertOne, row);
		}
	}

	/**
	 * Inserts many jobs with one statement, in the caller's transaction if there is one. Jobs that all
	 * leave the optional columns to their defaults go in through a statement that carries only the
	 * columns they have.
	 * @param notify whether the same statement notifies the queues that received jobs due now (by
	 * {@link NewJob#isDueNow()}), if notifications are on
	 */
	public void insertAll(List<NewJob> jobs, boolean notify) {
		if (jobs.isEmpty()) {
			return;
		}
		NewJobColumns columns = new NewJobColumns(jobs);
		String[] dueQueues = (notify && this.notify)
				? jobs.stream().filter(NewJob::isDueNow).map(NewJob::queue).distinct().toArray(String[]::new)
				: new String[0];
		boolean notifying = dueQueues.length > 0;
		String sql = columns.plain() ? (notifying ? this.sql.insertManyPlainNotifying : this.sql.insertManyPlain)
				: (notifying ? this.sql.insertManyNotifying : this.sql.insertMany);
		PreparedStatementCreator statement = (Connection con) -> {
			PreparedStatement ps = con.prepareStatement(sql);
			if (columns.plain()) {
				columns.bindPlain(con, ps);
			}
			else {
				columns.bind(con, ps);
			}
			if (notifying) {
				ps.setArray((columns.plain() ? NewJobColumns.PLAIN_COUNT : NewJobColumns.COUNT) + 1,
						con.createArrayOf("text", dueQueues));
			}
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
		notify(queues, this.sql.notifyQueues);
	}

	/**
	 * Notifies the queues on {@link #channel()} in a transaction of their own, whose commit does not
	 * wait for the WAL to reach disk (notifications are hints). Only outside any transaction of the
	 * caller's: inside one, the notifications would wait for its commit, which this would make
	 * asynchronous.
	 * @throws IllegalStateException inside a transaction of the caller's
	 */
	public void notifyQueuesAlone(Collection<String> queues) {
		if (TransactionSynchronizationManager.isActualTransactionActive()) {
			throw new IllegalStateException("Notifications of their own are sent outside any transaction");
		}
		notify(queues, this.sql.notifyQueuesAlone);
	}

	private void notify(Collection<String> queues, String sql) {
		if (queues.isEmpty()) {
			return;
		}
		String[] names = queues.toArray(String[]::new);
		this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(sql);
			ps.setString(1, channel());
			ps.setArray(2, con.createArrayOf("text", names));
			return ps;
		}, IGNORE_ROWS);
	}

	/**
	 * Locks up to {@code limit} due jobs of the queue for the caller's transaction, skipping rows other
	 * transactions hold, reading the claim index from {@code start}. The rows stay available; the
	 * caller records each outcome before committing.
	 */
	public List<ClaimedJob> claimLocked(String queue, String[] kinds, int limit, ClaimStart start) {
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(start.isSweep() ? this.sql.claimLocked
					: start.isBuckets() ? this.sql.claimLockedInBuckets : this.sql.claimLockedFrom);
			bindClaim(con, ps, start, queue, kinds, limit);
			return ps;
		}, claimedMapper(false));
	}

	/**
	 * Claims up to {@code limit} due jobs of the queue and commits them as running under a lease held
	 * by {@code owner}, counting the attempt, reading the claim index from {@code start}.
	 */
	public List<ClaimedJob> claimLeased(String queue, String[] kinds, int limit, String owner, Duration lease,
			ClaimStart start) {
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(start.isSweep() ? this.sql.claimLeased
					: start.isBuckets() ? this.sql.claimLeasedInBuckets : this.sql.claimLeasedFrom);
			int next = bindClaim(con, ps, start, queue, kinds, limit);
			ps.setString(next, owner);
			ps.setLong(next + 1, lease.toMillis());
			ps.setObject(next + 2, timestamp(start.startedAt()));
			return ps;
		}, claimedMapper(true));
	}

	/** {@link #claimLocked(String, String[], int, ClaimStart)} reading the claim index from its start. */
	public List<ClaimedJob> claimLocked(String queue, String[] kinds, int limit) {
		return claimLocked(queue, kinds, limit, ClaimStart.SWEEP);
	}

	/**
	 * {@link #claimLeased(String, String[], int, String, Duration, ClaimStart)} reading the claim
	 * index from its start.
	 */
	public List<ClaimedJob> claimLeased(String queue, String[] kinds, int limit, String owner, Duration lease) {
		return claimLeased(queue, kinds, limit, owner, lease, ClaimStart.SWEEP);
	}

	/**
	 * Binds what every claim statement starts with: in buckets, their array; from floors, the four
	 * arrays of their ranges; then queue, kinds and the limit (twice, per bucket or level and in all, unless sweeping).
	 * Returns the next parameter's index.
	 */
	private static int bindClaim(Connection con, PreparedStatement ps, ClaimStart start, String queue,
			String[] kinds, int limit) throws SQLException {
		int next = 1;
		if (start.isBuckets()) {
			Integer[] buckets = new Integer[start.buckets().length];
			for (int i = 0; i < buckets.length; i++) {
				buckets[i] = start.buckets()[i];
			}
			ps.setArray(next++, con.createArrayOf("int2", buckets));
		}
		else if (!start.isSweep()) {
			Integer[] priorities = new Integer[start.priorities().length];
			Timestamp[] fromRunAts = new Timestamp[priorities.length];
			Long[] fromIds = new Long[priorities.length];
			Timestamp[] untilRunAts = new Timestamp[priorities.length];
			for (int i = 0; i < priorities.length; i++) {
				priorities[i] = start.priorities()[i];
				fromRunAts[i] = Timestamp.from(start.fromRunAts()[i]);
				fromIds[i] = start.fromIds()[i];
				Instant until = start.untilRunAts()[i];
				untilRunAts[i] = (until != null) ? Timestamp.from(until) : null;
			}
			ps.setArray(next++, con.createArrayOf("int2", priorities));
			ps.setArray(next++, con.createArrayOf("timestamptz", fromRunAts));
			ps.setArray(next++, con.createArrayOf("int8", fromIds));
			ps.setArray(next++, con.createArrayOf("timestamptz", untilRunAts));
		}
		ps.setString(next++, queue);
		ps.setArray(next++, con.createArrayOf("text", kinds));
		ps.setInt(next++, limit);
		if (!start.isSweep()) {
			ps.setInt(next++, limit);
		}
		return next;
	}

	/**
	 * Locks the job with this public id for the caller's transaction, due or scheduled, if it is of
	 * one of the kinds and no other transaction holds it; empty otherwise. The caller records its
	 * outcome before committing, as after {@link #claimLocked}.
	 */
	public List<ClaimedJob> claimLockedById(UUID publicId, String[] kinds) {
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.claimLockedById);
			ps.setObject(1, publicId);
			ps.setArray(2, con.createArrayOf("text", kinds));
			return ps;
		}, claimedMapper(false));
	}

	/**
	 * Claims the job with this public id, due or scheduled, as running under a lease held by
	 * {@code owner}, counting the attempt, if it is of one of the kinds and no other transaction holds
	 * it; empty otherwise.
	 */
	public List<ClaimedJob> claimLeasedById(UUID publicId, String[] kinds, String owner, Duration lease) {
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.claimLeasedById);
			ps.setObject(1, publicId);
			ps.setArray(2, con.createArrayOf("text", kinds));
			ps.setString(3, owner);
			ps.setLong(4, lease.toMillis());
			ps.setObject(5, null);
			return ps;
		}, claimedMapper(true));
	}

	/** Completes jobs claimed with {@link #claimLocked} in the same transaction, or deletes them. */
	public int completeLocked(Collection<Long> ids, boolean delete) {
		return completeLocked(ids, delete, null);
	}

	/**
	 * Completes jobs claimed with {@link #claimLocked} in the same transaction, or deletes them,
	 * recording {@code startedAt} as their start (the transaction's start when null).
	 */
	public int completeLocked(Collection<Long> ids, boolean delete, @Nullable Instant startedAt) {
		if (ids.isEmpty()) {
			return 0;
		}
		if (delete) {
			return updateWithIds(this.sql.deleteLocked, ids);
		}
		return this.jdbc.update((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.completeLocked);
			ps.setObject(1, timestamp(startedAt));
			ps.setArray(2, idArray(con, ids));
			return ps;
		});
	}

	/**
	 * Completes jobs claimed with {@link #claimLocked} in the same transaction, storing their outputs,
	 * or deletes them (outputs and all).
	 * @param outputs each job's output as JSON text (or null), in the order of {@code ids}; null when
	 * none has one, which costs nothing more than a completion without
	 */
	public int completeLocked(List<Long> ids, @Nullable List<@Nullable String> outputs, boolean delete) {
		return completeLocked(ids, outputs, delete, null);
	}

	/**
	 * As {@link #completeLocked(List, List, boolean)}, recording {@code startedAt} as the jobs' start
	 * (the transaction's start when null).
	 */
	public int completeLocked(List<Long> ids, @Nullable List<@Nullable String> outputs, boolean delete,
			@Nullable Instant startedAt) {
		if (outputs == null || delete || ids.isEmpty()) {
			return completeLocked(ids, delete, startedAt);
		}
		return this.jdbc.update((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.completeLockedWithOutput);
			ps.setObject(1, timestamp(startedAt));
			ps.setArray(2, idArray(con, ids));
			ps.setArray(3, con.createArrayOf("text", outputs.toArray(new String[0])));
			return ps;
		});
	}

	/**
	 * Completes (or deletes) many leased jobs with one statement, each only if it is still running the
	 * attempt given. Returns the ids that were still ours.
	 */
	public List<Long> completeLeasedMany(List<Long> ids, List<Integer> attempts, boolean delete) {
		return completeLeasedMany(ids, attempts, null, delete);
	}

	/**
	 * Completes (or deletes) many leased jobs with one statement, each only if it is still running the
	 * attempt given, storing the outputs given. Returns the ids that were still ours.
	 * @param outputs each job's output as JSON text (or null), in the order of {@code ids}; null, or
	 * all null, for none
	 */
	public List<Long> completeLeasedMany(List<Long> ids, List<Integer> attempts,
			@Nullable List<@Nullable String> outputs, boolean delete) {
		if (ids.isEmpty()) {
			return List.of();
		}
		boolean withOutput = !delete && outputs != null && outputs.stream().anyMatch(java.util.Objects::nonNull);
		String sql = delete ? this.sql.deleteLeased
				: withOutput ? this.sql.completeLeasedWithOutput : this.sql.completeLeased;
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(sql);
			ps.setArray(1, idArray(con, ids));
			ps.setArray(2, con.createArrayOf("int4", attempts.toArray(new Integer[0])));
			if (withOutput) {
				ps.setArray(3, con.createArrayOf("text", outputs.toArray(new String[0])));
			}
			return ps;
		}, (rs, i) -> rs.getLong(1));
	}

	/**
	 * Records an attempt that did not complete, of a job claimed with {@link #claimLocked}: counts it
	 * (a snooze excepted) and either schedules the next run or fails the job, adding the attempt to
	 * the job's history, of which it keeps the newest {@code keep} entries.
	 */
	public void recordLockedFailure(long id, AttemptEnd end, int keep) {
		this.jdbc.update(this.sql.recordLockedFailure, endArguments(end, keep, id), endTypes(Types.BIGINT));
	}

	/**
	 * Records an attempt that did not complete, of a job that is no longer locked, if it is still
	 * available with the stored attempt it had when it was claimed; it waits for a claimer that locked
	 * the row meanwhile to let go (one that finds the worker's advisory lock held does so at once), and
	 * a job that has moved on since is left as it is.
	 * @return whether the attempt was recorded
	 */
	public boolean recordFailureIfAvailable(long id, int storedAttempt, AttemptEnd end, int keep) {
		return this.jdbc.update(this.sql.recordFailureIfAvailable, endArguments(end, keep, id, storedAttempt),
				endTypes(Types.BIGINT, Types.INTEGER)) == 1;
	}

	/**
	 * Records an attempt of a leased job that did not complete, if the job is still running that
	 * attempt.
	 * @return whether the job was still ours to update
	 */
	public boolean recordLeasedFailure(long id, int attempt, AttemptEnd end, int keep) {
		return this.jdbc.update(this.sql.recordLeasedFailure, endArguments(end, keep, id, attempt),
				endTypes(Types.BIGINT, Types.INTEGER)) == 1;
	}

	/**
	 * The values of {@link JobStatements#ATTEMPT_END}'s parameters, then {@code more}. Bound with their
	 * types (see {@link #endTypes}), so that a null costs no round trip to ask the server its type.
	 */
	private static Object[] endArguments(AttemptEnd end, int keep, Object... more) {
		Object[] head = { end.next().sqlValue(), end.delay().toMillis(), end.lastError(), end.snoozed() ? 0 : 1,
				end.snoozed() ? 1 : 0, end.attempt(), end.outcome(), end.errorClass(), end.message(), keep,
				(end.startedAt() != null) ? OffsetDateTime.ofInstant(end.startedAt(), ZoneOffset.UTC) : null };
		Object[] all = Arrays.copyOf(head, head.length + more.length);
		System.arraycopy(more, 0, all, head.length, more.length);
		return all;
	}

	/** The SQL types of {@link #endArguments}, then {@code more}. */
	private static int[] endTypes(int... more) {
		int[] head = { Types.VARCHAR, Types.BIGINT, Types.VARCHAR, Types.INTEGER, Types.INTEGER, Types.INTEGER,
				Types.VARCHAR, Types.VARCHAR, Types.VARCHAR, Types.INTEGER, Types.TIMESTAMP_WITH_TIMEZONE };
		int[] all = Arrays.copyOf(head, head.length + more.length);
		System.arraycopy(more, 0, all, head.length, more.length);
		return all;
	}

	/**
	 * Extends the leases {@code owner} holds on the given running jobs, without waiting for a job
	 * another transaction has locked. A job missing from both sets of the result is no longer this
	 * owner's (finished, released, or rescued after its lease expired).
	 *
	 * <p>Why not wait: the completer writes outcomes of the same jobs in batches of up to a thousand,
	 * in the order they finished, while an extension would lock them in index order. Two statements
	 * that lock many of the same rows in different orders deadlock, and PostgreSQL only notices after
	 * {@code deadlock_timeout} (1 s by default): seen on a busy 2-core machine, the keeper lost a
	 * second or more each time, leases of 3 s ran out, and 2 000 jobs were rescued and run again.
	 * A job the completer holds is being finished; one a rescuer holds is lost anyway.
	 */
	public LeaseExtension extendLeases(String owner, Collection<Long> ids, Duration lease) {
		if (ids.isEmpty()) {
			return new LeaseExtension(Set.of(), Set.of());
		}
		Set<Long> extended = new HashSet<>();
		Set<Long> skipped = new HashSet<>();
		this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.extendLeases);
			ps.setArray(1, idArray(con, ids));
			ps.setString(2, owner);
			ps.setLong(3, lease.toMillis());
			return ps;
		}, (ResultSet rs) -> {
			(rs.getBoolean(2) ? extended : skipped).add(rs.getLong(1));
		});
		return new LeaseExtension(extended, skipped);
	}

	/**
	 * What an extension of leases found.
	 *
	 * @param extended the jobs whose lease it extended
	 * @param skipped jobs still the owner's that another transaction had locked, left as they were
	 */
	public record LeaseExtension(Set<Long> extended, Set<Long> skipped) {
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
			PreparedStatement ps = con.prepareStatement(this.sql.releaseLeased);
			ps.setArray(1, idArray(con, ids));
			ps.setString(2, owner);
			return ps;
		});
	}

	/**
	 * Counts, without locking, due jobs of the queue's kinds that other transactions hold, among the
	 * first {@code limit} due jobs other than {@code own} (a short claim's jobs).
	 */
	public int countHeldElsewhere(String queue, String[] kinds, Long[] own, int limit) {
		Integer held = this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.countHeldElsewhere);
			ps.setString(1, queue);
			ps.setArray(2, con.createArrayOf("text", kinds));
			ps.setArray(3, con.createArrayOf("int8", own));
			ps.setInt(4, limit);
			return ps;
		}, (ResultSet rs) -> rs.next() ? rs.getInt(1) : 0);
		return (held != null) ? held : 0;
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

	/**
	 * Maps a row of {@link JobStatements#CLAIMED_COLUMNS}. This runs once per job: columns are read by
	 * position (by name, the driver looks each one up in a map) and timestamps as
	 * {@link OffsetDateTime} (as {@link Timestamp}, the driver goes through a {@code Calendar}). A
	 * job enqueued without tracing has no trace context, which costs a null column.
	 */
	static RowMapper<ClaimedJob> claimedMapper(boolean attemptCounted) {
		return (rs, i) -> {
			int stored = rs.getInt(5);
			return ClaimedJob.of(rs.getLong(1), rs.getObject(2, UUID.class), rs.getString(3), rs.getString(4), stored,
					attemptCounted ? stored : stored + 1, rs.getInt(6), rs.getInt(7), rs.getString(8),
					instant(rs.getObject(9, OffsetDateTime.class)), instant(rs.getObject(10, OffsetDateTime.class)),
					instant(rs.getObject(11, OffsetDateTime.class)), TraceContextColumn.read(rs.getString(12)),
					rs.getInt(13), rs.getObject(14, Integer.class));
		};
	}

	private static @Nullable Instant instant(@Nullable OffsetDateTime timestamp) {
		return (timestamp != null) ? timestamp.toInstant() : null;
	}

	static @Nullable Timestamp timestamp(@Nullable Instant instant) {
		return NewJobColumns.timestamp(instant);
	}

	static @Nullable Long delayMicros(@Nullable Duration delay) {
		return NewJobColumns.delayMicros(delay);
	}

}
