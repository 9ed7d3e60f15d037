package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;

/**
 * The jobs an operator searches in the admin workload, generated in SQL: finished jobs as a busy
 * application keeps them, then a few thousand waiting ones.
 *
 * <p>The finished jobs are 97 % completed, 2 % failed and 1 % cancelled, and finished one after
 * another over the seven days before the load started, so that ids grow with {@code finished_at}
 * as they do in a table that jobs pass through. Of their 20 kinds {@value #COMMON_KIND} has half the
 * jobs, {@value #RARE_KIND} one in ten thousand, and {@code task.01} to {@code task.18} the rest,
 * from 12 % down to 1.4 %. A job's queue follows from its kind, as it does when a listener serves a
 * kind on one queue: {@code mail}, {@code default}, {@code reports} or {@code billing}. One job in
 * ten is tagged {@value #COMMON_TAG} and one of 50 tenants, and one in ten thousand also
 * {@value #RARE_TAG}. Failed jobs carry one of four errors: a read time-out (60 %), a locked
 * account (30 %), a deadlock (9.9 %) and {@value #RARE_ERROR} (0.1 %).
 */
final class AdminRows {

	static final String COMMON_KIND = "mail.send";

	static final String RARE_KIND = "ledger.reconcile";

	/** A kind of about 3 % of the jobs. */
	static final String MIDDLE_KIND = "task.06";

	static final String COMMON_TAG = "batch";

	static final String RARE_TAG = "audit";

	static final String COMMON_ERROR = "timed out";

	static final String RARE_ERROR = "Java heap space";

	static final Duration SPAN = Duration.ofDays(7);

	/** A job's kind from a uniform random number {@code k}. */
	private static final String KIND = """
			CASE WHEN k < 0.5 THEN '%s' WHEN k >= 0.9999 THEN '%s'
			     ELSE 'task.' || lpad((1 + floor(18 * ((k - 0.5) / 0.4999) ^ 2))::int::text, 2, '0') END"""
		.formatted(COMMON_KIND, RARE_KIND);

	/** A job's queue from its kind. */
	private static final String QUEUE = """
			CASE WHEN kind = '%s' THEN 'mail' WHEN kind = '%s' THEN 'billing'
			     ELSE (ARRAY['reports', 'default', 'billing'])[1 + substr(kind, 6)::int %% 3] END"""
		.formatted(COMMON_KIND, RARE_KIND);

	private AdminRows() {
	}

	/**
	 * Inserts {@code finished} finished jobs in one statement, then {@code available} due and
	 * {@code scheduled} future ones in another; returns where their ids lie. Leaves vacuuming to the
	 * caller.
	 */
	static Loaded load(BenchSchema schema, long finished, int available, int scheduled) {
		String table = schema.table();
		String all = schema.allJobs();
		OffsetDateTime newest = OffsetDateTime.parse(single(schema, "SELECT to_json(now())#>>'{}'"));
		long before = single(schema, "SELECT coalesce(max(id), 0) FROM " + all, 0L);
		// One random draw per property and row, in a subquery so that each row draws its own.
		schema.execute("""
				INSERT INTO %11$s (id, public_id, kind, queue, payload, state, priority, run_at, attempt, max_attempts,
				                   last_error, created_at, started_at, finished_at, bucket, tags)
				SELECT nextval(pg_get_serial_sequence('%1$s', 'id')), lpad(to_hex(g), 32, '0')::uuid, kind, %2$s, '{"n": 1}'::jsonb, state, 0,
				       finished - interval '2 seconds', CASE state WHEN 'completed' THEN 1 WHEN 'failed' THEN 5 ELSE 0 END,
				       5,
				       CASE WHEN state <> 'failed' THEN NULL
				            WHEN e < 0.6 THEN 'java.net.SocketTimeoutException: Read timed out'
				            WHEN e < 0.9 THEN 'java.lang.IllegalStateException: Account ' || g %% 1000 || ' is locked'
				            WHEN e < 0.999 THEN 'org.springframework.dao.CannotAcquireLockException: deadlock detected'
				            ELSE 'java.lang.OutOfMemoryError: Java heap space' END,
				       finished - interval '3 seconds',
				       CASE WHEN state <> 'cancelled' THEN finished - interval '1 second' END, finished,
				       floor(random() * 64)::smallint,
				       CASE WHEN t < 0.1 THEN ARRAY['%3$s', 'tenant-' || g %% 50]
				                              || CASE WHEN t < 0.0001 THEN ARRAY['%4$s'] ELSE '{}'::text[] END END
				FROM (SELECT g, kind, s, t, e,
				             CASE WHEN s < 0.97 THEN 'completed' WHEN s < 0.99 THEN 'failed' ELSE 'cancelled' END AS state,
				             '%5$s'::timestamptz - interval '1 second' * (%6$d.0 * (%8$d - g) / %9$d) AS finished
				      FROM (SELECT g, %7$s AS kind, s, t, e
				            FROM (SELECT g, random() AS k, random() AS s, random() AS t, random() AS e
				                  FROM generate_series(%10$d::bigint, %8$d::bigint) g) drawn) kinds) jobs
				""".formatted(table, QUEUE, COMMON_TAG, RARE_TAG, newest, SPAN.toSeconds(), KIND,
				before + finished, finished, before + 1, schema.finishedTable()));
		long lastFinished = single(schema, "SELECT max(id) FROM " + all, 0L);
		schema.execute("""
				INSERT INTO %1$s (public_id, kind, queue, payload, state, priority, run_at, attempt, max_attempts, bucket)
				SELECT lpad(to_hex(g), 32, '0')::uuid, kind, %2$s, '{"n": 1}'::jsonb, state, 0,
				       CASE state WHEN 'available' THEN now() - random() * interval '1 minute'
				                  ELSE now() + random() * interval '1 day' END,
				       0, 5, floor(random() * 64)::smallint
				FROM (SELECT g, %3$s AS kind,
				             CASE WHEN g < %4$d THEN 'available' ELSE 'scheduled' END AS state
				      FROM (SELECT g, random() AS k FROM generate_series(%5$d::bigint, %6$d::bigint) g) drawn) jobs
				""".formatted(table, QUEUE, KIND, lastFinished + 1 + available, lastFinished + 1,
				lastFinished + available + scheduled));
		long last = single(schema, "SELECT max(id) FROM " + all, 0L);
		return new Loaded(lastFinished - finished + 1, lastFinished, last, newest.toInstant());
	}

	private static String single(BenchSchema schema, String sql) {
		try (Connection connection = schema.connect(); Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery(sql)) {
			rs.next();
			return rs.getString(1);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Failed: " + ex.getMessage() + "\n" + sql, ex);
		}
	}

	private static long single(BenchSchema schema, String sql, long ifNull) {
		String value = single(schema, sql);
		return (value != null) ? Long.parseLong(value) : ifNull;
	}

	/**
	 * Where the loaded jobs lie.
	 *
	 * @param firstFinished id of the oldest finished job
	 * @param lastFinished id of the newest finished job
	 * @param last id of the last waiting job; those after {@code lastFinished} wait
	 * @param newest when the newest finished job finished; the oldest finished {@link #SPAN} before
	 */
	record Loaded(long firstFinished, long lastFinished, long last, Instant newest) {

		/** The id of the finished job that finished closest to {@code instant}. */
		long finishedAt(Instant instant) {
			double share = 1 - (double) Duration.between(instant, this.newest).toMillis() / SPAN.toMillis();
			long span = this.lastFinished - this.firstFinished;
			return this.firstFinished + Math.max(0, Math.min(span, Math.round(share * span)));
		}

	}

}
