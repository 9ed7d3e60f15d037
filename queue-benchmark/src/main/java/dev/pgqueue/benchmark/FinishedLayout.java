package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a finished job can go, as raw SQL for the finished-layouts workload: the tables, the indexes
 * each layout needs (claiming, finding a job by public id finished or not, listing failed jobs,
 * retention cleanup), the completion, the look-up by public id and the retention cleanup. Every
 * statement runs with the layout's schema on the search path.
 *
 * <p>Every table is created with {@code autovacuum_enabled = false}, whatever the server's setting:
 * the workload vacuums at the points where autovacuum would, the same for every layout, so that no
 * layout gets a vacuum in the middle of a timed window and another does not.
 */
enum FinishedLayout {

	/** Today's layout: finished rows stay in the table claims read, until a cleanup deletes them. */
	KEPT("kept", "fl_jobs", List.of("fl_jobs"), """
			UPDATE fl_jobs SET state = 'completed', attempt = attempt + 1, finished_at = ?
			WHERE id = ANY(?) AND state = 'available'""",
			"SELECT state, finished_at FROM fl_jobs WHERE public_id = ?", 1) {

		@Override
		List<String> ddl(List<OffsetDateTime> hours) {
			return List.of("CREATE TABLE fl_jobs (" + COLUMNS + ", PRIMARY KEY (id)) WITH (" + HOT_OPTIONS + ")",
					"CREATE UNIQUE INDEX fl_jobs_public_id ON fl_jobs (public_id)", CLAIM_INDEX,
					"CREATE INDEX fl_jobs_finished ON fl_jobs (state, finished_at) WHERE state IN " + FINISHED,
					"CREATE INDEX fl_jobs_failed ON fl_jobs (state, queue, id) WHERE state IN " + FAILED);
		}

		@Override
		long cleanUp(Connection connection, OffsetDateTime before) throws SQLException {
			return deleteInBatches(connection, "fl_jobs", before);
		}

	},

	/** A history table that the completion moves the row into, in one statement. */
	HISTORY("history table", "fl_jobs", List.of("fl_jobs", "fl_history"), FinishedLayout.MOVED.formatted("fl_history"),
			FinishedLayout.FOUND_IN_BOTH, 2) {

		@Override
		List<String> ddl(List<OffsetDateTime> hours) {
			List<String> ddl = new ArrayList<>(hotTable());
			ddl.add("CREATE TABLE fl_history (" + HISTORY_COLUMNS + ", PRIMARY KEY (id)) WITH (autovacuum_enabled = false)");
			ddl.add("CREATE UNIQUE INDEX fl_history_public_id ON fl_history (public_id)");
			ddl.add("CREATE INDEX fl_history_finished ON fl_history (state, finished_at)");
			ddl.add("CREATE INDEX fl_history_failed ON fl_history (state, queue, id) WHERE state IN " + FAILED);
			return ddl;
		}

		@Override
		long cleanUp(Connection connection, OffsetDateTime before) throws SQLException {
			return deleteInBatches(connection, "fl_history", before);
		}

	},

	/**
	 * One table partitioned by state: an unfinished partition (the one claims read) and a finished
	 * one; the completion's update moves the row from one to the other (a delete and an insert inside
	 * PostgreSQL). A unique index of a partitioned table must hold the partition key, so neither the
	 * primary key nor the public id is unique across partitions any more.
	 */
	LIST_PARTITIONS("list partitions", "fl_jobs_unfinished", List.of("fl_jobs"), """
			UPDATE fl_jobs SET state = 'completed', attempt = attempt + 1, finished_at = ?
			WHERE id = ANY(?) AND state = 'available'""",
			"SELECT state, finished_at FROM fl_jobs WHERE public_id = ?", 1) {

		@Override
		List<String> ddl(List<OffsetDateTime> hours) {
			return List.of("CREATE TABLE fl_jobs (" + COLUMNS + ", PRIMARY KEY (id, state)) PARTITION BY LIST (state)",
					"CREATE TABLE fl_jobs_unfinished PARTITION OF fl_jobs FOR VALUES IN " + UNFINISHED + " WITH ("
							+ HOT_OPTIONS + ")",
					"CREATE TABLE fl_jobs_finished PARTITION OF fl_jobs FOR VALUES IN " + FINISHED
							+ " WITH (autovacuum_enabled = false)",
					"CREATE INDEX fl_jobs_public_id ON fl_jobs (public_id)",
					"CREATE INDEX fl_jobs_unfinished_claim ON fl_jobs_unfinished (queue, priority DESC, run_at, id) "
							+ "WHERE state = 'available'",
					"CREATE INDEX fl_jobs_finished_finished ON fl_jobs_finished (state, finished_at)",
					"CREATE INDEX fl_jobs_finished_failed ON fl_jobs_finished (state, queue, id) WHERE state IN " + FAILED);
		}

		@Override
		long cleanUp(Connection connection, OffsetDateTime before) throws SQLException {
			return deleteInBatches(connection, "fl_jobs", before);
		}

	},

