package dev.pgqueue.test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Properties;
import java.util.UUID;

import dev.pgqueue.embedded.EmbeddedPostgresServer;
import org.jspecify.annotations.Nullable;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The PostgreSQL server the tests run against.
 *
 * <p>Resolved once per JVM, in this order:
 * <ol>
 * <li>{@code PGQUEUE_TEST_JDBC_URL} (with optional {@code PGQUEUE_TEST_USERNAME} and
 * {@code PGQUEUE_TEST_PASSWORD}) from the environment or system properties;</li>
 * <li>a Testcontainers PostgreSQL when a Docker engine answers;</li>
 * <li>otherwise an embedded PostgreSQL started from the binaries on the class path
 * ({@link EmbeddedPostgresServer}; as root it runs as an unprivileged account);</li>
 * <li>if that cannot start either, every database test fails with a message that says how to provide
 * a server. Tests are never skipped for want of a database.</li>
 * </ol>
 * The container and the embedded server run the build's one PostgreSQL version
 * ({@code postgres.server.version} of the parent pom).
 */
public final class TestDatabase {

	public static final String URL_VARIABLE = "PGQUEUE_TEST_JDBC_URL";

	public static final String USERNAME_VARIABLE = "PGQUEUE_TEST_USERNAME";

	public static final String PASSWORD_VARIABLE = "PGQUEUE_TEST_PASSWORD";

	private static volatile TestDatabase instance;

	/** The embedded server this JVM started, if it came to that. */
	private static volatile EmbeddedPostgresServer instanceServer;

	private final String jdbcUrl;

	private final String username;

	private final String password;

	private final String origin;

	private TestDatabase(String jdbcUrl, String username, String password, String origin) {
		this.jdbcUrl = jdbcUrl;
		this.username = username;
		this.password = password;
		this.origin = origin;
	}

	/** Returns the server for this JVM, starting a container the first time if that is the way. */
	public static TestDatabase get() {
		TestDatabase database = instance;
		if (database == null) {
			synchronized (TestDatabase.class) {
				database = instance;
				if (database == null) {
					database = resolve();
					instance = database;
				}
			}
		}
		return database;
	}

	private static TestDatabase resolve() {
		String url = setting(URL_VARIABLE);
		if (url != null) {
			return new TestDatabase(url, setting(USERNAME_VARIABLE), setting(PASSWORD_VARIABLE), URL_VARIABLE);
		}
		if (dockerAvailable()) {
			PostgreSQLContainer container = new PostgreSQLContainer(
					"postgres:" + EmbeddedPostgresServer.packedMajor() + "-alpine");
			container.start();
			Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "pgqueue-test-postgres-stop"));
			return new TestDatabase(container.getJdbcUrl(), container.getUsername(), container.getPassword(),
					"Testcontainers " + container.getDockerImageName());
		}
		EmbeddedPostgresServer server;
		try {
			server = EmbeddedPostgresServer.start();
		}
		catch (RuntimeException ex) {
			throw new IllegalStateException("""
					The pgqueue tests need a real PostgreSQL and found none: %s is not set, no Docker engine \
					answers, and an embedded PostgreSQL did not start (%s).
					Either point them at a server:
					    export %s='jdbc:postgresql://127.0.0.1:5432/test?user=postgres'
					(optionally %s and %s), or start a Docker engine so that Testcontainers can run one.
					Database tests are never skipped."""
				.formatted(URL_VARIABLE, ex.getMessage(), URL_VARIABLE, USERNAME_VARIABLE, PASSWORD_VARIABLE), ex);
		}
		instanceServer = server;
		return new TestDatabase(server.jdbcUrl("postgres"), null, null,
				"an embedded PostgreSQL " + EmbeddedPostgresServer.packedVersion() + " on port " + server.port());
	}

	private static boolean dockerAvailable() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException | LinkageError ex) {
			return false;
		}
	}

	private static String setting(String name) {
		String value = System.getProperty(name);
		if (value == null || value.isBlank()) {
			value = System.getenv(name);
		}
		return (value == null || value.isBlank()) ? null : value.trim();
	}

	/**
	 * The embedded server the tests of this JVM run against, which they may stop and start again; null
	 * when the server came from a URL or a container.
	 */
	public @Nullable EmbeddedPostgresServer embeddedServer() {
		return instanceServer;
	}

	public String jdbcUrl() {
		return this.jdbcUrl;
	}

	/** The user name, or {@code null} when the URL carries it. */
	public String username() {
		return this.username;
	}

	/** The password, or {@code null} when the URL carries it or none is needed. */
	public String password() {
		return this.password;
	}

	/** Where the server came from, for messages. */
	public String origin() {
		return this.origin;
	}

	/** Opens a plain connection outside any pool (for administrative statements in tests). */
	public Connection connect() throws SQLException {
		Properties properties = new Properties();
		if (this.username != null) {
			properties.setProperty("user", this.username);
		}
		if (this.password != null) {
			properties.setProperty("password", this.password);
		}
		return DriverManager.getConnection(this.jdbcUrl, properties);
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
			throw new IllegalStateException("Could not create test schema " + name + " on " + this.origin + " ("
					+ this.jdbcUrl + "): " + ex.getMessage(), ex);
		}
		return new TestSchema(this, name);
	}

}
