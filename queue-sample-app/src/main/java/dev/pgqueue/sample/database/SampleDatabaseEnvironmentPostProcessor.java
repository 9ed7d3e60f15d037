package dev.pgqueue.sample.database;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

import dev.pgqueue.embedded.EmbeddedPostgresServer;
import org.apache.commons.logging.Log;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Chooses the sample's PostgreSQL before the application context starts, so that the sample runs
 * with no setup at all. With {@code sample.database=auto} (the default), in this order:
 * <ol>
 * <li>{@code spring.datasource.url} (or {@code SPRING_DATASOURCE_URL}) when it is set;</li>
 * <li>a PostgreSQL answering on localhost:5432 as user {@code postgres} without a password, in a
 * database {@value #LOCAL_DATABASE} of its own, created when missing;</li>
 * <li>an embedded PostgreSQL, stopped when the application stops;</li>
 * <li>otherwise the application does not start and says what to do.</li>
 * </ol>
 * {@code local} and {@code embedded} force one way; {@code provided} leaves the data source to
 * something else (tests, Testcontainers' service connections).
 */
public class SampleDatabaseEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	static final String MODE_PROPERTY = "sample.database";

	static final String LOCAL_DATABASE = "pgqueue_sample";

	private static final String LOCAL_SERVER = "localhost:5432";

	private static final String PROPERTY_SOURCE = "sampleDatabase";

	private final Log logger;

	public SampleDatabaseEnvironmentPostProcessor(DeferredLogFactory logFactory) {
		this.logger = logFactory.getLog(SampleDatabaseEnvironmentPostProcessor.class);
	}

	@Override
	public int getOrder() {
		// After application.yml and the command line have been read.
		return Ordered.LOWEST_PRECEDENCE;
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		String mode = environment.getProperty(MODE_PROPERTY, "auto").trim().toLowerCase(Locale.ROOT);
		switch (mode) {
			case "provided" -> this.logger.info("Database: provided by the application's configuration ("
					+ MODE_PROPERTY + "=provided)");
			case "auto" -> chooseAutomatically(environment, application);
			case "local" -> {
				String failure = useLocalServer(environment);
				if (failure != null) {
					throw new NoDatabaseException(MODE_PROPERTY + "=local, but " + failure);
				}
			}
			case "embedded" -> {
				String failure = useEmbeddedServer(environment, application);
				if (failure != null) {
					throw new NoDatabaseException(MODE_PROPERTY + "=embedded, but " + failure);
				}
			}
			default -> throw new NoDatabaseException(
					MODE_PROPERTY + " is '" + mode + "'; it must be auto, local, embedded or provided");
		}
	}

	private void chooseAutomatically(ConfigurableEnvironment environment, SpringApplication application) {
		String url = environment.getProperty("spring.datasource.url");
		if (url != null && !url.isBlank()) {
			// Query parameters may hold a password: keep them out of the log.
			this.logger.info("Database: " + url.replaceFirst("\\?.*", "") + " (from spring.datasource.url)");
			return;
		}
		String localFailure = useLocalServer(environment);
		if (localFailure == null) {
			return;
		}
		String embeddedFailure = useEmbeddedServer(environment, application);
		if (embeddedFailure == null) {
			return;
		}
		throw new NoDatabaseException("spring.datasource.url is not set, " + localFailure + ", and "
				+ embeddedFailure);
	}

	/** Uses the server on localhost:5432, or returns why it cannot. */
	private String useLocalServer(ConfigurableEnvironment environment) {
		Properties properties = new Properties();
		properties.setProperty("user", "postgres");
		properties.setProperty("connectTimeout", "2");
		properties.setProperty("loginTimeout", "2");
		properties.setProperty("socketTimeout", "10");
		boolean created;
		try (Connection connection = new org.postgresql.Driver()
			.connect("jdbc:postgresql://" + LOCAL_SERVER + "/postgres", properties)) {
			created = createDatabaseIfMissing(connection);
		}
		catch (SQLException ex) {
			// 08001: nothing accepted the connection (no server, or a firewall in the way).
			return "08001".equals(ex.getSQLState()) ? "nothing answered on " + LOCAL_SERVER
					: "the PostgreSQL on " + LOCAL_SERVER + " did not let user postgres in without a password ("
							+ firstLine(ex.getMessage()) + ")";
		}
		String url = "jdbc:postgresql://" + LOCAL_SERVER + "/" + LOCAL_DATABASE;
		addProperties(environment, url, "postgres");
		this.logger.info("Database: local PostgreSQL, " + url + " as postgres" + (created ? " (database created)" : ""));
		return null;
	}

	/** The sample keeps to a database of its own so that it never touches other databases' tables. */
	private static boolean createDatabaseIfMissing(Connection connection) throws SQLException {
		try (var exists = connection.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
			exists.setString(1, LOCAL_DATABASE);
			if (exists.executeQuery().next()) {
				return false;
			}
		}
		try (var create = connection.createStatement()) {
			create.execute("CREATE DATABASE " + LOCAL_DATABASE);
			return true;
		}
		catch (SQLException ex) {
			// 42P04 duplicate_database, 23505 unique_violation: another instance created it meanwhile.
			if ("42P04".equals(ex.getSQLState()) || "23505".equals(ex.getSQLState())) {
				return false;
			}
			throw ex;
		}
	}

	/** Starts an embedded server, or returns why it cannot. */
	private String useEmbeddedServer(ConfigurableEnvironment environment, SpringApplication application) {
		EmbeddedPostgresServer postgres;
		try {
			// As root, the server runs as an unprivileged account: PostgreSQL refuses root.
			postgres = EmbeddedPostgresServer.start();
		}
		catch (RuntimeException ex) {
			return "an embedded PostgreSQL did not start (" + firstLine(String.valueOf(ex.getMessage())) + ")";
		}
		// Stop the server with the application context, once its pollers and data source have
		// stopped (a bean's destroy method runs after the beans that depend on the data source). The
		// server also stops from a JVM shutdown hook of its own, which runs alongside Spring's: on
		// SIGTERM or Ctrl-C it may go before running jobs finish. They lose nothing (unfinished jobs
		// roll back), but graceful shutdown is best effort here.
		application.addInitializers((context) -> {
			if (context instanceof GenericApplicationContext generic) {
				generic.registerBean("embeddedPostgres", EmbeddedPostgresServer.class, () -> postgres,
						(definition) -> definition.setDestroyMethodName("close"));
			}
		});
		String url = postgres.jdbcUrl("postgres");
		addProperties(environment, url, EmbeddedPostgresServer.USER);
		this.logger.info("Database: embedded PostgreSQL " + EmbeddedPostgresServer.packedVersion() + ", "
				+ url.replaceFirst("\\?.*", "") + " as postgres (removed when the application stops)");
		return null;
	}

	private static void addProperties(ConfigurableEnvironment environment, String url, String username) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("spring.datasource.url", url);
		properties.put("spring.datasource.username", username);
		// Last: anything the user configured, such as a pool size or a password, still applies.
		environment.getPropertySources().addLast(new MapPropertySource(PROPERTY_SOURCE, properties));
	}

	private static String firstLine(String message) {
		int end = message.indexOf('\n');
		return (end < 0) ? message.trim() : message.substring(0, end).trim();
	}

}