	/**
	 * A history table partitioned by finish time, an hour a partition, created ahead; cleanup
	 * detaches and drops the oldest partition. Without a cleanup index, the history holds only what
	 * finished jobs need: the public id and the failed list.
	 */
	TIME_PARTITIONS("time partitions", "fl_jobs", List.of("fl_jobs", "fl_history"), FinishedLayout.MOVED.formatted("fl_history"),
			FinishedLayout.FOUND_IN_BOTH, 2) {

		@Override
		List<String> ddl(List<OffsetDateTime> hours) {
			List<String> ddl = new ArrayList<>(hotTable());
			ddl.add("CREATE TABLE fl_history (" + HISTORY_COLUMNS + ") PARTITION BY RANGE (finished_at)");
			for (OffsetDateTime hour : hours) {
				ddl.add("CREATE TABLE " + partition(hour) + " PARTITION OF fl_history FOR VALUES FROM ('" + hour
						+ "') TO ('" + hour.plusHours(1) + "') WITH (autovacuum_enabled = false)");
			}
			ddl.add("CREATE INDEX fl_history_public_id ON fl_history (public_id)");
			ddl.add("CREATE INDEX fl_history_failed ON fl_history (state, queue, id) WHERE state IN " + FAILED);
			return ddl;
		}

		@Override
		long cleanUp(Connection connection, OffsetDateTime before) throws SQLException {
			// The workload's cutoff is the end of the oldest hour: that hour's partition goes whole.
			String oldest = partition(before.minusHours(1));
			try (Statement statement = connection.createStatement()) {
				statement.execute("ALTER TABLE fl_history DETACH PARTITION " + oldest);
				statement.execute("DROP TABLE " + oldest);
			}
			return -1;
		}

		private static String partition(OffsetDateTime hour) {
			return "fl_history_" + hour.toLocalDateTime().toString().replaceAll("[^0-9]", "");
		}

	},

	/**
	 * No finished rows: the completion deletes the rows and adds one row of counts per claimed batch
	 * (queue, state, finish time, jobs), read by summing. One counter row per queue and minute, updated
	 * in place, would make every completer of a queue wait for the row's lock until the previous one
	 * commits; a row per batch has nothing to wait for.
	 */
	COUNTERS("deleted, counted", "fl_jobs", List.of("fl_jobs", "fl_counts"), """
			WITH at AS (SELECT ?::timestamptz AS at),
			     done AS (DELETE FROM fl_jobs WHERE id = ANY(?) AND state = 'available' RETURNING queue)
			INSERT INTO fl_counts (queue, state, finished_at, jobs)
			SELECT done.queue, 'completed', (SELECT at FROM at), count(*) FROM done GROUP BY done.queue""", null, 0) {

		@Override
		List<String> ddl(List<OffsetDateTime> hours) {
			List<String> ddl = new ArrayList<>(hotTable());
			ddl.add("CREATE TABLE fl_counts (queue text NOT NULL, state text NOT NULL, finished_at timestamptz NOT NULL, "
					+ "jobs integer NOT NULL) WITH (autovacuum_enabled = false)");
			ddl.add("CREATE INDEX fl_counts_finished ON fl_counts (finished_at)");
			return ddl;
		}

		@Override
		long cleanUp(Connection connection, OffsetDateTime before) throws SQLException {
			try (PreparedStatement delete = connection.prepareStatement("DELETE FROM fl_counts WHERE finished_at < ?")) {
				delete.setObject(1, before);
				return delete.executeUpdate();
			}
		}

	};

	static final String UNFINISHED = "('available', 'scheduled', 'running')";

	static final String FINISHED = "('completed', 'failed', 'cancelled')";

	static final String FAILED = "('failed', 'cancelled')";

	/** The essential columns of pgqueue_jobs. */
	static final String COLUMNS = """
			id bigint GENERATED ALWAYS AS IDENTITY, public_id uuid NOT NULL, kind text NOT NULL, queue text NOT NULL,
			payload jsonb NOT NULL, priority smallint NOT NULL DEFAULT 0, run_at timestamptz NOT NULL DEFAULT now(),
			state text NOT NULL, attempt integer NOT NULL DEFAULT 0, finished_at timestamptz""";

	/** The same columns in a history table: the id is copied, not generated; every row is finished. */
	static final String HISTORY_COLUMNS = """
			id bigint NOT NULL, public_id uuid NOT NULL, kind text NOT NULL, queue text NOT NULL,
			payload jsonb NOT NULL, priority smallint NOT NULL, run_at timestamptz NOT NULL,
			state text NOT NULL, attempt integer NOT NULL, finished_at timestamptz NOT NULL""";

	/** As pgqueue_jobs: room on each page for updated rows' new versions. */
	static final String HOT_OPTIONS = "fillfactor = 70, autovacuum_enabled = false";

