package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Properties;
import java.util.UUID;

/**
 * The PostgreSQL server the benchmark runs against. Every workload gets a schema of its own, which
 * is dropped when the workload ends.
 */
public final class BenchDatabase {

	private final String jdbcUrl;

	private final String username;

	private final String password;

	/**
	 * @param jdbcUrl the server's URL
	 * @param username user name, or {@code null} when the URL carries it
	 * @param password password, or {@code null}
	 */
	public BenchDatabase(String jdbcUrl, String username, String password) {
		this.jdbcUrl = jdbcUrl;
		this.username = username;
		this.password = password;
	}

	public String jdbcUrl() {
		return this.jdbcUrl;
	}

	String username() {
		return this.username;
	}

	String password() {
		return this.password;
	}

	/** A plain connection outside any pool, for loading rows and administration. */
	Connection connect() throws SQLException {
		Properties properties = new Properties();
		if (this.username != null) {
			properties.setProperty("user", this.username);
		}
		if (this.password != null) {
			properties.setProperty("password", this.password);
		}
		// Tells the benchmark's sessions from other applications' in server CPU figures (CpuTimes).
		properties.setProperty("ApplicationName", CpuTimes.OUR_APPLICATIONS);
		return DriverManager.getConnection(this.jdbcUrl, properties);
	}

	/** The server's version string. */
	String serverVersion() {
		try (Connection connection = connect(); Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SELECT version()")) {
			rs.next();
			return rs.getString(1);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Cannot reach PostgreSQL at " + this.jdbcUrl + ": " + ex.getMessage()
					+ ". Pass --jdbc-url or set PGQUEUE_BENCH_JDBC_URL.", ex);
		}
	}

	/** Creates a fresh schema whose name starts with {@code prefix} and migrates the jobs table into it. */
	BenchSchema createSchema(String prefix) {
		String name = ("pgqueue_bench_" + prefix + "_" + UUID.randomUUID().toString().substring(0, 8))
			.toLowerCase(Locale.ROOT);
		return new BenchSchema(this, name);
	}

}
