package dev.pgqueue.embedded;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Starts real servers from the packed binaries: as root (CI machines) too, where the server must run
 * as an unprivileged account.
 */
class EmbeddedPostgresServerTests {

	private static EmbeddedPostgresServer server;

	@BeforeAll
	static void start() {
		server = EmbeddedPostgresServer.start();
	}

	@AfterAll
	static void close() {
		server.close();
	}

	@Test
	void runsThePackedVersionWithTheSettingsTestsNeed() throws SQLException {
		try (Connection connection = DriverManager.getConnection(server.jdbcUrl("postgres"))) {
			assertThat(scalar(connection, "SHOW server_version")).startsWith(EmbeddedPostgresServer.packedVersion()
				.replaceFirst("\\.0$", "")
				.replaceFirst("^(\\d+\\.\\d+).*", "$1"));
			assertThat(scalar(connection, "SHOW max_prepared_transactions")).isEqualTo("64");
			assertThat(scalar(connection, "SHOW listen_addresses")).isEqualTo("127.0.0.1");
			assertThat(scalar(connection, "SELECT current_user")).isEqualTo(EmbeddedPostgresServer.USER);
		}
	}

	@Test
	void asksEveryClientForThePasswordItMade() throws SQLException {
		String withoutPassword = "jdbc:postgresql://127.0.0.1:" + server.port() + "/postgres?user="
				+ EmbeddedPostgresServer.USER;
		assertThatThrownBy(() -> DriverManager.getConnection(withoutPassword).close()).isInstanceOf(SQLException.class)
			.hasMessageContaining("password");
		assertThatThrownBy(() -> DriverManager.getConnection(withoutPassword + "&password=guess").close())
			.isInstanceOf(SQLException.class)
			.hasMessageContaining("password authentication failed");
		try (Connection connection = DriverManager.getConnection(server.jdbcUrl("postgres"))) {
			assertThat(scalar(connection, "SELECT count(*) FROM pg_hba_file_rules WHERE auth_method = 'trust'"))
				.as("rules that let a client in without a password").isEqualTo("0");
		}
		try (EmbeddedPostgresServer other = EmbeddedPostgresServer.builder().setting("max_connections", "20").start()) {
			assertThat(server.password()).as("each server's own").hasSizeGreaterThanOrEqualTo(32)
				.isNotEqualTo(other.password());
		}
	}

	@Test
	void neverRunsAsRoot() throws Exception {
		Path data = Path.of(querySetting("data_directory"));
		assertThat(Files.getOwner(data).getName()).isNotEqualTo("root");
		if ("root".equals(System.getProperty("user.name"))) {
			assertThat(Files.getOwner(data).getName()).isEqualTo(EmbeddedPostgresServer.DEFAULT_ACCOUNT);
		}
	}

	@Test
	void keepsItsDataAcrossAStopAndACrash() throws SQLException {
		EmbeddedPostgresServer own = EmbeddedPostgresServer.builder().setting("max_connections", "20").start();
		try {
			try (Connection connection = DriverManager.getConnection(own.jdbcUrl("postgres"));
					Statement statement = connection.createStatement()) {
				statement.execute("CREATE TABLE kept (n int)");
				statement.execute("INSERT INTO kept VALUES (1), (2)");
				assertThat(scalar(connection, "SHOW max_connections")).isEqualTo("20");
			}
			own.stop();
			assertThat(own.isRunning()).isFalse();
			assertThatThrownBy(() -> DriverManager.getConnection(own.jdbcUrl("postgres")).close())
				.isInstanceOf(SQLException.class);
			own.restart();
			try (Connection connection = DriverManager.getConnection(own.jdbcUrl("postgres"))) {
				assertThat(scalar(connection, "SELECT count(*) FROM kept")).isEqualTo("2");
				connection.createStatement().execute("INSERT INTO kept VALUES (3)");
			}
			own.kill();
			own.restart();
			try (Connection connection = DriverManager.getConnection(own.jdbcUrl("postgres"))) {
				assertThat(scalar(connection, "SELECT count(*) FROM kept")).isEqualTo("3");
			}
		}
		finally {
			own.close();
		}
		assertThat(own.log().getParent()).doesNotExist();
	}

	@Test
	void namesTheSettingThatIsNotOne() {
		assertThatThrownBy(() -> EmbeddedPostgresServer.builder().setting("fsync = off; x", "1"))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("is not a PostgreSQL setting name");
	}

	private static String querySetting(String name) throws SQLException {
		try (Connection connection = DriverManager.getConnection(server.jdbcUrl("postgres"))) {
			return scalar(connection, "SHOW " + name);
		}
	}

	private static String scalar(Connection connection, String sql) throws SQLException {
		try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
			rs.next();
			return rs.getString(1);
		}
	}

}
