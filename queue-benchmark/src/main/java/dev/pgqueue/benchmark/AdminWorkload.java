package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobState;
import dev.pgqueue.engine.sql.AdminStatements;
import dev.pgqueue.engine.sql.AdminStatements.Statement;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Operators' searches ({@code JobAdmin.list} and {@code JobAdmin.count}) on a table of many
 * finished jobs ({@link AdminRows}): for each search, the index its plan uses and how long its first
 * page, a page deep in its results and its count take.
 *
 * <p>The statements are the engine's own, built by {@link AdminStatements} from a {@link JobQuery}
 * of 50 jobs a page, and run as {@code JdbcTemplate} runs them: a statement prepared on a pooled
 * connection for every call, every column of every row read. Each is run up to {@value #RUNS} times
 * (fewer when one takes seconds, never fewer than {@value #MIN_RUNS}); the median and the fastest and
 * slowest runs are reported. The deep page starts at a cursor in the middle of the ids the search can
 * match. The plan is PostgreSQL's {@code EXPLAIN} of the statement with the same values, taken once;
 * a first page over the target is explained once more with {@code ANALYZE}, into the log.
 *
 * <p>The figures are absolute, not pgqueue against a raw loop of the same SQL (these statements
 * are the engine's whole cost). Beside each page stands the plainest page there is, the newest 50
 * jobs by primary key, and beside each count a count of every row, both written by hand and run
 * the same way; the target is a page in at most {@value #PAGE_TARGET_MS} ms.
 */
final class AdminWorkload implements Workload {

	static final int RUNS = 11;

	static final int MIN_RUNS = 3;

	/** After this much time on one statement, it is run no more unless it has run {@value #MIN_RUNS} times. */
	static final Duration BUDGET = Duration.ofSeconds(15);

	static final int PAGE_TARGET_MS = 100;

	static final int AVAILABLE = 3_000;

	static final int SCHEDULED = 2_000;

	static final String PAGE_BASELINE = "raw newest 50";

	static final String COUNT_BASELINE = "raw count of all rows";

	private static final JsonMapper JSON = JsonMapper.builder().build();

	@Override
	public String name() {
		return "admin";
	}

	@Override
	public List<Result> run(Context context) {
		long finished = context.profile().adminFinishedRows();
		List<Result> results = new ArrayList<>();
		try (BenchSchema schema = context.database().createSchema("admin")) {
			HikariDataSource pool = schema.pool("admin", 1);
			long start = System.nanoTime();
			AdminRows.Loaded loaded = AdminRows.load(schema, finished, AVAILABLE, SCHEDULED);
			context.progress("%,d finished, %,d available and %,d scheduled jobs inserted in %.1f s", finished,
					AVAILABLE, SCHEDULED, seconds(start));
			start = System.nanoTime();
			// Explicitly: the server may run without autovacuum, and a fresh table has no statistics.
			schema.settle(finished);
			context.progress("VACUUM (ANALYZE) and CHECKPOINT in %.1f s", seconds(start));

			Statement newest = new Statement("SELECT id, public_id, kind, queue, state, priority, attempt, "
					+ "max_attempts, last_error, created_at, run_at, started_at, finished_at, snoozes, tags FROM "
					+ schema.allJobs() + " ORDER BY id DESC LIMIT 50", List.of());
			Statement all = new Statement("SELECT count(*) FROM " + schema.allJobs(), List.of());
			// Unmeasured: the first statements of a run pay for loading and compiling the JDBC path.
			time(pool, newest);
			time(pool, all);
			Timing rawPage = time(pool, newest);
			Timing rawCount = time(pool, all);
			context.progress("%-36s page %s ms   count of all rows %s ms (%,d rows)", "raw baselines", rawPage,
					rawCount, rawCount.rows());

			AdminStatements statements = new AdminStatements(schema.name(), false);
			List<Row> rows = new ArrayList<>();
			for (Search search : searches(loaded)) {
				Row row = measure(pool, statements, search);
				rows.add(row);
				context.progress("%-36s page %s ms   deep %s ms   count %s ms (%,d rows)   %s", search.name(),
						row.first(), row.deep(), row.count(), row.count().rows(), row.listPlan());
				if (row.first().p50() > PAGE_TARGET_MS) {
					explainSlowPage(context, pool, statements.listJobs(search.query()));
				}
				results.add(new Result(name(), search.name(), "first page p50", "ms", row.first().p50(), rawPage.p50(),
						PAGE_BASELINE, false, Target.valueAtMost(PAGE_TARGET_MS)));
				results.add(new Result(name(), search.name(), "deep page p50", "ms", row.deep().p50(), rawPage.p50(),
						PAGE_BASELINE, false, Target.valueAtMost(PAGE_TARGET_MS)));
				results.add(new Result(name(), search.name(), "count p50", "ms", row.count().p50(), rawCount.p50(),
						COUNT_BASELINE, false, null));
			}
			context.log().printf("%n%s%n", table(rows, finished));
		}
		return results;
	}

	/** The searches, each with a cursor in the middle of the ids it can match. */
	static List<Search> searches(AdminRows.Loaded loaded) {
		long finishedMiddle = (loaded.firstFinished() + loaded.lastFinished()) / 2;
		long waitingMiddle = (loaded.lastFinished() + 1 + loaded.last()) / 2;
		Instant hourAgo = loaded.newest().minus(Duration.ofHours(1));
		long halfHourAgo = loaded.finishedAt(loaded.newest().minus(Duration.ofMinutes(30)));
		JobQuery all = JobQuery.all();
		JobQuery failed = all.state(JobState.FAILED);
		JobQuery completed = all.state(JobState.COMPLETED);
		return List.of(new Search("failed of a queue", failed.queue("reports"), finishedMiddle),
				new Search("failed of a kind", failed.kind(AdminRows.MIDDLE_KIND), finishedMiddle),
				new Search("failed in the last hour", failed.finishedSince(hourAgo), halfHourAgo),
				new Search("completed of a common kind", completed.kind(AdminRows.COMMON_KIND), finishedMiddle),
				new Search("completed of a rare kind", completed.kind(AdminRows.RARE_KIND), finishedMiddle),
				new Search("tag, common", all.tag(AdminRows.COMMON_TAG), finishedMiddle),
				new Search("tag, rare", all.tag(AdminRows.RARE_TAG), finishedMiddle),
				new Search("error text, common", all.error(AdminRows.COMMON_ERROR), finishedMiddle),
				new Search("error text, rare", all.error(AdminRows.RARE_ERROR), finishedMiddle),
				new Search("cancelled", all.state(JobState.CANCELLED), finishedMiddle),
				new Search("available of a queue", all.state(JobState.AVAILABLE).queue("mail"), waitingMiddle),
				new Search("scheduled", all.state(JobState.SCHEDULED), waitingMiddle),
				new Search("kind alone, common", all.kind(AdminRows.COMMON_KIND), finishedMiddle),
				new Search("kind alone, rare", all.kind(AdminRows.RARE_KIND), finishedMiddle),
				new Search("no filter (newest 50)", all, finishedMiddle));
	}

	private static Row measure(DataSource pool, AdminStatements statements, Search search) {
		Statement list = statements.listJobs(search.query());
		Statement deep = statements.listJobs(search.query().before(Long.toString(search.deepCursor())));
		Statement count = statements.countJobs(search.query());
		return new Row(search.name(), plan(pool, list), plan(pool, count), time(pool, list), time(pool, deep),
				time(pool, count));
	}

	/** Runs a statement as {@code JdbcTemplate} would, up to {@value #RUNS} times. */
	private static Timing time(DataSource pool, Statement statement) {
		List<Double> millis = new ArrayList<>();
		long rows = 0;
		long start = System.nanoTime();
		while (millis.size() < RUNS && (millis.size() < MIN_RUNS || System.nanoTime() - start < BUDGET.toNanos())) {
			long runStart = System.nanoTime();
			rows = run(pool, statement);
			millis.add((System.nanoTime() - runStart) / 1e6);
		}
		return new Timing(millis, rows);
	}

	/** Rows returned, or the count a count statement returns. */
	private static long run(DataSource pool, Statement statement) {
		try (Connection connection = pool.getConnection();
				PreparedStatement prepared = prepare(connection, statement.sql(), statement);
				ResultSet rs = prepared.executeQuery()) {
			int columns = rs.getMetaData().getColumnCount();
			long rows = 0;
			Object first = null;
			while (rs.next()) {
				first = rs.getObject(1);
				for (int i = 2; i <= columns; i++) {
					rs.getObject(i);
				}
				rows++;
			}
			return (columns == 1 && rows == 1 && first instanceof Long counted) ? counted : rows;
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Failed: " + ex.getMessage() + "\n" + statement.sql(), ex);
		}
	}

	private static PreparedStatement prepare(Connection connection, String sql, Statement statement)
			throws SQLException {
		PreparedStatement prepared = connection.prepareStatement(sql);
		List<Object> arguments = statement.arguments();
		for (int i = 0; i < arguments.size(); i++) {
			prepared.setObject(i + 1, arguments.get(i));
		}
		return prepared;
	}

	/**
	 * The scans of the statement's plan for these values, in plan order: each index by name (with
	 * "backward" when it is read from its end, "only" for an index-only scan, "bitmap" for a bitmap
	 * scan), or "seq scan"; "parallel" before a scan that workers share.
	 */
	private static String plan(DataSource pool, Statement statement) {
		try (Connection connection = pool.getConnection();
				PreparedStatement prepared = prepare(connection, "EXPLAIN (FORMAT JSON) " + statement.sql(), statement);
				ResultSet rs = prepared.executeQuery()) {
			rs.next();
			Set<String> scans = new LinkedHashSet<>();
			scans(JSON.readTree(rs.getString(1)).get(0).get("Plan"), scans);
			return String.join(" + ", scans);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Failed: " + ex.getMessage() + "\n" + statement.sql(), ex);
		}
	}

	/**
	 * Prints what a page over the target did, run once more under {@code EXPLAIN (ANALYZE, BUFFERS)}:
	 * planned for its values, as the timed runs were at first, and as a generic plan, which PostgreSQL
	 * may choose for a statement prepared on the server once it has run five times (pgjdbc prepares on
	 * the server from the fifth use on a connection).
	 */
	private static void explainSlowPage(Context context, DataSource pool, Statement statement) {
		try (Connection connection = pool.getConnection()) {
			context.progress("  EXPLAIN (ANALYZE, BUFFERS), planned for its values:");
			try (PreparedStatement prepared = prepare(connection, "EXPLAIN (ANALYZE, BUFFERS) " + statement.sql(),
					statement); ResultSet rs = prepared.executeQuery()) {
				while (rs.next()) {
					context.progress("    %s", rs.getString(1));
				}
			}
			// EXPLAIN of a statement with parameters plans it for their values; only EXECUTE of a
			// statement prepared in SQL shows the generic plan.
			StringBuilder sql = new StringBuilder();
			int parameter = 0;
			for (char c : statement.sql().toCharArray()) {
				sql.append((c == '?') ? "$" + (++parameter) : String.valueOf(c));
			}
			List<String> values = statement.arguments().stream().map(AdminWorkload::literal).toList();
			try (java.sql.Statement plain = connection.createStatement()) {
				plain.execute("SET plan_cache_mode = force_generic_plan");
				plain.execute("PREPARE admin_slow_page AS " + sql);
				context.progress("  EXPLAIN (ANALYZE, BUFFERS), generic plan:");
				try (ResultSet rs = plain.executeQuery("EXPLAIN (ANALYZE, BUFFERS) EXECUTE admin_slow_page("
						+ String.join(", ", values) + ")")) {
					while (rs.next()) {
						context.progress("    %s", rs.getString(1));
					}
				}
				plain.execute("DEALLOCATE admin_slow_page");
				plain.execute("RESET plan_cache_mode");
			}
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Failed: " + ex.getMessage() + "\n" + statement.sql(), ex);
		}
	}

	/** A parameter's value as an SQL literal, for {@code EXECUTE}. */
	private static String literal(Object value) {
		if (value instanceof Number) {
			return value.toString();
		}
		String text = (value instanceof Timestamp timestamp) ? timestamp.toInstant().toString() : value.toString();
		return "'" + text.replace("'", "''") + "'";
	}

	private static void scans(JsonNode node, Set<String> scans) {
		String type = node.path("Node Type").asString();
		String index = node.path("Index Name").asString();
		// Worth naming: starting the workers of a parallel scan can cost a page more than its reading.
		String parallel = node.path("Parallel Aware").asBoolean() ? "parallel " : "";
		switch (type) {
			case "Seq Scan" -> scans.add(parallel + "seq scan");
			case "Index Scan" -> scans.add(parallel + index
					+ ("Backward".equals(node.path("Scan Direction").asString()) ? " backward" : ""));
			case "Index Only Scan" -> scans.add(parallel + index + " only");
			case "Bitmap Index Scan" -> scans.add("bitmap " + index);
			default -> {
			}
		}
		for (JsonNode child : node.path("Plans")) {
			scans(child, scans);
		}
	}

	/** The searches as a Markdown table, for docs/benchmarks.md. */
	static String table(List<Row> rows, long finished) {
		StringBuilder table = new StringBuilder(String.format(Locale.ROOT,
				"Operator searches on %,d finished jobs; ms, median (fastest–slowest) of the runs%n%n", finished));
		table.append("| Search | Jobs counted | Plan of the page | First page | Deep page | Plan of the count | Count |\n");
		table.append("| --- | ---: | --- | ---: | ---: | --- | ---: |\n");
		for (Row row : rows) {
			table.append(String.format(Locale.ROOT, "| %s | %,d | %s | %s | %s | %s | %s |%n", row.search(),
					row.count().rows(), row.listPlan(), row.first(), row.deep(), row.countPlan(), row.count()));
		}
		return table.toString();
	}

	private static double seconds(long start) {
		return (System.nanoTime() - start) / 1e9;
	}

	/**
	 * One search.
	 *
	 * @param name what it finds, in words
	 * @param query its filters, first page
	 * @param deepCursor the cursor of its deep page
	 */
	record Search(String name, JobQuery query, long deepCursor) {

	}

	/** What one search measured. */
	record Row(String search, String listPlan, String countPlan, Timing first, Timing deep, Timing count) {

	}

	/**
	 * The runs of one statement.
	 *
	 * @param millis how long each run took, in the order run
	 * @param rows rows the last run returned, or its count
	 */
	record Timing(List<Double> millis, long rows) {

		double p50() {
			return Profile.median(this.millis);
		}

		/** The median, then the fastest and slowest run, and the number of runs when fewer than
		 * {@value AdminWorkload#RUNS}. */
		@Override
		public String toString() {
			double min = this.millis.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
			double max = this.millis.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
			return Result.format(p50()) + " (" + Result.format(min) + "–" + Result.format(max)
					+ ((this.millis.size() < RUNS) ? ", " + this.millis.size() + " runs" : "") + ")";
		}

	}

}
