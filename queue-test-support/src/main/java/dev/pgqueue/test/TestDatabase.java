package dev.pgqueue.test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Properties;
import java.util.UUID;

import dev.pgqueue.embedded.EmbeddedPostgresServer;
import dev.pgqueue.embedded.TestPostgres;
import org.jspecify.annotations.Nullable;

/**
 * The PostgreSQL server the project's tests run against: {@link TestPostgres}'s choice (a URL from
 * {@code PGQUEUE_TEST_JDBC_URL}, else a Testcontainers PostgreSQL when Docker answers, else an embedded
 * server; never a skipped test), with a fresh schema per test class.
 */
public final class TestDatabase {

	public static final String URL_VARIABLE = TestPostgres.URL_VARIABLE;

	public static final String USERNAME_VARIABLE = TestPostgres.USERNAME_VARIABLE;

	public static final String PASSWORD_VARIABLE = TestPostgres.PASSWORD_VARIABLE;

	private static final TestDatabase INSTANCE = new TestDatabase();

	private TestDatabase() {
	}

	/** Returns the server for this JVM, starting one the first time if that is the way. */
	public static TestDatabase get() {
		TestPostgres.get();
		return INSTANCE;
	}

	/**
	 * The embedded server the tests of this JVM run against, which they may stop and start again; null
	 * when the server came from a URL or a container.
	 */
	public @Nullable EmbeddedPostgresServer embeddedServer() {
		return TestPostgres.get().embeddedServer();
	}

	public String jdbcUrl() {
		return TestPostgres.get().jdbcUrl();
	}

	/** The user name, or {@code null} when the URL carries it. */
	public @Nullable String username() {
		return TestPostgres.get().username();
	}

	/** The password, or {@code null} when the URL carries it or none is needed. */
	public @Nullable String password() {
		return TestPostgres.get().password();
	}

	/** Where the server came from, for messages. */
	public String origin() {
		return TestPostgres.get().origin();
	}

	/** Opens a plain connection outside any pool (for administrative statements in tests). */
	public Connection connect() throws SQLException {
		Properties properties = new Properties();
		if (username() != null) {
			properties.setProperty("user", username());
		}
		if (password() != null) {
			properties.setProperty("password", password());
		}
		return DriverManager.getConnection(jdbcUrl(), properties);
	}

	/**
	 * Creates a new, empty schema with a unique name starting with {@code prefix} and a pool whose
	 * connections use it as their search path. Close it to drop the schema.
	 */
	public TestSchema createSchema(String prefix) {
		String name = (prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12))
			.toLowerCase(Locale.ROOT);
		if (!name.matches("[a-z_][a-z0-9_]{0,62}")) {
			throw new IllegalArgumentException("Schema prefix '" + prefix + "' makes an invalid schema name");
		}
		try (Connection connection = connect()) {
			connection.createStatement().execute("CREATE SCHEMA " + name);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not create test schema " + name + " on " + origin() + " ("
					+ jdbcUrl() + "): " + ex.getMessage(), ex);
		}
		return new TestSchema(this, name);
	}

}
