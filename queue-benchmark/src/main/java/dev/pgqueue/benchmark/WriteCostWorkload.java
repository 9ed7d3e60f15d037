package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * What each job writes: for a plain job and for each optional feature (a concurrency key, a unique
 * key, tags, a bucket key, a rate weight; completed jobs deleted instead of kept), the WAL, heap and
 * index bytes one job adds when it is enqueued (through {@code enqueueAll}, 500 per call) and when the
 * queue's poller runs and completes it (the queue's defaults, transactional), with how many of its
 * updates were HOT. Beside them, the same life in raw SQL on a table with nothing but a primary key
 * and a claim index: what a queue must write at least.
 *
 * <p>Sizes are read from {@code pg_relation_size} and WAL from {@code pg_current_wal_insert_lsn()}
 * before and after each phase, on a fresh schema per variant, with the phase's connections closed
 * first so that their statistics are flushed. WAL is the whole server's: run it on a quiet server.
 * Without autovacuum (as on the development machines), index bytes count every entry written; a B-tree
 * stores equal keys once (deduplication), so an index on a repeated value grows less than its entries.
 * The entries themselves are counted where {@code pg_walinspect} can read the WAL (PostgreSQL 15 and
 * later, as a superuser): the B-tree insert records of each phase, the server's, per job.
 */
final class WriteCostWorkload implements Workload {

	/** Jobs per call of {@code enqueueAll}, and per raw insert. */
	private static final int CHUNK = 500;

	private static final String PAYLOAD_JSON = "{\"n\":1}";

	/** How a variant's requests are made, from the plain one and the job's number. */
	private record Variant(String name, boolean deleteCompleted, BiFunction<JobRequest, Integer, JobRequest> request) {
	}

	private static final List<Variant> VARIANTS = List.of(
			new Variant("plain", false, (request, i) -> request),
			new Variant("concurrency key", false, (request, i) -> request.concurrencyKey("key-" + (i % 100))),
			new Variant("unique key", false, (request, i) -> request.uniqueKey("unique-" + i)),
			new Variant("tags", false, (request, i) -> request.tags("tenant-" + (i % 10), "eu")),
			new Variant("bucket key", false, (request, i) -> request.bucketKey("account-" + (i % 100))),
			new Variant("rate weight", false, (request, i) -> request.rateWeight(2)),
			new Variant("completed deleted", true, (request, i) -> request));

	@Override
	public String name() {
		return "write-cost";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		int jobs = "smoke".equals(context.profile().name()) ? 2_000 : 20_000;
		List<Result> results = new ArrayList<>();
		context.progress("%,d jobs per variant; bytes per job; WAL is the server's", jobs);
		Cost rawKept = raw(context, jobs, false);
		Cost rawDeleted = raw(context, jobs, true);
		report(context, "raw, kept", rawKept);
		report(context, "raw, deleted", rawDeleted);
		for (Variant variant : VARIANTS) {
			Cost cost = pgqueue(context, variant, jobs);
			report(context, variant.name(), cost);
			Cost raw = variant.deleteCompleted() ? rawDeleted : rawKept;
			results.add(Result.lower(name(), variant.name() + ", enqueue", "WAL", "B/job", cost.enqueue().wal(),
					raw.enqueue().wal(), null));
			results.add(Result.lower(name(), variant.name() + ", enqueue", "index bytes", "B/job",
					cost.enqueue().indexTotal(), raw.enqueue().indexTotal(), null));
			results.add(Result.lower(name(), variant.name() + ", run", "WAL", "B/job", cost.run().wal(), raw.run().wal(),
					null));
			if (!Double.isNaN(cost.enqueue().btreeEntries()) && !Double.isNaN(raw.enqueue().btreeEntries())) {
				results.add(Result.lower(name(), variant.name() + ", enqueue", "B-tree entries", "per job",
						cost.enqueue().btreeEntries(), raw.enqueue().btreeEntries(), null));
				if (!variant.deleteCompleted()) {
					// A delete writes no index entry, on either side.
					results.add(Result.lower(name(), variant.name() + ", run", "B-tree entries", "per job",
							cost.run().btreeEntries(), raw.run().btreeEntries(), null));
				}
			}
			if (!variant.deleteCompleted()) {
				// A delete writes no index entry, on either side.
				results.add(Result.lower(name(), variant.name() + ", run", "index bytes", "B/job", cost.run().indexTotal(),
						raw.run().indexTotal(), null));
			}
		}
		return results;
	}

