package dev.pgqueue.testkit;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

import dev.pgqueue.JobState;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * The kit's reads of the jobs table, every statement of the kit in one place. They run on the
 * application's {@link JdbcTemplate}, so that inside a transaction (a {@code @Transactional} test)
 * they see the jobs that transaction enqueued.
 */
final class JobRows {

	/** Most rows one read returns: a test's table holds far fewer. */
	static final int MOST = 10_000;

	private static final String COLUMNS = "public_id, kind, queue, state, priority, attempt, max_attempts, run_at, "
			+ "created_at, unique_key, last_error, payload::text AS payload";

	/**
	 * What still has to run for a queue (or every queue) to be idle: jobs available (a transactional
	 * batch running one holds it available until it commits) or running, and jobs scheduled to fall
	 * due within the horizon, on the database clock.
	 */
	private static final String WAITING = "(state IN ('available', 'running') OR (state = 'scheduled' AND run_at < "
			+ "now() + ? * interval '1 millisecond')) AND (?::text IS NULL OR queue = ?)";

	private static final RowMapper<EnqueuedJob> MAPPER = JobRows::map;

	private final JdbcTemplate jdbc;

	private final SchemaName schema;

	/** The unfinished jobs' table. */
	private final String table;

	/** Every job, unfinished and finished (the view {@code pgqueue_all_jobs}). */
	private final String allJobs;

	JobRows(JdbcTemplate jdbc, SchemaName schema) {
		this.jdbc = jdbc;
		this.schema = schema;
		this.table = schema.qualify("pgqueue_jobs");
		this.allJobs = schema.qualify("pgqueue_all_jobs");
	}

	/** The schema of the jobs table, for messages. */
	String schema() {
		return this.schema.value();
	}

	/** Every job, oldest first. */
	List<EnqueuedJob> all() {
		return this.jdbc.query("SELECT " + COLUMNS + " FROM " + this.allJobs + " ORDER BY id LIMIT " + MOST, MAPPER);
	}

	/** The job with this public id, or {@code null}. */
	@Nullable EnqueuedJob find(UUID id) {
		List<EnqueuedJob> found = this.jdbc.query("SELECT " + COLUMNS + " FROM " + this.allJobs + " WHERE public_id = ?",
				MAPPER, id);
		return found.isEmpty() ? null : found.get(0);
	}

	/** How many jobs of the queue (or of every queue, for {@code null}) still have to run within the horizon. */
	int countWaiting(@Nullable String queue, Duration horizon) {
		Integer count = this.jdbc.queryForObject("SELECT count(*) FROM " + this.table + " WHERE " + WAITING,
				Integer.class, horizon.toMillis(), queue, queue);
		return (count != null) ? count : 0;
	}

	/** The jobs of the queue (or of every queue) that still have to run within the horizon, oldest first. */
	List<EnqueuedJob> waiting(@Nullable String queue, Duration horizon) {
		return this.jdbc.query("SELECT " + COLUMNS + " FROM " + this.table + " WHERE " + WAITING + " ORDER BY id LIMIT "
				+ MOST, MAPPER, horizon.toMillis(), queue, queue);
	}

	/** The newest failed jobs of the queue (or of every queue), newest first. */
	List<EnqueuedJob> failed(@Nullable String queue, int limit) {
		return this.jdbc.query("SELECT " + COLUMNS + " FROM " + this.allJobs
				+ " WHERE state = 'failed' AND (?::text IS NULL OR queue = ?) ORDER BY id DESC LIMIT ?", MAPPER, queue,
				queue, limit);
	}

	private static EnqueuedJob map(ResultSet rs, int row) throws SQLException {
		return new EnqueuedJob(rs.getObject("public_id", UUID.class), rs.getString("kind"), rs.getString("queue"),
				JobState.fromSqlValue(rs.getString("state")), rs.getInt("priority"), rs.getInt("attempt"),
				rs.getInt("max_attempts"), rs.getObject("run_at", OffsetDateTime.class).toInstant(),
				rs.getObject("created_at", OffsetDateTime.class).toInstant(), rs.getString("unique_key"),
				rs.getString("last_error"), rs.getString("payload"));
	}

}
