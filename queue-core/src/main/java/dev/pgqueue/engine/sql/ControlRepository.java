package dev.pgqueue.engine.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.JobProgress;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Runs the statements on the control rows of running jobs ({@link ControlStatements}, on
 * {@code pgqueue_job_controls}): cancel requests, written by operators and read by the instance
 * running the job, and progress, written by that instance. Kept apart from the jobs table, whose
 * rows a transactional batch holds locked while its jobs run.
 */
public class ControlRepository {

	private final JdbcTemplate jdbc;

	private final ControlStatements sql;

	/**
	 * @param notify whether cancel requests are announced to the instances on {@link #channel}
	 */
	public ControlRepository(JdbcTemplate jdbc, SchemaName schema, boolean notify) {
		this.jdbc = jdbc;
		this.sql = new ControlStatements(schema, notify);
	}

	/** The channel on which cancel requests are announced; the payload is {@code <job id>:<who asked>}. */
	public static String channel(SchemaName schema) {
		return ControlStatements.channel(schema);
	}

	/**
	 * Records a request to cancel the job with this public id while it runs, and announces it to the
	 * instances, if the job is unfinished.
	 * @return whether the request was recorded (false: no such unfinished job)
	 */
	public boolean requestCancel(UUID publicId, String by) {
		return !this.jdbc.query(this.sql.requestCancel, (rs, i) -> rs.getLong(1), publicId, by, by).isEmpty();
	}

	/** Of these jobs, those an operator asked to cancel, with who asked. */
	public Map<Long, String> cancelRequests(Long[] ids) {
		Map<Long, String> requested = new LinkedHashMap<>();
		this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.cancelRequests);
			ps.setArray(1, con.createArrayOf("int8", ids));
			return ps;
		}, (rs) -> {
			requested.put(rs.getLong(1), String.valueOf(rs.getString(2)));
		});
		return requested;
	}

	/** Writes the latest progress of these jobs: each one's percent and message, by position. */
	public void writeProgress(Long[] ids, Integer[] percents, @Nullable String[] messages) {
		this.jdbc.update((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.writeProgress);
			ps.setArray(1, con.createArrayOf("int8", ids));
			ps.setArray(2, con.createArrayOf("int2", percents));
			ps.setArray(3, con.createArrayOf("text", messages));
			return ps;
		});
	}

	/** The control row of the unfinished job with this public id, or {@code null}. */
	public @Nullable JobProgress progress(UUID publicId) {
		List<JobProgress> found = this.jdbc.query(this.sql.progress, (rs, i) -> new JobProgress(
				(rs.getObject(1) != null) ? rs.getInt(1) : null, rs.getString(2), instant(rs.getObject(3, OffsetDateTime.class)),
				instant(rs.getObject(4, OffsetDateTime.class))), publicId);
		return found.isEmpty() ? null : found.get(0);
	}

	private static @Nullable Instant instant(@Nullable OffsetDateTime time) {
		return (time != null) ? time.toInstant() : null;
	}

	/** Deletes the control rows of these jobs, which ended. */
	public int delete(Long[] ids) {
		return this.jdbc.update((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.delete);
			ps.setArray(1, con.createArrayOf("int8", ids));
			return ps;
		});
	}

	/** Deletes the control rows of jobs that ended or are gone, whoever ran them. */
	public int pruneEnded() {
		return this.jdbc.update(this.sql.pruneEnded);
	}

	/**
	 * The id of the job whose cancel a notification announces, or {@code null} if it names none. The
	 * rest of the payload (who asked) is not read: a notification is a hint to read the request.
	 */
	public static @Nullable Long announcedJob(String payload) {
		int colon = payload.indexOf(':');
		try {
			return Long.valueOf((colon < 0) ? payload : payload.substring(0, colon));
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

}