	private Cost pgqueue(Context context, Variant variant, int jobs) throws Exception {
		try (BenchSchema schema = context.database().createSchema("write_cost");
				Connection admin = context.database().connect()) {
			String table = schema.table();
			QueueSettings settings = QueueSettings.defaults(BenchSchema.QUEUE);
			Snapshot before = Snapshot.of(admin, table);
			HikariDataSource enqueuers = schema.pool("write-cost-enqueue", 1);
			try (PgqueueEngine engine = new PgqueueEngine(enqueuers, schema.name(), settings, variant.deleteCompleted(),
					QueueMetrics.NONE, (job) -> {
					})) {
				JobClient client = engine.client(enqueuers);
				EnqueueWorkload.Payload payload = new EnqueueWorkload.Payload(1);
				for (int start = 0; start < jobs; start += CHUNK) {
					List<JobRequest> requests = new ArrayList<>(CHUNK);
					for (int i = start; i < Math.min(jobs, start + CHUNK); i++) {
						requests.add(variant.request().apply(JobRequest.of(BenchSchema.KIND, payload).queue(BenchSchema.QUEUE), i));
					}
					client.enqueueAll(requests);
				}
			}
			schema.release(enqueuers);
			Snapshot enqueued = Snapshot.of(admin, table);

			HikariDataSource workers = schema.pool("write-cost-run", settings.concurrency() + 2);
			AtomicLong handled = new AtomicLong();
			try (PgqueueEngine engine = new PgqueueEngine(workers, schema.name(), settings, variant.deleteCompleted(),
					QueueMetrics.NONE, (job) -> handled.incrementAndGet())) {
				JobPoller poller = engine.poller();
				poller.start();
				long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
				while (schema.unfinished() > 0) {
					if (System.nanoTime() > deadline) {
						throw new IllegalStateException("write-cost, " + variant.name() + ": " + schema.unfinished()
								+ " jobs still unfinished after 5 minutes");
					}
					Thread.sleep(20);
				}
			}
			schema.release(workers);
			Snapshot ran = Snapshot.of(admin, table);
			return new Cost(enqueued.minus(before, jobs, admin), ran.minus(enqueued, jobs, admin));
		}
	}

	/**
	 * The same life in raw SQL: a multi-row insert of {@value #CHUNK} rows at a time, then claims of 100
	 * that complete (or delete) their rows in the claiming statement, on a table with a primary key
	 * and a partial claim index only.
	 */
	private Cost raw(Context context, int jobs, boolean delete) throws Exception {
		try (BenchSchema schema = context.database().createSchema("write_cost_raw");
				Connection admin = context.database().connect()) {
			String table = schema.name().qualify("raw_jobs");
			try (Statement ddl = admin.createStatement()) {
				ddl.execute("CREATE TABLE " + table + " (id bigserial PRIMARY KEY, queue text NOT NULL, "
						+ "state text NOT NULL DEFAULT 'available', priority smallint NOT NULL DEFAULT 0, "
						+ "run_at timestamptz NOT NULL DEFAULT now(), payload jsonb NOT NULL, finished_at timestamptz)");
				ddl.execute("CREATE INDEX ON " + table + " (queue, priority DESC, run_at, id) WHERE state = 'available'");
			}
			Snapshot before = Snapshot.of(admin, table);
			try (Connection connection = context.database().connect();
					PreparedStatement insert = connection.prepareStatement("INSERT INTO " + table
							+ " (queue, payload) SELECT ?, ?::jsonb FROM generate_series(1, ?)")) {
				for (int start = 0; start < jobs; start += CHUNK) {
					insert.setString(1, BenchSchema.QUEUE);
					insert.setString(2, PAYLOAD_JSON);
					insert.setInt(3, Math.min(CHUNK, jobs - start));
					insert.executeUpdate();
				}
			}
			Snapshot enqueued = Snapshot.of(admin, table);
			String claimed = "SELECT id FROM " + table + " WHERE queue = ? AND state = 'available' "
					+ "ORDER BY priority DESC, run_at, id LIMIT 100 FOR UPDATE SKIP LOCKED";
			String finish = delete ? "DELETE FROM " + table + " WHERE id IN (" + claimed + ")"
					: "UPDATE " + table + " SET state = 'completed', finished_at = now() WHERE id IN (" + claimed + ")";
			try (Connection connection = context.database().connect();
					PreparedStatement complete = connection.prepareStatement(finish)) {
				complete.setString(1, BenchSchema.QUEUE);
				while (complete.executeUpdate() > 0) {
					// Until a claim comes back empty.
				}
			}
			Snapshot ran = Snapshot.of(admin, table);
			return new Cost(enqueued.minus(before, jobs, admin), ran.minus(enqueued, jobs, admin));
		}
	}

