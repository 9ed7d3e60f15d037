package dev.pgqueue.engine.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.JobState;
import dev.pgqueue.metrics.QueueStats;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Runs the background services' statements ({@link MaintenanceStatements}): short statements on
 * timers, each its own transaction, that keep the jobs table healthy and read its signals.
 */
public class MaintenanceRepository {

	private final JdbcTemplate jdbc;

	private final MaintenanceStatements sql;

	private final String cleanerLock;

	/**
	 * @param notify whether promotions notify the queues of the jobs they made available
	 */
	public MaintenanceRepository(JdbcTemplate jdbc, SchemaName schema, boolean notify) {
		this.jdbc = jdbc;
		this.sql = new MaintenanceStatements(schema, notify);
		this.cleanerLock = "pgqueue.cleaner:" + schema.value();
	}

	/**
	 * Makes scheduled jobs whose run-at has passed available to the pollers, notifying their queues
	 * when notifications are on. Returns how many were promoted.
	 */
	public int promoteDue(int limit) {
		List<Integer> counts = this.jdbc.query(this.sql.promoteDue, (rs, i) -> rs.getInt(1), limit);
		return counts.stream().mapToInt(Integer::intValue).sum();
	}

	/**
	 * Returns running jobs whose lease expired (their worker died or hung) to the queue, or fails
	 * those that have used their last attempt. The expired attempt counts, and enters each job's
	 * history, of which the newest {@code keep} entries are kept.
	 */
	public List<RescuedJob> rescueExpired(int limit, int keep) {
		return this.jdbc.query(this.sql.rescueExpired,
				(rs, i) -> new RescuedJob(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3), rs.getInt(4),
						JobState.valueOf(rs.getString(5).toUpperCase(Locale.ROOT))),
				limit, keep, keep);
	}

	/**
	 * Prunes finished jobs past their retention in batches of {@code batchSize}, each batch one
	 * statement in its own transaction that takes the cleaner's transaction-scoped advisory lock, so
	 * that one instance at a time deletes. Returns how many rows were deleted, or -1 when another
	 * instance held the lock before anything was deleted.
	 *
	 * <p>An instance that finds the lock taken stops for good, even half-way: the instance that took
	 * it goes on to the end, completed, failed and cancelled jobs alike. So whichever instance took the lock last
	 * finishes the work; if instances stopped only the current state when they lost a turn, two of
	 * them could each leave the other's state half-pruned.
	 */
	public int pruneAllFinished(Duration completedRetention, Duration failedRetention, int batchSize) {
		return pruneAllFinished(completedRetention, failedRetention, batchSize, false);
	}

	/**
	 * As {@link #pruneAllFinished(Duration, Duration, int)}; with {@code partitioned}, completed jobs
	 * are deleted only from the default partition, the time partitions being dropped whole by
	 * {@link #changeCompletedPartitions}.
	 */
	public int pruneAllFinished(Duration completedRetention, Duration failedRetention, int batchSize,
			boolean partitioned) {
		Pruned completed = prune(partitioned ? this.sql.pruneCompletedDefault : this.sql.pruneFinished,
				JobState.COMPLETED, completedRetention, batchSize);
		if (completed.lostTurn()) {
			return (completed.deleted() > 0) ? completed.deleted() : -1;
		}
		Pruned failed = prune(this.sql.pruneFinished, JobState.FAILED, failedRetention, batchSize);
		if (failed.lostTurn()) {
			return completed.deleted() + failed.deleted();
		}
		// Cancelled jobs are kept as long as failed ones: both are what an operator looks back at.
		Pruned cancelled = prune(this.sql.pruneFinished, JobState.CANCELLED, failedRetention, batchSize);
		return completed.deleted() + failed.deleted() + cancelled.deleted();
	}

	/** Prunes one state until a batch comes back short, or until another instance holds the lock. */
	private Pruned prune(String statement, JobState state, Duration retention, int batchSize) {
		int total = 0;
		while (true) {
			Pruned batch = this.jdbc.queryForObject(statement,
					(rs, i) -> new Pruned(rs.getInt(2), !rs.getBoolean(1)), this.cleanerLock, state.sqlValue(),
					retention.toMillis(), batchSize);
			if (batch.lostTurn()) {
				return new Pruned(total, true);
			}
			total += batch.deleted();
			if (batch.deleted() < batchSize) {
				return new Pruned(total, false);
			}
		}
	}

	/**
	 * Changes the time partitions of completed jobs as the planner says, given those there are and the
	 * database's clock, in one transaction that first takes the cleaner's advisory lock (so that one
	 * instance at a time reads and changes them) and waits at most a second for a table's lock (a long
	 * transaction that reads finished jobs then delays the change to the next pass, not every
	 * completion behind it). Before any change it locks the finished jobs' table above, so that its
	 * locks are taken in the order a statement on the whole table takes them. Creating and dropping a
	 * partition need the table's owner: a role that is not changes nothing.
	 */
	public PartitionPass changeCompletedPartitions(
			java.util.function.BiFunction<List<TimePartition>, Instant, PartitionChanges> planner) {
		return this.jdbc.execute((Connection con) -> {
			boolean autoCommit = con.getAutoCommit();
			con.setAutoCommit(false);
			try (java.sql.Statement ddl = con.createStatement()) {
				PartitionPass pass;
				if (!queryBoolean(con, this.sql.mayKeepPartitions, null)) {
					pass = new PartitionPass(PartitionPass.Status.NOT_OWNER, PartitionChanges.NONE);
				}
				else if (!queryBoolean(con, this.sql.tryCleanerLock, this.cleanerLock)) {
					pass = new PartitionPass(PartitionPass.Status.LOCKED_ELSEWHERE, PartitionChanges.NONE);
				}
				else {
					ddl.execute(this.sql.partitionLockTimeout);
					PartitionChanges changes = planner.apply(completedPartitions(con), databaseNow(con));
					if (!changes.drop().isEmpty() || !changes.create().isEmpty()) {
						ddl.execute(this.sql.lockFinishedTableFirst);
					}
					for (TimePartition partition : changes.drop()) {
						ddl.execute(this.sql.dropPartition(partition.name()));
					}
					for (TimePartition partition : changes.create()) {
						ddl.execute(this.sql.createPartitionTable(partition.name()));
						ddl.execute(this.sql.attachPartition(partition.name(), partition.from(), partition.to()));
					}
					pass = new PartitionPass(PartitionPass.Status.DONE, changes);
				}
				con.commit();
				return pass;
			}
			catch (java.sql.SQLException | RuntimeException ex) {
				con.rollback();
				throw ex;
			}
			finally {
				con.setAutoCommit(autoCommit);
			}
		});
	}

	/** The time partitions of completed jobs, by lower bound. */
	public List<TimePartition> completedPartitions() {
		return this.jdbc.query(this.sql.completedPartitions, (rs, i) -> partition(rs));
	}

	private List<TimePartition> completedPartitions(Connection con) throws java.sql.SQLException {
		List<TimePartition> partitions = new ArrayList<>();
		try (PreparedStatement read = con.prepareStatement(this.sql.completedPartitions);
				ResultSet rs = read.executeQuery()) {
			while (rs.next()) {
				partitions.add(partition(rs));
			}
		}
		return partitions;
	}

	private Instant databaseNow(Connection con) throws java.sql.SQLException {
		try (PreparedStatement read = con.prepareStatement(this.sql.databaseNow); ResultSet rs = read.executeQuery()) {
			rs.next();
			return rs.getObject(1, OffsetDateTime.class).toInstant();
		}
	}

	private static boolean queryBoolean(Connection con, String sql, @Nullable String parameter)
			throws java.sql.SQLException {
		try (PreparedStatement query = con.prepareStatement(sql)) {
			if (parameter != null) {
				query.setString(1, parameter);
			}
			try (ResultSet rs = query.executeQuery()) {
				return rs.next() && rs.getBoolean(1);
			}
		}
	}

	private static TimePartition partition(ResultSet rs) throws java.sql.SQLException {
		return new TimePartition(rs.getString(1), rs.getObject(2, OffsetDateTime.class).toInstant(),
				rs.getObject(3, OffsetDateTime.class).toInstant());
	}

	/**
	 * A time partition of completed jobs: those that finished from {@code from} (inclusive) to
	 * {@code to} (exclusive).
	 */
	public record TimePartition(String name, Instant from, Instant to) {
	}

	/** Time partitions to drop and to create, in this order. */
	public record PartitionChanges(List<TimePartition> drop, List<TimePartition> create) {

		public static final PartitionChanges NONE = new PartitionChanges(List.of(), List.of());

		public boolean isEmpty() {
			return this.drop.isEmpty() && this.create.isEmpty();
		}

	}

	/** What a pass over the time partitions did. */
	public record PartitionPass(Status status, PartitionChanges changes) {

		public enum Status {

			/** The partitions are as the planner wants them. */
			DONE,

			/** Another instance holds the cleaner's lock: it keeps them this time. */
			LOCKED_ELSEWHERE,

			/** This role does not own the completed jobs' table, so it may not change them. */
			NOT_OWNER

		}

	}

	/** Rows deleted, and whether the last statement found the cleaner's lock held elsewhere. */
	private record Pruned(int deleted, boolean lostTurn) {
	}

	/**
	 * Finds due jobs that have waited longer than {@code olderThan} in the given queues with a kind that
	 * has no listener for that queue in this application, so no poller here will ever claim them.
	 */
	public List<UnclaimedKind> unclaimedKinds(Map<String, String[]> kindsByQueue, Duration olderThan) {
		if (kindsByQueue.isEmpty()) {
			return List.of();
		}
		List<String> queues = new ArrayList<>();
		List<String> kinds = new ArrayList<>();
		kindsByQueue.forEach((queue, queueKinds) -> {
			for (String kind : queueKinds) {
				queues.add(queue);
				kinds.add(kind);
			}
		});
		return this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.unclaimedKinds);
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
		this.jdbc.query(this.sql.stats, (ResultSet rs) -> {
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

	/**
	 * Reads what holds back cleanup the longest in this database, with the next transaction id (so
	 * that the caller can tell how long ago a snapshot was taken when the server does not say).
	 */
	public HorizonReading oldestTransaction() {
		return this.jdbc.queryForObject(this.sql.oldestTransaction, (rs, i) -> {
			boolean held = rs.getObject(5) != null;
			Object seconds = rs.getObject(6);
			return new HorizonReading(rs.getLong(1), held, (Integer) rs.getObject(2), rs.getString(3),
					rs.getString(4), rs.getLong(5),
					(seconds != null) ? Duration.ofMillis(Math.round(((Number) seconds).doubleValue() * 1000)) : null);
		});
	}

	/** Counts the connections of this application (by {@code application_name}) that wait on a lock. */
	public LockWaits lockWaits() {
		return this.jdbc.queryForObject(this.sql.lockWaits, (rs, i) -> new LockWaits(rs.getString(1), rs.getLong(2)));
	}

	/** Reads what decides whether the jobs table gets vacuumed; see {@link VacuumReading}. */
	public VacuumReading vacuumReading() {
		return this.jdbc.queryForObject(this.sql.vacuumHealth, (rs, i) -> {
			OffsetDateTime lastVacuum = rs.getObject(6, OffsetDateTime.class);
			Object seconds = rs.getObject(7);
			return new VacuumReading(rs.getBoolean(1), rs.getBoolean(2), rs.getBoolean(3), rs.getLong(4), rs.getLong(5),
					(lastVacuum != null) ? lastVacuum.toInstant() : null,
					(seconds != null) ? Duration.ofMillis(Math.round(((Number) seconds).doubleValue() * 1000)) : null);
		});
	}

	/**
	 * What {@link #vacuumReading()} read.
	 *
	 * @param serverAutovacuum the server's {@code autovacuum} setting
	 * @param trackCounts the server's {@code track_counts} setting, which autovacuum needs
	 * @param tableAutovacuum whether the jobs table's {@code autovacuum_enabled} is not false
	 * @param deadRows the table's dead rows by its statistics
	 * @param liveRows the table's live rows by its statistics
	 * @param lastVacuum when the table was last vacuumed, by hand or by autovacuum, or {@code null}
	 * @param sinceLastVacuum how long ago that was by the server's clock, or {@code null}
	 */
	public record VacuumReading(boolean serverAutovacuum, boolean trackCounts, boolean tableAutovacuum, long deadRows,
			long liveRows, @Nullable Instant lastVacuum, @Nullable Duration sinceLastVacuum) {
	}

	/** What the planner believes of the jobs table, against what it holds. */
	public TableEstimate tableEstimate() {
		return this.jdbc.queryForObject(this.sql.tableEstimate, (rs, i) -> new TableEstimate(rs.getDouble(1),
				rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getBoolean(5)));
	}

	/** The jobs table's rows, counted up to {@code limit}. */
	public long countRowsUpTo(long limit) {
		Long rows = this.jdbc.queryForObject(this.sql.countRowsUpTo, Long.class, limit);
		return (rows != null) ? rows : 0;
	}

	/** Refreshes the planner's statistics of the jobs table, unless someone else is at it. */
	public void analyzeJobs() {
		this.jdbc.execute(this.sql.analyzeJobs);
	}

	/**
	 * What {@link #tableEstimate()} read.
	 *
	 * @param rows rows at the last {@code VACUUM} or {@code ANALYZE} ({@code -1} if neither ran yet)
	 * @param pagesThen pages at that time
	 * @param pagesNow pages now
	 * @param liveRows live rows now, as the statistics collector counts them (up to a second late)
	 * @param analyzable whether this role may analyze the table
	 */
	public record TableEstimate(double rows, long pagesThen, long pagesNow, long liveRows, boolean analyzable) {

		/**
		 * The rows the planner's plans of the table may have been made for: the density of the last count
		 * over today's pages. With no count yet, or a count of no pages, 0: the planner then estimates
		 * from the table's pages at planning time, and a plan made while the table was empty, such as a
		 * generic plan cached during idle polls, stays in use when jobs land.
		 */
		public double plannerRows() {
			if (this.rows < 0 || this.pagesThen <= 0) {
				return 0;
			}
			return this.rows / this.pagesThen * this.pagesNow;
		}

		/** This estimate with the live rows counted otherwise. */
		public TableEstimate withLiveRows(long counted) {
			return new TableEstimate(this.rows, this.pagesThen, this.pagesNow, counted, this.analyzable);
		}

	}

	/**
	 * What {@link #lockWaits()} read.
	 *
	 * @param applicationName the {@code application_name} counted: the stats reader's own
	 * @param waiting sessions with that name waiting on a lock
	 */
	public record LockWaits(@Nullable String applicationName, long waiting) {

		/** Nothing read yet. */
		public static final LockWaits NONE = new LockWaits(null, 0);

	}

	/**
	 * What {@link #oldestTransaction()} read.
	 *
	 * @param nextXid the next transaction id to be assigned
	 * @param held whether anything holds a snapshot (else the other fields are null or zero)
	 * @param pid the holder's backend, or {@code null}
	 * @param holder the holder's application name, prepared transaction or replication slot
	 * @param state the holder's session state, or {@code null}
	 * @param transactionsSince transaction ids assigned since the holder's snapshot
	 * @param age time since the holder's transaction began, or {@code null} when not visible
	 */
	public record HorizonReading(long nextXid, boolean held, @Nullable Integer pid, @Nullable String holder,
			@Nullable String state, long transactionsSince, @Nullable Duration age) {
	}

	/** Due jobs of a kind that no listener in this application claims from their queue. */
	public record UnclaimedKind(String queue, String kind, long jobs, Duration oldestAge) {
	}

	/** A job the rescuer returned to the queue or failed. */
	public record RescuedJob(UUID publicId, String kind, String queue, int attempt, JobState state) {
	}

}
