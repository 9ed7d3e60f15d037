package dev.pgqueue;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.pgqueue.engine.sql.AdminStatements;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What the migration leaves in the catalog: storage parameters, the claim index the claim
 * statements rely on, and a history table of pgqueue's own.
 */
class SchemaCatalogTests {

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("catalog");
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void jobsTableLeavesRoomForUpdatesAndVacuumsEagerly() {
		List<String> options = fixture.jdbc()
			.queryForList("SELECT unnest(reloptions) FROM pg_class WHERE oid = ?::regclass", String.class,
					fixture.table());
		assertThat(options).containsExactlyInAnyOrder("fillfactor=70", "autovacuum_vacuum_scale_factor=0.01",
				"autovacuum_vacuum_threshold=1000", "autovacuum_vacuum_insert_scale_factor=0.01",
				"autovacuum_analyze_scale_factor=0.02", "autovacuum_vacuum_cost_limit=2000",
				"autovacuum_vacuum_cost_delay=2");
	}

	@Test
	void claimIndexHoldsOnlyAvailableJobsInClaimOrder() {
		Map<String, Object> index = fixture.jdbc()
			.queryForMap("""
					SELECT pg_get_indexdef(i.indexrelid) AS definition,
					       pg_get_expr(i.indpred, i.indrelid) AS predicate,
					       i.indrelid = ?::regclass AS on_jobs
					FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
					WHERE c.relname = 'pgqueue_jobs_claim_idx' AND c.relnamespace = ?::regnamespace
					""", fixture.table(), fixture.schema().name());
		assertThat(index).containsEntry("on_jobs", true).containsEntry("predicate", "(state = 'available'::text)");
		assertThat((String) index.get("definition")).contains("USING btree (queue, priority DESC, run_at, id)")
			.endsWith("WHERE (state = 'available'::text)");
	}

	@Test
	void claimStatementsUseTheClaimIndexAmongManyJobsNotDue() {
		fixture.jdbc().update("INSERT INTO " + fixture.table() + " (public_id, kind, queue, payload, state, attempt, "
				+ "max_attempts, run_at) SELECT gen_random_uuid(), 'report.build', 'reports', '{}', 'scheduled', 1, "
				+ "10, now() + interval '1 hour' FROM generate_series(1, 50000)");
		fixture.jdbc().update("INSERT INTO " + fixture.table() + " (public_id, kind, queue, payload, state, "
				+ "max_attempts, priority) SELECT gen_random_uuid(), 'report.build', 'reports', '{}', 'available', 10, "
				+ "(n % 3)::smallint FROM generate_series(1, 1000) n");
		fixture.jdbc().execute("ANALYZE " + fixture.table());
		String[] kinds = { "report.build" };

		StatementRecorder recorder = new StatementRecorder(fixture.dataSource());
		JobRepository repository = new JobRepository(new JdbcTemplate(recorder),
				SchemaName.of(fixture.schema().name()));
		assertThat(repository.claimLocked("reports", kinds, 10)).hasSize(10);
		assertThat(repository.claimLeased("reports", kinds, 0, "catalog-test", Duration.ofMinutes(1))).isEmpty();
		assertThat(recorder.statements()).hasSize(2);

		String lockedPlan = explain(recorder.statements().get(0), "reports", kinds, 10);
		assertThat(lockedPlan).contains("Index Scan using pgqueue_jobs_claim_idx")
			.as("the index yields the claim order, no sort needed")
			.doesNotContain("Sort")
			.doesNotContain("Seq Scan");
		String leasedPlan = explain(recorder.statements().get(1), "reports", kinds, 10, "catalog-test", 60_000L,
				java.sql.Timestamp.from(java.time.Instant.now()));
		assertThat(leasedPlan).contains("Index Scan using pgqueue_jobs_claim_idx").doesNotContain("Sort");
	}