	private static void report(Context context, String variant, Cost cost) {
		context.progress("%-18s enqueue %s", variant, cost.enqueue().describe());
		context.progress("%-18s run     %s", "", cost.run().describe());
	}

	/** What enqueueing a job and running it wrote. */
	private record Cost(PerJob enqueue, PerJob run) {
	}

	/**
	 * One phase's writes per job.
	 * @param indexes each index's growth, by name
	 * @param hotShare HOT updates among the phase's updates, from 0 to 1; NaN without updates
	 */
	private record PerJob(double wal, double heap, Map<String, Double> indexes, long updates, double hotShare,
			double btreeEntries) {

		double indexTotal() {
			return this.indexes.values().stream().mapToDouble(Double::doubleValue).sum();
		}

		String describe() {
			StringJoiner each = new StringJoiner(", ");
			int[] grown = { 0 };
			this.indexes.forEach((index, bytes) -> {
				if (bytes >= 0.5) {
					each.add(String.format(Locale.ROOT, "%s %.0f", index, bytes));
					grown[0]++;
				}
			});
			String hot = (this.updates == 0) ? "no updates"
					: String.format(Locale.ROOT, "%,d updates, %.0f %% HOT", this.updates, this.hotShare * 100);
			String entries = Double.isNaN(this.btreeEntries) ? "B-tree entries n/a"
					: String.format(Locale.ROOT, "B-tree entries %.2f", this.btreeEntries);
			return String.format(Locale.ROOT, "WAL %6.0f  heap %5.0f  indexes %5.0f (%d of %d grew: %s)  %s  %s", this.wal,
					this.heap, indexTotal(), grown[0], this.indexes.size(), each, entries, hot);
		}

	}

