package dev.pgqueue.engine.service;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.Set;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * What real failures of a real server are taken for, and how the pool is made to replace the
 * connections a lost one makes suspect.
 */
class ConnectionLossDatabaseTests {

	private static TestSchema schema;

	@BeforeAll
	static void setUp() {
		schema = TestDatabase.get().createSchema("connection_loss");
	}

	@AfterAll
	static void tearDown() {
		schema.close();
	}

	@Test
	void aTerminatedBackendIsALostConnection() throws Exception {
		try (HikariDataSource pool = schema.newPool(2, "connection-loss-terminated")) {
			JdbcTemplate jdbc = new JdbcTemplate(pool);
			Throwable failure = catchThrowable(() -> jdbc.queryForObject(
					"SELECT pg_terminate_backend(pg_backend_pid())", Boolean.class));
			assertThat(failure).isNotNull();
			assertThat(FailureCause.of(failure)).isEqualTo(FailureCause.CONNECTION);
		}
	}

	@Test
	void aTransactionWhoseConnectionDiedAndWhoseRollbackFailedIsALostConnection() throws Exception {
		try (HikariDataSource pool = schema.newPool(2, "connection-loss-rollback")) {
			JdbcTemplate jdbc = new JdbcTemplate(pool);
			TransactionTemplate transactions = new TransactionTemplate(new JdbcTransactionManager(pool));
			Throwable failure = catchThrowable(() -> transactions.executeWithoutResult((status) -> {
				jdbc.queryForObject("SELECT 1", Integer.class);
				jdbc.queryForObject("SELECT pg_terminate_backend(pg_backend_pid())", Boolean.class);
			}));
			assertThat(failure).isNotNull();
			assertThat(FailureCause.of(failure)).as("%s", failure).isEqualTo(FailureCause.CONNECTION);
		}
	}

	@Test
	void aSerializationFailureIsAConflictAndAMissingTableAnError() {
		JdbcTemplate jdbc = schema.jdbcTemplate();
		Throwable conflict = catchThrowable(() -> jdbc.execute(
				"DO $$ BEGIN RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001'; END $$"));
		Throwable missing = catchThrowable(() -> jdbc.queryForObject("SELECT count(*) FROM no_such_table", Long.class));

		assertThat(FailureCause.of(conflict)).isEqualTo(FailureCause.CONFLICT);
		assertThat(FailureCause.of(missing)).isEqualTo(FailureCause.ERROR);
		assertThat(FailureCause.ERROR.worthRetryingAtOnce()).isFalse();
	}

	@Test
	void aPoolThatLostAConnectionReplacesItsIdleOnes() throws Exception {
		try (HikariDataSource pool = schema.newPool(3, "connection-loss-evict")) {
			Set<Integer> before = backendsOf(pool, 3);
			assertThat(before).hasSize(3);
			// What ended one backend usually ended the others: here, every idle one is terminated. The
			// pool hands out a connection it used less than half a second ago without testing it.
			terminate(before);
			PooledConnections.of(pool).discardIdle();

			Set<Integer> after = backendsOf(pool, 3);
			assertThat(after).as("fresh connections, none of the terminated ones").doesNotContainAnyElementsOf(before);
		}
	}

	@Test
	void aDataSourceThatIsNoPoolIsLeftAlone() {
		assertThat(PooledConnections.of(null)).isSameAs(PooledConnections.NONE);
		PooledConnections.NONE.discardIdle();
	}

	/** Borrows {@code count} connections at once and returns the backends behind them, used without a test. */
	private static Set<Integer> backendsOf(HikariDataSource pool, int count) throws SQLException {
		Set<Integer> pids = new HashSet<>();
		Connection[] held = new Connection[count];
		try {
			for (int i = 0; i < count; i++) {
				held[i] = pool.getConnection();
				try (PreparedStatement statement = held[i].prepareStatement("SELECT pg_backend_pid()");
						ResultSet rs = statement.executeQuery()) {
					rs.next();
					pids.add(rs.getInt(1));
				}
			}
		}
		finally {
			for (Connection connection : held) {
				if (connection != null) {
					connection.close();
				}
			}
		}
		return pids;
	}

	private static void terminate(Set<Integer> pids) throws SQLException {
		try (Connection admin = TestDatabase.get().connect();
				PreparedStatement statement = admin.prepareStatement("SELECT pg_terminate_backend(pid) FROM "
						+ "unnest(?::int[]) AS pid")) {
			statement.setArray(1, admin.createArrayOf("int4", pids.toArray()));
			statement.execute();
		}
	}

}