	@Test
	void guardedCompletionsLookJobsUpByPrimaryKeyAndTheRescuerUsesTheLeaseIndex() {
		String table = fixture.table();
		fixture.jdbc().execute("INSERT INTO " + table + " (public_id, kind, queue, payload, state, max_attempts, "
				+ "attempt, lease_owner, lease_until) SELECT gen_random_uuid(), 'k', 'q', '{}', 'running', 3, 1, 'o', "
				+ "now() + interval '5 minutes' FROM generate_series(1, 20000)");
		fixture.jdbc().execute("ANALYZE " + table);
		String completion = String.join("\n", fixture.jdbc().queryForList("EXPLAIN DELETE FROM " + table
				+ " j USING unnest('{1,2,3}'::bigint[], '{1,1,1}'::int[]) AS d(id, attempt)"
				+ " WHERE j.id = d.id AND j.attempt = d.attempt AND j.state = 'running'", String.class));
		assertThat(completion).contains("pgqueue_jobs_pkey").doesNotContain("pgqueue_jobs_lease_idx");
		String rescue = String.join("\n", fixture.jdbc().queryForList("EXPLAIN SELECT id FROM " + table
				+ " WHERE state = 'running' AND lease_until < clock_timestamp() ORDER BY lease_until LIMIT 1000",
				String.class));
		assertThat(rescue).contains("pgqueue_jobs_lease_idx");
		fixture.jdbc().execute("DELETE FROM " + table + " WHERE queue = 'q'");
	}

	@Test
	void cancelledIsAStateTheCleanerFindsAmongFinishedJobs() {
		String check = fixture.jdbc().queryForObject("SELECT pg_get_constraintdef(oid) FROM pg_constraint "
				+ "WHERE conname = 'pgqueue_jobs_state_check' AND conrelid = ?::regclass", String.class, fixture.table());
		assertThat(check).contains("'cancelled'::text").contains("'failed'::text");
		String failed = fixture.jdbc().queryForObject("SELECT pg_get_expr(relpartbound, oid) FROM pg_class "
				+ "WHERE oid = ?::regclass", String.class, fixture.schema().name() + ".pgqueue_finished_jobs_failed");
		assertThat(failed).isEqualTo("FOR VALUES IN ('failed', 'cancelled')");
		String finished = fixture.jdbc().queryForObject("SELECT pg_get_indexdef(?::regclass)", String.class,
				fixture.schema().name() + ".pgqueue_finished_jobs_finished_idx");
		assertThat(finished).contains("(state, finished_at)");
	}

