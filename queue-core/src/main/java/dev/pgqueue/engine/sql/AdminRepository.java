package dev.pgqueue.engine.sql;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Consumer;

import dev.pgqueue.JobAttempt;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobState;
import dev.pgqueue.RetryOptions;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * Runs the operators' statements ({@link AdminStatements}): reads of jobs, changes of one job under
 * its row lock taken without waiting, retries in bulk, and the pause table.
 */
public class AdminRepository {

	/** SQLSTATE of {@code lock_not_available}: {@code NOWAIT} found the row locked. */
	public static final String LOCK_NOT_AVAILABLE = "55P03";

	private static final int BULK_BATCH = 1_000;

	private final JdbcTemplate jdbc;

	private final AdminStatements sql;

	/**
	 * @param notify whether pauses and resumes notify the other instances
	 */
	public AdminRepository(JdbcTemplate jdbc, SchemaName schema, boolean notify) {
		this.jdbc = jdbc;
		this.sql = new AdminStatements(schema, notify);
	}

	/** The channel on which pauses and resumes are announced, with the queue's name. */
	public String pausesChannel() {
		return this.sql.pausesChannel;
	}

	/** The job with this public id, or {@code null}. */
	public @Nullable Listed find(UUID id, boolean withPayload) {
		List<Listed> found = this.jdbc.query(withPayload ? this.sql.findJobWithPayload : this.sql.findJob,
				detailsMapper(withPayload), id);
		return found.isEmpty() ? null : found.get(0);
	}

	/** The attempts of the job with this public id, oldest first; empty when there is no such job. */
	public List<JobAttempt> attempts(UUID id) {
		return this.jdbc.query(this.sql.jobAttempts,
				(rs, i) -> new JobAttempt(rs.getInt(1), instant(rs.getObject(2, OffsetDateTime.class)),
						instant(rs.getObject(3, OffsetDateTime.class)), JobAttempt.Outcome.fromValue(rs.getString(4)),
						rs.getString(5), rs.getString(6)),
				id, id);
	}

	/** The output of the job with this public id, as JSON text; null when it has none or there is no such job. */
	public @Nullable String output(UUID id) {
		List<String> found = this.jdbc.query(this.sql.jobOutput, (rs, i) -> rs.getString(1), id);
		return found.isEmpty() ? null : found.get(0);
	}

	/** Jobs matching the query, newest first, with the internal id of each (the cursor). */
	public List<Listed> list(JobQuery query) {
		AdminStatements.Statement list = this.sql.listJobs(query);
		return this.jdbc.query(list.sql(), detailsMapper(false), list.argumentArray());
	}

	/** How many jobs match the query, ignoring its cursor and limit. */
	public long count(JobQuery query) {
		AdminStatements.Statement count = this.sql.countJobs(query);
		Long counted = this.jdbc.queryForObject(count.sql(), Long.class, count.argumentArray());
		return (counted != null) ? counted : 0;
	}

	/** The kinds some instance's pollers handle or some schedule enqueues, sorted. */
	public List<String> knownKinds() {
		return this.jdbc.queryForList(this.sql.knownKinds, String.class);
	}

	/** Jobs by queue and state. */
	public Map<String, Map<JobState, Long>> counts() {
		Map<String, Map<JobState, Long>> counts = new TreeMap<>();
		this.jdbc.query(this.sql.countJobs, (ResultSet rs) -> {
			counts.computeIfAbsent(rs.getString(1), (queue) -> new EnumMap<>(JobState.class))
				.put(JobState.fromSqlValue(rs.getString(2)), rs.getLong(3));
		});
		return counts;
	}

	/** Jobs completed or failed within the last {@code window}, by queue. */
	public Map<String, Long> finishedWithin(Duration window) {
		Map<String, Long> finished = new TreeMap<>();
		this.jdbc.query(this.sql.countFinishedWithin, (ResultSet rs) -> {
			finished.put(rs.getString(1), rs.getLong(2));
		}, window.toNanos() / 1e9);
		return finished;
	}

	/** Retries a failed job. */
	public Change retry(UUID id) {
		return change(this.sql.retryJob, id);
	}

	/** Cancels a waiting job. */
	public Change cancel(UUID id) {
		return change(this.sql.cancelJob, id);
	}

	/** Deletes a finished job. */
	public Change delete(UUID id) {
		return change(this.sql.deleteJob, id);
	}

	private Change change(String statement, UUID id) {
		try {
			List<Change> rows = this.jdbc.query(statement, (rs, i) -> new Change(false,
					JobState.fromSqlValue(rs.getString(1)), rs.getString(2), rs.getString(3), rs.getInt(4) > 0), id);
			return rows.isEmpty() ? Change.NOT_FOUND : rows.get(0);
		}
		catch (DataAccessException ex) {
			if (!lockNotAvailable(ex)) {
				throw ex;
			}
			return new Change(true, committedState(id), null, null, false);
		}
	}