	/** The sizes and counters of a table, its indexes and the server's WAL at one moment. */
	private record Snapshot(long walBytes, String lsn, long heap, Map<String, Long> indexes, long updates,
			long hotUpdates) {

		static Snapshot of(Connection connection, String table) throws SQLException {
			long wal;
			String lsn;
			long heap;
			long updates;
			long hot;
			Map<String, Long> indexes = new LinkedHashMap<>();
			// The phase's sessions flush their counters as they end, a moment after their connections close:
			// read until two readings a tenth of a second apart agree (two seconds at most).
			long[] counters = counters(connection, table);
			for (int i = 0; i < 20; i++) {
				sleep(Duration.ofMillis(100));
				long[] again = counters(connection, table);
				boolean same = java.util.Arrays.equals(again, counters);
				counters = again;
				if (same) {
					break;
				}
			}
			updates = counters[0];
			hot = counters[1];
			// The jobs table and, where there is one, every leaf of the finished jobs' table: a job's row
			// moves there as it completes.
			String finished = table.endsWith("\"pgqueue_jobs\"")
					? table.replace("\"pgqueue_jobs\"", "\"pgqueue_finished_jobs\"") : null;
			String relations = """
					SELECT ?::regclass AS relid, true AS main
					UNION ALL
					SELECT relid, false FROM pg_partition_tree(?::regclass) WHERE isleaf""";
			try (PreparedStatement read = connection.prepareStatement(
					"SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint, "
							+ "(SELECT sum(pg_relation_size(t.relid))::bigint FROM (" + relations + ") t), "
							+ "pg_current_wal_insert_lsn()::text")) {
				read.setString(1, table);
				read.setString(2, finished);
				try (ResultSet rs = read.executeQuery()) {
					rs.next();
					wal = rs.getLong(1);
					heap = rs.getLong(2);
					lsn = rs.getString(3);
				}
			}
			try (PreparedStatement read = connection.prepareStatement("""
					SELECT CASE WHEN t.main THEN replace(c.relname, 'pgqueue_jobs_', '')
					            ELSE 'finished ' || substr(c.relname, length(tc.relname) + 2) END,
					       sum(pg_relation_size(i.indexrelid))::bigint
					FROM (%s) t
					JOIN pg_index i ON i.indrelid = t.relid
					JOIN pg_class c ON c.oid = i.indexrelid
					JOIN pg_class tc ON tc.oid = t.relid
					GROUP BY 1 ORDER BY 1""".formatted(relations))) {
				read.setString(1, table);
				read.setString(2, finished);
				try (ResultSet rs = read.executeQuery()) {
					while (rs.next()) {
						indexes.put(rs.getString(1), rs.getLong(2));
					}
				}
			}
			return new Snapshot(wal, lsn, heap, indexes, updates, hot);
		}

		/** Updates and HOT updates of the table, as the server counts them now. */
		private static long[] counters(Connection connection, String table) throws SQLException {
			try (Statement statement = connection.createStatement()) {
				// Counters as the server has them now, not as this session read them earlier.
				statement.execute("SELECT pg_stat_clear_snapshot()");
			}
			try (PreparedStatement read = connection.prepareStatement(
					"SELECT coalesce(sum(n_tup_upd), 0), coalesce(sum(n_tup_hot_upd), 0) FROM pg_stat_user_tables "
							+ "WHERE relid = ?::regclass")) {
				read.setString(1, table);
				try (ResultSet rs = read.executeQuery()) {
					rs.next();
					return new long[] { rs.getLong(1), rs.getLong(2) };
				}
			}
		}

		private static void sleep(Duration duration) {
			try {
				Thread.sleep(duration.toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while reading the table's counters", ex);
			}
		}

		PerJob minus(Snapshot before, int jobs, Connection connection) {
			Map<String, Double> grown = new LinkedHashMap<>();
			this.indexes.forEach((index, size) -> grown.put(index,
					(size - before.indexes.getOrDefault(index, 0L)) / (double) jobs));
			long updated = this.updates - before.updates;
			return new PerJob((this.walBytes - before.walBytes) / (double) jobs, (this.heap - before.heap) / (double) jobs,
					grown, updated, (updated == 0) ? Double.NaN : (this.hotUpdates - before.hotUpdates) / (double) updated,
					btreeEntries(connection, before.lsn, this.lsn) / (double) jobs);
		}

		/**
		 * B-tree entries written between two WAL positions, the whole server's: the WAL records of a
		 * leaf insert (a new entry) and of a posting-list insert (a heap pointer added to an entry of
		 * equal keys), counted by {@code pg_walinspect} (PostgreSQL 15 and later, a superuser or a
		 * member of {@code pg_read_server_files}); NaN where it is not available.
		 */
		private static double btreeEntries(Connection connection, String from, String to) {
			try (Statement statement = connection.createStatement()) {
				statement.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect");
			}
			catch (SQLException ex) {
				return Double.NaN;
			}
			try (PreparedStatement read = connection.prepareStatement("""
					SELECT coalesce(sum(count), 0) FROM pg_get_wal_stats(?::pg_lsn, ?::pg_lsn, true)
					WHERE "resource_manager/record_type" IN ('Btree/INSERT_LEAF', 'Btree/INSERT_POST')""")) {
				read.setString(1, from);
				read.setString(2, to);
				try (ResultSet rs = read.executeQuery()) {
					rs.next();
					return rs.getLong(1);
				}
			}
			catch (SQLException ex) {
				return Double.NaN;
			}
		}

	}

}
