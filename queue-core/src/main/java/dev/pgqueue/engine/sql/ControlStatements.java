package dev.pgqueue.engine.sql;

import dev.pgqueue.schema.SchemaName;

/**
 * The statements on the control rows of running jobs ({@code pgqueue_job_controls}): cancel requests
 * and progress, each named after what it does; {@link ControlRepository} runs them. Parameters are
 * positional and listed in each statement's Javadoc.
 *
 * <p>A job has a control row while it is unfinished: due (a transactional batch may hold it),
 * running under a lease, or scheduled again after an attempt a cancel request came too late for.
 */
final class ControlStatements {

	/** The channel on which cancel requests are announced; the payload is {@code <job id>:<who asked>}. */
	final String channel;

	/**
	 * Records a request to cancel an unfinished job, keeping the first request's time and author, and
	 * announces it on {@link #channel} when notifying. Parameters: public id, who asked, who asked (the
	 * announcement's). Returns the job's id if it is unfinished, else no row.
	 */
	final String requestCancel;

	/**
	 * Of the given jobs, those an operator asked to cancel. Parameter: array of ids. Returns id, who
	 * asked.
	 */
	final String cancelRequests;

	/**
	 * Writes the latest progress of jobs, each one's percent and message by position. Parameters:
	 * arrays of ids, percents and messages.
	 */
	final String writeProgress;

	/**
	 * The control row of an unfinished job. Parameter: public id. Returns progress percent, progress
	 * message, progress time, cancel request time.
	 */
	final String progress;

	/** Deletes the control rows of jobs. Parameter: array of ids. */
	final String delete;

	/** Deletes the control rows of jobs that ended or are gone. No parameters. */
	final String pruneEnded;

	/**
	 * @param notify whether cancel requests are announced on {@link #channel}
	 */
	ControlStatements(SchemaName schema, boolean notify) {
		String jobs = schema.qualify("pgqueue_jobs");
		String controls = schema.qualify("pgqueue_job_controls");
		this.channel = channel(schema);
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
				""".formatted(jobs, controls,
				notify ? "pg_notify('" + this.channel + "', job_id || ':' || ?)" : "?::text");
		this.cancelRequests = "SELECT job_id, cancel_requested_by FROM " + controls
				+ " WHERE job_id = ANY(?) AND cancel_requested_at IS NOT NULL";
		this.writeProgress = """
				INSERT INTO %1$s AS c (job_id, progress_percent, progress_message, progress_at)
				SELECT p.id, p.percent, p.message, now()
				FROM unnest(?::bigint[], ?::smallint[], ?::text[]) AS p(id, percent, message)
				ON CONFLICT (job_id) DO UPDATE
				SET progress_percent = excluded.progress_percent, progress_message = excluded.progress_message,
				    progress_at = excluded.progress_at""".formatted(controls);
		this.progress = """
				SELECT c.progress_percent, c.progress_message, c.progress_at, c.cancel_requested_at
				FROM %1$s c JOIN %2$s j ON j.id = c.job_id
				WHERE j.public_id = ? AND j.state IN ('available', 'running', 'scheduled')""".formatted(controls, jobs);
		this.delete = "DELETE FROM " + controls + " WHERE job_id = ANY(?)";
		this.pruneEnded = """
				DELETE FROM %1$s c
				WHERE NOT EXISTS (SELECT 1 FROM %2$s j
				                  WHERE j.id = c.job_id AND j.state IN ('available', 'running', 'scheduled'))
				""".formatted(controls, jobs);
	}

	/** The channel on which cancel requests of the schema's jobs are announced. */
	static String channel(SchemaName schema) {
		return "pgqueue_control:" + schema.value();
	}

}
