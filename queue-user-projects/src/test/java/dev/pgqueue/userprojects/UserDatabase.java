package dev.pgqueue.userprojects;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import dev.pgqueue.JobClient;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * A database of its own on the tests' PostgreSQL, as a user's application has one: created fresh,
 * dropped at the end. A producer enqueues into it as another application of the user's would.
 */
final class UserDatabase implements AutoCloseable {

	private final String name;

	private final String url;

	private final DriverManagerDataSource dataSource;

	private QueueEngine producer;

	private UserDatabase(String name, String url) {
		this.name = name;
		this.url = url;
		TestDatabase server = TestDatabase.get();
		this.dataSource = new DriverManagerDataSource(url);
		if (server.username() != null) {
			this.dataSource.setUsername(server.username());
			this.dataSource.setPassword(server.password());
		}
	}

	static UserDatabase create(String prefix) throws SQLException {
		String name = prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
		try (Connection connection = TestDatabase.get().connect(); Statement statement = connection.createStatement()) {
			statement.execute("CREATE DATABASE " + name);
		}
		String url = TestDatabase.get().jdbcUrl().replaceFirst("^(jdbc:postgresql://[^/]+/)[^?]*", "$1" + name);
		return new UserDatabase(name, url);
	}

	/** Spring Boot's environment variables for this database. */
	Map<String, String> springEnvironment() {
		Map<String, String> environment = new HashMap<>();
		environment.put("SPRING_DATASOURCE_URL", this.url);
		TestDatabase server = TestDatabase.get();
		if (server.username() != null) {
			environment.put("SPRING_DATASOURCE_USERNAME", server.username());
		}
		if (server.password() != null) {
			environment.put("SPRING_DATASOURCE_PASSWORD", server.password());
		}
		return environment;
	}

	DataSource dataSource() {
		return this.dataSource;
	}

	JdbcTemplate jdbc() {
		return new JdbcTemplate(this.dataSource);
	}

	/** A client that only enqueues, into pgqueue's tables the application created in schema public. */
	synchronized JobClient producer() {
		if (this.producer == null) {
			this.producer = QueueEngine.builder(this.dataSource)
				.settings(EngineSettings.defaults(SchemaName.of(SchemaName.DEFAULT)))
				.processing(false)
				.build();
		}
		return this.producer.client();
	}

	/** A job's state as its row holds it. */
	String stateOf(UUID id) {
		return jdbc().queryForObject("SELECT state::text FROM pgqueue_all_jobs WHERE public_id = ?", String.class, id);
	}

	@Override
	public void close() throws SQLException {
		if (this.producer != null) {
			this.producer.close();
		}
		try (Connection connection = TestDatabase.get().connect(); Statement statement = connection.createStatement()) {
			statement.execute("DROP DATABASE IF EXISTS " + this.name + " WITH (FORCE)");
		}
	}

}