	/**
	 * The state of a job whose row another transaction holds, as last committed; {@code null} when it
	 * cannot be read (inside the caller's transaction, which the failed lock aborted).
	 */
	private @Nullable JobState committedState(UUID id) {
		try {
			List<String> states = this.jdbc.queryForList(this.sql.jobState, String.class, id);
			return states.isEmpty() ? null : JobState.fromSqlValue(states.get(0));
		}
		catch (DataAccessException ex) {
			return null;
		}
	}

	private static boolean lockNotAvailable(DataAccessException ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && LOCK_NOT_AVAILABLE.equals(sql.getSQLState())) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Retries the failed jobs a query matches, in batches of the options' size, each its own
	 * statement, up to the options' bound. Returns how many jobs each queue got back.
	 */
	public Map<String, Integer> retryMatching(JobQuery query, RetryOptions options) {
		Map<String, Integer> retried = new LinkedHashMap<>();
		int total = 0;
		while (total < options.atMost()) {
			int size = Math.min(options.batchSize(), options.atMost() - total);
			AdminStatements.Statement retry = this.sql.retryMatching(query, options.failedFor(), size);
			Map<String, Integer> batch = new LinkedHashMap<>();
			this.jdbc.query(retry.sql(), (ResultSet rs) -> {
				batch.put(rs.getString(1), rs.getInt(2));
			}, retry.argumentArray());
			batch.forEach((q, count) -> retried.merge(q, count, Integer::sum));
			int done = batch.values().stream().mapToInt(Integer::intValue).sum();
			total += done;
			if (done < size) {
				break;
			}
		}
		return retried;
	}

	/**
	 * Cancels the waiting jobs a query matches, in batches, each its own statement, handing each
	 * batch's cancelled jobs to {@code cancelled} as it commits (or as the caller's transaction goes
	 * on). Returns how many were cancelled.
	 */
	public int cancelMatching(JobQuery query, Consumer<List<Cancelled>> cancelled) {
		// Only jobs that exist as it starts: a producer that keeps enqueueing matching jobs cannot keep it going.
		Long upTo = this.jdbc.queryForObject(this.sql.largestId, Long.class);
		if (upTo == null) {
			return 0;
		}
		AdminStatements.Statement cancel = this.sql.cancelMatching(query, BULK_BATCH, upTo);
		int total = 0;
		while (true) {
			List<Cancelled> batch = this.jdbc.query(cancel.sql(),
					(rs, i) -> new Cancelled(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3)),
					cancel.argumentArray());
			total += batch.size();
			if (!batch.isEmpty()) {
				cancelled.accept(batch);
			}
			if (batch.size() < BULK_BATCH) {
				return total;
			}
		}
	}

	/** A job a bulk cancel cancelled. */
	public record Cancelled(UUID id, String kind, String queue) {
	}

	/** Pauses a queue; returns whether it was running until now. */
	public boolean pause(String queue, String by) {
		return !this.jdbc.query(this.sql.pauseQueue, (rs, i) -> rs.getString(1), queue, by).isEmpty();
	}

	/** Resumes a queue; returns whether it was paused until now. */
	public boolean resume(String queue) {
		return !this.jdbc.query(this.sql.resumeQueue, (rs, i) -> rs.getString(1), queue).isEmpty();
	}

	/** The queues paused now. */
	public Set<String> pausedQueues() {
		return Set.copyOf(this.jdbc.queryForList(this.sql.pausedQueues, String.class));
	}

	private static RowMapper<Listed> detailsMapper(boolean withPayload) {
		return (rs, i) -> new Listed(rs.getLong(1),
				new JobDetails(rs.getObject(2, UUID.class), rs.getString(3), rs.getString(4),
						JobState.fromSqlValue(rs.getString(5)), rs.getInt(6), rs.getInt(7), rs.getInt(8), rs.getString(9),
						instant(rs.getObject(10, OffsetDateTime.class)), instant(rs.getObject(11, OffsetDateTime.class)),
						instant(rs.getObject(12, OffsetDateTime.class)), instant(rs.getObject(13, OffsetDateTime.class)),
						rs.getInt(14), tags(rs.getArray(15)), rs.getString(16), rs.getObject(17, Integer.class),
						withPayload ? rs.getString(18) : null));
	}

	private static List<String> tags(@Nullable Array array) throws SQLException {
		if (array == null) {
			return List.of();
		}
		try {
			return List.of((String[]) array.getArray());
		}
		finally {
			array.free();
		}
	}

	private static @Nullable Instant instant(@Nullable OffsetDateTime timestamp) {
		return (timestamp != null) ? timestamp.toInstant() : null;
	}

	/** A job as listed, with its internal id, the cursor of keyset pagination. */
	public record Listed(long id, JobDetails details) {
	}

	/**
	 * What a change of one job found.
	 *
	 * @param locked whether another transaction held the job's row, so nothing was changed
	 * @param state the state the change found (as last committed, when locked); {@code null} when no
	 * job has the id
	 * @param kind the job's kind ({@code null} when locked or not found)
	 * @param queue the job's queue ({@code null} when locked or not found)
	 * @param changed whether the change was made
	 */
	public record Change(boolean locked, @Nullable JobState state, @Nullable String kind, @Nullable String queue,
			boolean changed) {

		static final Change NOT_FOUND = new Change(false, null, null, null, false);

	}

}