	/**
	 * The claimed table holds unfinished jobs only: no index of finished jobs is left on it, and a job
	 * that reaches a finished state by any update leaves it for the finished jobs' table in the same
	 * transaction, with the same id.
	 */
	@Test
	void finishedJobsLeaveTheClaimedTable() {
		List<String> indexes = fixture.jdbc().queryForList("SELECT indexrelid::regclass::text FROM pg_index "
				+ "WHERE indrelid = ?::regclass ORDER BY 1", String.class, fixture.table());
		assertThat(indexes).noneMatch((index) -> index.endsWith("_finished_idx") || index.endsWith("_failed_idx")
				|| index.endsWith("_kind_idx"));
		fixture.jdbc().update("INSERT INTO " + fixture.table() + " (public_id, kind, queue, payload, state, "
				+ "max_attempts) SELECT gen_random_uuid(), 'k', 'moves', '{}', 'available', 1 FROM generate_series(1, 3)");
		List<Long> ids = fixture.jdbc().queryForList("SELECT id FROM " + fixture.table() + " WHERE queue = 'moves' "
				+ "ORDER BY id", Long.class);
		fixture.transactionTemplate().executeWithoutResult((status) -> {
			fixture.jdbc().update("UPDATE " + fixture.table() + " SET state = 'failed', finished_at = now() WHERE id = ?",
					ids.get(0));
			fixture.jdbc().update("UPDATE " + fixture.table() + " SET state = 'cancelled', finished_at = now() "
					+ "WHERE id = ?", ids.get(1));
			fixture.jdbc().update("UPDATE " + fixture.table() + " SET priority = 5 WHERE id = ?", ids.get(2));
		});
		assertThat(fixture.jdbc().queryForList("SELECT id FROM " + fixture.table() + " WHERE queue = 'moves'",
				Long.class)).containsExactly(ids.get(2));
		assertThat(fixture.jdbc().queryForList("SELECT id || ' ' || state FROM " + fixture.finishedTable()
				+ " WHERE queue = 'moves' ORDER BY id", String.class))
			.containsExactly(ids.get(0) + " failed", ids.get(1) + " cancelled");
		assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE queue = 'moves'",
				Long.class)).isEqualTo(3);
		fixture.jdbc().execute("DELETE FROM " + fixture.table() + " WHERE queue = 'moves'");
		fixture.jdbc().execute("DELETE FROM " + fixture.finishedTable() + " WHERE queue = 'moves'");
	}

	/** Both tables have the same columns in the same order, as the moves between them assume. */
	@Test
	void theFinishedJobsTableHasTheClaimedTablesColumnsInItsOrder() {
		String columns = """
				SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
				FROM pg_attribute WHERE attrelid = ?::regclass AND attnum > 0 AND NOT attisdropped""";
		String unfinished = fixture.jdbc().queryForObject(columns, String.class, fixture.table());
		assertThat(unfinished).startsWith("id bigint, public_id uuid");
		assertThat(fixture.jdbc().queryForObject(columns, String.class, fixture.finishedTable())).isEqualTo(unfinished);
		assertThat(fixture.jdbc().queryForObject(columns, String.class, fixture.allJobs())).isEqualTo(unfinished);
	}

	/**
	 * An operator's list of a queue's failed jobs reads the finished jobs' partial index of failed and
	 * cancelled jobs, and neither the claimed table nor the completed jobs.
	 */
	@Test
	void listsOfFailedJobsReadTheirOwnPartialIndex() {
		String finished = fixture.finishedTable();
		fixture.jdbc().update("INSERT INTO " + finished + " (id, public_id, kind, queue, payload, state, attempt, "
				+ "max_attempts, finished_at) SELECT -n, gen_random_uuid(), 'k', CASE WHEN n % 100 = 0 THEN 'rare' "
				+ "ELSE 'busy' END, '{}', CASE WHEN n % 50 = 1 THEN 'failed' ELSE 'completed' END, 1, 1, now() "
				+ "FROM generate_series(1, 50000) n");
		fixture.jdbc().execute("ANALYZE " + finished);
		AdminStatements.Statement list = new AdminStatements(SchemaName.of(fixture.schema().name()), false)
			.listJobs(JobQuery.all().queue("rare").state(JobState.FAILED));
		String plan = String.join("\n",
				fixture.jdbc().queryForList("EXPLAIN " + list.sql(), String.class, list.argumentArray()));
		assertThat(plan).contains("pgqueue_finished_jobs_failed_")
			.doesNotContain("Seq Scan")
			.doesNotContain("completed")
			.doesNotContain(fixture.table());
		String definition = fixture.jdbc().queryForObject("SELECT pg_get_indexdef(?::regclass)", String.class,
				fixture.schema().name() + ".pgqueue_finished_jobs_failed_idx");
		assertThat(definition).contains("(state, queue, id)")
			.endsWith("WHERE (state = ANY (ARRAY['failed'::text, 'cancelled'::text]))");
		fixture.jdbc().execute("DELETE FROM " + finished + " WHERE kind = 'k'");
	}

	@Test
	void queueHistoryHasOneRowPerQueueAndMinute() {
		List<String> key = fixture.jdbc().queryForList("""
				SELECT a.attname FROM pg_index i
				JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
				WHERE i.indrelid = ?::regclass AND i.indisprimary
				ORDER BY array_position(i.indkey::int2[], a.attnum)
				""", String.class, fixture.schema().name() + ".pgqueue_queue_history");
		assertThat(key).containsExactly("queue", "minute");
		List<String> columns = fixture.jdbc().queryForList("""
				SELECT column_name FROM information_schema.columns
				WHERE table_schema = ? AND table_name = 'pgqueue_queue_history' ORDER BY ordinal_position
				""", String.class, fixture.schema().name());
		assertThat(columns).containsExactly("queue", "minute", "completed", "failed", "retried", "waits",
				"wait_ms_sum", "wait_ms_max", "runs", "run_ms_sum", "run_ms_max");
	}

	@Test
	void migrationHistoryLivesInItsOwnTableInTheQueueSchema() {
		List<Map<String, Object>> history = fixture.jdbc()
			.queryForList("SELECT version, success FROM " + SchemaName.of(fixture.schema().name())
				.qualify(QueueMigrator.HISTORY_TABLE) + " ORDER BY installed_rank");
		assertThat(history).containsExactly(Map.of("version", "1", "success", true),
				Map.of("version", "2", "success", true), Map.of("version", "3", "success", true),
				Map.of("version", "4", "success", true), Map.of("version", "5", "success", true),
				Map.of("version", "6", "success", true), Map.of("version", "7", "success", true),
				Map.of("version", "8", "success", true), Map.of("version", "9", "success", true),
				Map.of("version", "10", "success", true), Map.of("version", "11", "success", true),
				Map.of("version", "12", "success", true), Map.of("version", "13", "success", true),
				Map.of("version", "14", "success", true), Map.of("version", "15", "success", true),
				Map.of("version", "16", "success", true), Map.of("version", "17", "success", true),
				Map.of("version", "18", "success", true), Map.of("version", "19", "success", true),
				Map.of("version", "20", "success", true), Map.of("version", "21", "success", true),
				Map.of("version", "22", "success", true));
		assertThat(fixture.jdbc()
			.queryForObject("SELECT to_regclass(?) IS NULL", Boolean.class,
					fixture.schema().name() + ".flyway_schema_history"))
			.as("the application's own history table is left alone")
			.isTrue();
	}

	@Test
	void migratingAgainIsANoOp() {
		long rowsBefore = historyRows(fixture.schema());
		MigrateResult result = new QueueMigrator(fixture.dataSource(), SchemaName.of(fixture.schema().name()), true)
			.migrate();
		assertThat(result.migrationsExecuted).isZero();
		assertThat(result.success).isTrue();
		assertThat(historyRows(fixture.schema())).isEqualTo(rowsBefore);
	}

	@Test
	void migratingASchemaThatHoldsApplicationTablesStillCreatesTheJobsTable() {
		try (TestSchema schema = TestDatabase.get().createSchema("catalog_app")) {
			schema.jdbcTemplate().execute("CREATE TABLE orders (id bigint PRIMARY KEY)");
			MigrateResult result = new QueueMigrator(schema.dataSource(), SchemaName.of(schema.name()), true).migrate();
			assertThat(result.migrationsExecuted).isEqualTo(22);
			assertThat(schema.jdbcTemplate()
				.queryForList("SELECT version FROM " + SchemaName.of(schema.name()).qualify(QueueMigrator.HISTORY_TABLE)
						+ " ORDER BY installed_rank", String.class))
				.containsExactly("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22");
			assertThat(schema.jdbcTemplate()
				.queryForObject("SELECT to_regclass(?) IS NOT NULL", Boolean.class,
						SchemaName.of(schema.name()).qualify("pgqueue_jobs")))
				.isTrue();
		}
	}

	/**
	 * The columns of attempt history, output, snoozes and tags arrive without rewriting a table that
	 * already holds jobs (the table keeps its file, so the ALTER held its lock only to update the
	 * catalog), and the tags, kind and error indexes are built without a transaction around them
	 * (concurrently), valid, the partial ones partial.
	 */
	@Test
	void upgradingATableThatHoldsJobsRewritesNothingAndBuildsTheTagsIndexConcurrently() {
		try (TestSchema schema = TestDatabase.get().createSchema("catalog_upgrade")) {
			Flyway.configure()
				.dataSource(schema.dataSource())
				.schemas(schema.name())
				.table("pgqueue_schema_history")
				.locations("classpath:dev/pgqueue/schema/migration")
				.baselineOnMigrate(true)
				.baselineVersion("0")
				.target("9")
				.load()
				.migrate();
			String table = schema.name() + ".pgqueue_jobs";
			schema.jdbcTemplate().update("INSERT INTO " + table + " (public_id, kind, queue, payload, state, "
					+ "max_attempts) SELECT gen_random_uuid(), 'report.build', 'reports', '{}', 'available', 10 "
					+ "FROM generate_series(1, 20000)");
			Long fileBefore = schema.jdbcTemplate()
				.queryForObject("SELECT pg_relation_filenode(?::regclass)", Long.class, table);

			MigrateResult result = new QueueMigrator(schema.dataSource(), SchemaName.of(schema.name()), true).migrate();

			assertThat(result.migrationsExecuted).isEqualTo(13);
			assertThat(schema.jdbcTemplate().queryForObject("SELECT pg_relation_filenode(?::regclass)", Long.class,
					table)).as("the table's file: not rewritten").isEqualTo(fileBefore);
			assertThat(schema.jdbcTemplate().queryForObject("SELECT count(*) FROM " + table
					+ " WHERE snoozes = 0 AND attempts IS NULL AND output IS NULL AND tags IS NULL AND rate_weight IS NULL",
					Long.class))
				.isEqualTo(20000);
			assertThat(index(schema, "pgqueue_jobs_tags_idx")).containsEntry("valid", true)
				.extractingByKey("definition", org.assertj.core.api.InstanceOfAssertFactories.STRING)
				.contains("USING gin (tags)")
				.endsWith("WHERE (tags IS NOT NULL)");
			assertThat(index(schema, "pgqueue_finished_jobs_kind_idx")).containsEntry("valid", true)
				.extractingByKey("definition", org.assertj.core.api.InstanceOfAssertFactories.STRING)
				.endsWith("USING btree (kind, id)");
			assertThat(schema.jdbcTemplate().queryForObject("SELECT to_regclass(?) IS NULL", Boolean.class,
					schema.name() + ".pgqueue_jobs_kind_idx")).as("the kind index left the claimed table (V22)").isTrue();
			assertThat(index(schema, "pgqueue_jobs_errors_idx")).containsEntry("valid", true)
				.extractingByKey("definition", org.assertj.core.api.InstanceOfAssertFactories.STRING)
				.endsWith("USING btree (id) WHERE (last_error IS NOT NULL)");
		}
	}

	private static Map<String, Object> index(TestSchema schema, String name) {
		return schema.jdbcTemplate().queryForMap("""
				SELECT i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) AS definition
				FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
				WHERE c.relname = ? AND c.relnamespace = ?::regnamespace
				""", name, schema.name());
	}

	/**
	 * Searches by a rare kind and by error text read the finished jobs' own indexes rather than their
	 * table backwards past every other job (the claimed table, which holds unfinished work only, has
	 * no kind index to keep up).
	 */
	@Test
	void searchesByKindAndByErrorTextReadTheirOwnIndexes() {
		String table = fixture.finishedTable();
		fixture.jdbc().update("INSERT INTO " + table + " (id, public_id, kind, queue, payload, state, attempt, "
				+ "max_attempts, finished_at, last_error) SELECT nextval(pg_get_serial_sequence('" + fixture.table()
				+ "', 'id')), gen_random_uuid(), CASE WHEN n % 5000 = 0 THEN "
				+ "'search.rare' ELSE 'search.common' END, 'search', '{}', CASE WHEN n % 100 = 0 THEN 'failed' ELSE "
				+ "'completed' END, 1, 1, now(), CASE WHEN n % 100 = 0 THEN 'boom ' || (n % 7) END "
				+ "FROM generate_series(1, 100000) n");
		fixture.jdbc().execute("ANALYZE " + table);
		AdminStatements statements = new AdminStatements(SchemaName.of(fixture.schema().name()), false);
		AdminStatements.Statement byKind = statements.listJobs(JobQuery.all().kind("search.rare"));
		AdminStatements.Statement byError = statements.listJobs(JobQuery.all().error("boom 3"));
		assertThat(plan(byKind)).contains("_kind_id_idx").doesNotContain("Seq Scan on pgqueue_finished_jobs");
		assertThat(plan(byError)).contains("pgqueue_jobs_errors_idx")
			.contains("_id_idx1")
			.doesNotContain("Seq Scan on pgqueue_finished_jobs");
		assertThat(plan(statements.countJobs(JobQuery.all().kind("search.rare")))).contains("_kind_id_idx");
		fixture.jdbc().execute("DELETE FROM " + table + " WHERE queue = 'search'");
	}

	private static String plan(AdminStatements.Statement statement) {
		return String.join("\n",
				fixture.jdbc().queryForList("EXPLAIN " + statement.sql(), String.class, statement.argumentArray()));
	}

	@Test
	void verifyingWithoutMigratingFailsOnAMissingJobsTableNamingTheSetting() {
		try (TestSchema schema = TestDatabase.get().createSchema("catalog_empty")) {
			QueueMigrator migrator = new QueueMigrator(schema.dataSource(), SchemaName.of(schema.name()), false);
			assertThatExceptionOfType(InvalidQueueConfigurationException.class).isThrownBy(migrator::afterPropertiesSet)
				.withMessageContaining(schema.name() + ".pgqueue_jobs does not exist")
				.withMessageContaining("pgqueue.schema.migrate")
				.satisfies((ex) -> assertThat(ex.action()).contains("dev/pgqueue/schema/migration")
					.contains("pgqueue.schema.migrate=true"));
		}
	}

	@Test
	void schemaNameRejectsNamesThatAreNotPlainLowerCaseIdentifiers() {
		List<String> invalid = List.of("Jobs", "jobs\"; DROP TABLE x; --", "jobs;", "\"jobs\"", "jobs-queue",
				"1jobs", "", "pg_jobs", "j".repeat(64));
		for (String name : invalid) {
			assertThatIllegalArgumentException().as("schema name '%s'", name)
				.isThrownBy(() -> SchemaName.of(name))
				.withMessageContaining("pgqueue.schema.name");
		}
		assertThatIllegalArgumentException().isThrownBy(() -> SchemaName.of(null))
			.withMessageContaining("pgqueue.schema.name");
		assertThatIllegalArgumentException().isThrownBy(() -> SchemaName.of("pg_jobs"))
			.withMessageContaining("reserved");
		assertThat(SchemaName.of("j".repeat(63)).value()).hasSize(63);
		assertThat(SchemaName.of("_jobs_2").qualify("pgqueue_jobs")).isEqualTo("\"_jobs_2\".\"pgqueue_jobs\"");
	}

	private static String explain(String sql, Object... parameters) {
		List<String> lines = fixture.jdbc().query((Connection con) -> {
			var statement = con.prepareStatement("EXPLAIN " + sql);
			for (int i = 0; i < parameters.length; i++) {
				Object value = parameters[i];
				if (value instanceof String[] array) {
					statement.setArray(i + 1, con.createArrayOf("text", array));
				}
				else {
					statement.setObject(i + 1, value);
				}
			}
			return statement;
		}, (rs, i) -> rs.getString(1));
		return String.join("\n", lines);
	}

	private static long historyRows(TestSchema schema) {
		return schema.jdbcTemplate()
			.queryForObject("SELECT count(*) FROM " + SchemaName.of(schema.name()).qualify(QueueMigrator.HISTORY_TABLE),
					Long.class);
	}

}
