package dev.pgqueue.autoconfigure;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import dev.pgqueue.test.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A schema name on the test database that nothing uses yet, and the properties that point a
 * context's data source and pgqueue at it. The schema itself is created by pgqueue's migrator
 * when the first context starts; {@link #drop()} removes it.
 */
final class FreshSchema {

	private final String name;

	private FreshSchema(String name) {
		this.name = name;
	}

	static FreshSchema named(String prefix) {
		return new FreshSchema(prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12));
	}

	String name() {
		return this.name;
	}

	/** Adds {@link #properties()} to a Spring test's registry ({@code @DynamicPropertySource}). */
	void register(DynamicPropertyRegistry registry) {
		for (String property : properties()) {
			int eq = property.indexOf('=');
			registry.add(property.substring(0, eq), () -> property.substring(eq + 1));
		}
	}

	/** spring.datasource.* for the test database and pgqueue.schema.name for this schema. */
	String[] properties() {
		TestDatabase database = TestDatabase.get();
		List<String> properties = new ArrayList<>();
		properties.add("spring.datasource.url=" + database.jdbcUrl());
		if (database.username() != null) {
			properties.add("spring.datasource.username=" + database.username());
		}
		if (database.password() != null) {
			properties.add("spring.datasource.password=" + database.password());
		}
		properties.add("pgqueue.schema.name=" + this.name);
		return properties.toArray(new String[0]);
	}

	/** Names of the tables in this schema. */
	List<String> tables(JdbcTemplate jdbc) {
		return jdbc.queryForList("SELECT table_name FROM information_schema.tables WHERE table_schema = ?",
				String.class, this.name);
	}

	/** The state of the job with this public id, or {@code null} when there is no such row. */
	String stateOf(JdbcTemplate jdbc, UUID id) {
		List<String> states = jdbc.queryForList("SELECT state FROM " + this.name + ".pgqueue_all_jobs WHERE public_id = ?",
				String.class, id);
		return states.isEmpty() ? null : states.get(0);
	}

	void drop() {
		try (Connection connection = TestDatabase.get().connect()) {
			connection.createStatement().execute("DROP SCHEMA IF EXISTS " + this.name + " CASCADE");
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not drop test schema " + this.name + ": " + ex.getMessage(), ex);
		}
	}

}
