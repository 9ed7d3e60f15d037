package dev.pgqueue.testkit;

import java.util.List;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.test.context.TestContextManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each test class annotated {@code @IsolatedQueueSchema} gets a fresh schema for pgqueue's tables,
 * dropped when its context closes after the class. The classes below are run by hand, through the
 * Spring TestContext framework's own manager, so that their schemas can be looked at before and
 * after.
 */
class IsolatedQueueSchemaTests {

	/** A connection of the tests' own, outside every application context. */
	private static SingleConnectionDataSource connection;

	private final JdbcTemplate database = new JdbcTemplate(connection);

	@BeforeAll
	static void connect() {
		TestDatabase server = TestDatabase.get();
		connection = new SingleConnectionDataSource(server.jdbcUrl(), server.username(), server.password(), true);
	}

	@AfterAll
	static void disconnect() {
		connection.destroy();
	}

	@Test
	void eachClassGetsASchemaOfItsOwnThatIsDroppedAfterTheClass() throws Exception {
		RunClass first = RunClass.of(PgqueueOnly.class);
		RunClass second = RunClass.of(PgqueueOnly.Again.class);
		String firstSchema = first.test().schema();
		String secondSchema = second.test().schema();

		assertThat(firstSchema).startsWith("pgqueue_test_").isNotEqualTo(secondSchema);
		assertThat(tables(firstSchema)).contains("pgqueue_jobs", "pgqueue_schema_history");
		assertThat(first.test().currentSchema()).as("the application's own schema").isEqualTo("public");

		first.finish();
		assertThat(schemaExists(firstSchema)).as("schema %s after its class", firstSchema).isFalse();
		assertThat(schemaExists(secondSchema)).as("the other class's schema %s", secondSchema).isTrue();
		second.finish();
		assertThat(schemaExists(secondSchema)).as("schema %s after its class", secondSchema).isFalse();
	}

	@Test
	void theApplicationsOwnTablesGoInTheSchemaWhenAsked() throws Exception {
		RunClass run = RunClass.of(WithApplicationTables.class);
		String schema = run.test().schema();

		assertThat(run.test().currentSchema()).isEqualTo(schema);
		run.test().jdbc.execute(KitTestApplication.CREATE_GREETINGS);
		assertThat(tables(schema)).contains("greetings", "pgqueue_jobs");

		run.finish();
		assertThat(schemaExists(schema)).isFalse();
	}

	private List<String> tables(String schema) {
		return this.database.queryForList("SELECT table_name FROM information_schema.tables WHERE table_schema = ?",
				String.class, schema);
	}

	private boolean schemaExists(String schema) {
		return Boolean.TRUE.equals(this.database
			.queryForObject("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ?)", Boolean.class, schema));
	}

	/** A test class's life through the TestContext framework: its context made, then closed after the class. */
	private record RunClass(TestContextManager manager, PgqueueOnly test) {

		static RunClass of(Class<? extends PgqueueOnly> testClass) throws Exception {
			TestContextManager manager = new TestContextManager(testClass);
			manager.beforeTestClass();
			PgqueueOnly test = testClass.getDeclaredConstructor().newInstance();
			manager.prepareTestInstance(test);
			return new RunClass(manager, test);
		}

		void finish() throws Exception {
			this.manager.afterTestClass();
		}

	}

	@SpringBootTest(classes = KitTestApplication.class, properties = "pgqueue.enabled=false")
	@QueueTestDatabase
	@IsolatedQueueSchema
	static class PgqueueOnly {

		@Autowired
		QueueEngine engine;

		@Autowired
		JdbcTemplate jdbc;

		String schema() {
			return this.engine.database().settings().schema().value();
		}

		String currentSchema() {
			return this.jdbc.queryForObject("SELECT current_schema()", String.class);
		}

		/** The same configuration in another class: a context, and a schema, of its own. */
		static class Again extends PgqueueOnly {

		}

	}

	@IsolatedQueueSchema(applicationTables = true)
	static class WithApplicationTables extends PgqueueOnly {

	}

}
