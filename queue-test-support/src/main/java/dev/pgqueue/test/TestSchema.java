package dev.pgqueue.test;

import java.sql.Connection;
import java.sql.SQLException;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A schema created for one test class, with a connection pool whose search path is that schema.
 * Closing it closes the pool and drops the schema.
 */
public final class TestSchema implements AutoCloseable {

	private final TestDatabase database;

	private final String name;

	private final HikariDataSource dataSource;

	TestSchema(TestDatabase database, String name) {
		this.database = database;
		this.name = name;
		this.dataSource = newPool(32);
	}

	/** The schema's name. */
	public String name() {
		return this.name;
	}

	/** A shared pool of up to 32 connections whose search path is this schema. */
	public DataSource dataSource() {
		return this.dataSource;
	}

	public JdbcTemplate jdbcTemplate() {
		return new JdbcTemplate(this.dataSource);
	}

	/** A separate pool of {@code size} connections on this schema; the caller closes it. */
	public HikariDataSource newPool(int size) {
		return newPool(size, null);
	}

	/**
	 * A separate pool of {@code size} connections on this schema whose sessions carry the given
	 * {@code application_name} (the driver's default when {@code null}); the caller closes it.
	 */
	public HikariDataSource newPool(int size, String applicationName) {
		HikariConfig config = new HikariConfig();
		if (applicationName != null) {
			config.addDataSourceProperty("ApplicationName", applicationName);
		}
		config.setJdbcUrl(this.database.jdbcUrl());
		if (this.database.username() != null) {
			config.setUsername(this.database.username());
		}
		if (this.database.password() != null) {
			config.setPassword(this.database.password());
		}
		config.setSchema(this.name);
		config.setMaximumPoolSize(size);
		config.setMinimumIdle(0);
		config.setPoolName("test-" + this.name);
		config.setConnectionTimeout(10_000);
		return new HikariDataSource(config);
	}

	public TestDatabase database() {
		return this.database;
	}

	@Override
	public void close() {
		this.dataSource.close();
		try (Connection connection = this.database.connect()) {
			connection.createStatement().execute("DROP SCHEMA IF EXISTS " + this.name + " CASCADE");
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not drop test schema " + this.name + ": " + ex.getMessage(), ex);
		}
	}

}
