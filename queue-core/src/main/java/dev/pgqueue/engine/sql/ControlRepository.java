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
 * The control rows of running jobs ({@code pgqueue_job_controls}): cancel requests, written by
 * operators and read by the instance running the job, and progress, written by that instance. Kept
 * apart from the jobs table, whose rows a transactional batch holds locked while its jobs run.
 */
public class ControlRepository {

	private final JdbcTemplate jdbc;

	private final String controls;

	private final String channel;

	private final String requestCancel;

	private final String cancelRequests;

	private final String writeProgress;

	private final String delete;

	private final String pruneEnded;

	private final String progressOf;

	public ControlRepository(JdbcTemplate jdbc, SchemaName schema, boolean notify) {
		this.jdbc = jdbc;
		String jobs = schema.qualify("pgqueue_jobs");
		this.controls = schema.qualify("pgqueue_job_controls");
		this.channel = channel(schema);
		// The request stands for a job that is due (a transactional batch may hold it), running under a
		// lease, or scheduled again after an attempt the request came too late for; the first request's
		// time and author are kept.
		this.requestCancel = """
				WITH target AS (
				    SELECT id FROM %1$s WHERE public_id = ? AND state IN ('available', 'running', 'scheduled')),
				requested AS (
				    INSERT INTO %2$s AS c (job_id, cancel_requested_at, cancel_requested_by)
				    SELECT id, now(), ? FROM target
				    ON CONFLICT (job_id) DO UPDATE
				    SET cancel_requested_at = coalesce(c.cancel_requested_at, excluded.cancel_requested_at),
				        cancel_requested_by = coalesce(c.cancel_requested_by, excluded.cancel_requested_by)
				    RETURNING job_id)
				SELECT job_id, %3$s FROM requested
				""".formatted(jobs, this.controls,
				notify ? "pg_notify('" + this.channel + "', job_id || ':' || ?)" : "?::text");
		this.cancelRequests = "SELECT job_id, cancel_requested_by FROM " + this.controls
				+ " WHERE job_id = ANY(?) AND cancel_requested_at IS NOT NULL";
		this.writeProgress = """
				INSERT INTO %1$s AS c (job_id, progress_percent, progress_message, progress_at)
				SELECT p.id, p.percent, p.message, now()
				FROM unnest(?::bigint[], ?::smallint[], ?::text[]) AS p(id, percent, message)
				ON CONFLICT (job_id) DO UPDATE
				SET progress_percent = excluded.progress_percent, progress_message = excluded.progress_message,
				    progress_at = excluded.progress_at""".formatted(this.controls);
		this.delete = "DELETE FROM " + this.controls + " WHERE job_id = ANY(?)";
		this.progressOf = """
				SELECT c.progress_percent, c.progress_message, c.progress_at, c.cancel_requested_at
				FROM %1$s c JOIN %2$s j ON j.id = c.job_id
				WHERE j.public_id = ? AND j.state IN ('available', 'running', 'scheduled')""".formatted(this.controls, jobs);
		this.pruneEnded = """
				DELETE FROM %1$s c
				WHERE NOT EXISTS (SELECT 1 FROM %2$s j
				                  WHERE j.id = c.job_id AND j.state IN ('available', 'running', 'scheduled'))
				""".formatted(this.controls, jobs);
	}

	/** The channel on which cancel requests are announced; the payload is {@code <job id>:<who asked>}. */
	public static String channel(SchemaName schema) {
		return "pgqueue_control:" + schema.value();
	}

	/**
	 * Records a request to cancel the job with this public id while it runs, and announces it to the
	 * instances, if the job is unfinished.
	 * @return whether the request was recorded (false: no such unfinished job)
	 */
	public boolean requestCancel(UUID publicId, String by) {
		return !this.jdbc.query(this.requestCancel, (rs, i) -> rs.getLong(1), publicId, by, by).isEmpty();
	}

	/** Of these jobs, those an operator asked to cancel, with who asked. */
	public Map<Long, String> cancelRequests(Long[] ids) {
		Map<Long, String> requested = new LinkedHashMap<>();
		this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.cancelRequests);
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
			PreparedStatement ps = con.prepareStatement(this.writeProgress);
			ps.setArray(1, con.createArrayOf("int8", ids));
			ps.setArray(2, con.createArrayOf("int2", percents));
			ps.setArray(3, con.createArrayOf("text", messages));
			return ps;
		});
	}

	/** The control row of the unfinished job with this public id, or {@code null}. */
	public @Nullable JobProgress progress(UUID publicId) {
		List<JobProgress> found = this.jdbc.query(this.progressOf, (rs, i) -> new JobProgress(
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
			PreparedStatement ps = con.prepareStatement(this.delete);
			ps.setArray(1, con.createArrayOf("int8", ids));
			return ps;
		});
	}

	/** Deletes the control rows of jobs that ended or are gone, whoever ran them. */
	public int pruneEnded() {
		return this.jdbc.update(this.pruneEnded);
	}

	/** The rows' table, for readers that join it. */
	public String table() {
		return this.controls;
	}


	/** The id of the job whose cancel a notification announces, or {@code null} if it names none. */
	public static @Nullable Long announcedJob(String payload) {
		int colon = payload.indexOf(':');
		try {
			return Long.valueOf((colon < 0) ? payload : payload.substring(0, colon));
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/** Who asked, as a notification announces it. */
	public static String announcedBy(String payload) {
		int colon = payload.indexOf(':');
		return (colon < 0) ? "an operator" : payload.substring(colon + 1);
	}

}