	static final String CLAIM_INDEX = "CREATE INDEX fl_jobs_claim ON fl_jobs (queue, priority DESC, run_at, id) "
			+ "WHERE state = 'available'";

	/** A completion that moves the claimed rows into a history table. Parameters: finish time, ids. */
	static final String MOVED = """
			WITH at AS (SELECT ?::timestamptz AS at),
			     done AS (DELETE FROM fl_jobs WHERE id = ANY(?) AND state = 'available'
			              RETURNING id, public_id, kind, queue, payload, priority, run_at, attempt)
			INSERT INTO %s (id, public_id, kind, queue, payload, priority, run_at, state, attempt, finished_at)
			SELECT done.id, done.public_id, done.kind, done.queue, done.payload, done.priority, done.run_at,
			       'completed', done.attempt + 1, (SELECT at FROM at)
			FROM done""";

	static final String FOUND_IN_BOTH = """
			SELECT state, finished_at FROM fl_jobs WHERE public_id = ?
			UNION ALL
			SELECT state, finished_at FROM fl_history WHERE public_id = ?""";

	/** The claim of transactional mode: the same for every layout. Parameters: queue, limit. */
	static final String CLAIM = """
			SELECT id, public_id, kind, payload, attempt FROM fl_jobs
			WHERE queue = ? AND state = 'available'
			ORDER BY priority DESC, run_at, id LIMIT ? FOR UPDATE SKIP LOCKED""";

	/** Parameters: public ids, payloads. */
	static final String INSERT = """
			INSERT INTO fl_jobs (public_id, kind, queue, payload, state)
			SELECT u, 'noop', 'bench', p, 'available' FROM unnest(?::uuid[], ?::jsonb[]) AS t(u, p)""";

	/** The engine's cleaner: a batch of rows past their retention, locked, then deleted by id. */
	private static final String PRUNE_BATCH = """
			WITH old AS MATERIALIZED (
			    SELECT id FROM %1$s WHERE state = 'completed' AND finished_at < ? LIMIT ? FOR UPDATE SKIP LOCKED)
			DELETE FROM %1$s j USING old WHERE j.id = old.id AND j.state = 'completed'""";

	/** Rows one cleanup statement deletes: the engine's default cleanup batch size. */
	static final int CLEANUP_BATCH = 10_000;

	private final String label;

	private final String hotRelation;

	private final List<String> vacuumed;

	private final String complete;

	private final String findByPublicId;

	private final int findParameters;

	FinishedLayout(String label, String hotRelation, List<String> vacuumed, String complete, String findByPublicId,
			int findParameters) {
		this.label = label;
		this.hotRelation = hotRelation;
		this.vacuumed = vacuumed;
		this.complete = complete;
		this.findByPublicId = findByPublicId;
		this.findParameters = findParameters;
	}

	/** The tables and indexes, given the hours finished jobs will fall in. */
	abstract List<String> ddl(List<OffsetDateTime> hours);

	/**
	 * Removes the completed jobs that finished before {@code before}, each statement committing on
	 * its own as the cleaner's do; returns the rows deleted, or -1 when a partition went whole.
	 */
	abstract long cleanUp(Connection connection, OffsetDateTime before) throws SQLException;

	String label() {
		return this.label;
	}

	/** The relation a claim reads. */
	String hotRelation() {
		return this.hotRelation;
	}

	/** What a {@code VACUUM} in this layout names (a partitioned table stands for its partitions). */
	List<String> vacuumed() {
		return this.vacuumed;
	}

	/** Completes claimed jobs. Parameters: finish time, array of ids. */
	String complete() {
		return this.complete;
	}

	/** Finds a job by public id, finished or not; {@code null} when finished jobs are not kept. */
	String findByPublicId() {
		return this.findByPublicId;
	}

	/** How many times the public id is bound in {@link #findByPublicId()}. */
	int findParameters() {
		return this.findParameters;
	}

	/** The hot table of the layouts that move finished rows out of it. */
	static List<String> hotTable() {
		return List.of("CREATE TABLE fl_jobs (" + COLUMNS + ", PRIMARY KEY (id)) WITH (" + HOT_OPTIONS + ")",
				"CREATE UNIQUE INDEX fl_jobs_public_id ON fl_jobs (public_id)", CLAIM_INDEX);
	}

	static long deleteInBatches(Connection connection, String table, OffsetDateTime before) throws SQLException {
		long deleted = 0;
		try (PreparedStatement batch = connection.prepareStatement(PRUNE_BATCH.formatted(table))) {
			while (true) {
				batch.setObject(1, before);
				batch.setInt(2, CLEANUP_BATCH);
				int rows = batch.executeUpdate();
				deleted += rows;
				if (rows < CLEANUP_BATCH) {
					return deleted;
				}
			}
		}
	}

	/** Rows a query counts, for checks outside timed windows. */
	static long count(Connection connection, String sql) throws SQLException {
		try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
			rs.next();
			return rs.getLong(1);
		}
	}

}
