package dev.pgqueue.engine.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Runs the statements of two-phase commit ({@link PreparedTransactionStatements}): prepare a job's
 * transaction, commit or roll it back, find this schema's prepared transactions, and the
 * session-level advisory lock by which a worker says it is still alive while its transaction is
 * prepared.
 *
 * <p>Most of them must run on one connection, held across several of them: the worker's (the
 * connection of the job's transaction, see {@link #onTransactionConnection}) or the resolver's (a
 * connection of its own, see {@link #onOwnConnection}). They are the methods of a {@link Session},
 * which a caller only ever gets for the length of such a call.
 *
 * <p>The worker's lock is keyed on the transaction id ({@code hashtextextended(gid, 0)}) and taken at
 * session level inside the transaction, just before the prepare: PostgreSQL prepares a transaction
 * without its session-level locks, so the lock stays with the worker's session until the worker
 * releases it after the commit, or until that session ends. A resolver that can take it knows the
 * worker is gone (or done).
 */
public class PreparedTransactionRepository {

	private final JdbcTemplate jdbc;

	private final PreparedTransactionStatements sql;

	public PreparedTransactionRepository(JdbcTemplate jdbc, SchemaName schema) {
		this.jdbc = jdbc;
		this.sql = new PreparedTransactionStatements(schema);
	}

	/** The server's {@code max_prepared_transactions}: 0 (its default) turns prepared transactions off. */
	public int maxPreparedTransactions() {
		Integer max = this.jdbc.queryForObject(this.sql.maxPreparedTransactions, Integer.class);
		return (max != null) ? max : 0;
	}

	/**
	 * The prepared transactions of this database whose id starts with {@code prefix}, oldest first,
	 * each with the job its id names as other sessions see it (the job's columns are null when there
	 * is no such job).
	 */
	public List<PreparedJob> preparedJobs(String prefix) {
		return this.jdbc.query(this.sql.preparedJobs, (rs, i) -> new PreparedJob(rs.getString(1), rs.getString(2),
				Duration.ofMillis(Math.round(rs.getDouble(3) * 1000)), rs.getObject(4, UUID.class), rs.getString(5),
				rs.getString(6), (Integer) rs.getObject(7), rs.getString(8)), prefix);
	}

	/**
	 * Whether another session holds the lock of a prepared transaction: a worker that is still
	 * finishing the job's previous attempt (its effect failed, its transaction was rolled back, and
	 * its failure not yet recorded). Takes and releases the lock at once when it is free. Runs on the
	 * connection of the caller's transaction, so that a worker needs no second connection for it.
	 */
	public boolean isHeldElsewhere(String gid) {
		return Boolean.TRUE.equals(this.jdbc.execute((ConnectionCallback<Boolean>) (con) -> new Session(con,
				this.sql).isHeldElsewhere(gid)));
	}

	/**
	 * Runs {@code work} on the connection of the caller's transaction (the worker's: it prepares that
	 * transaction, then commits or rolls it back on the same session).
	 */
	public <T extends @Nullable Object> T onTransactionConnection(SessionWork<T> work) {
		return this.jdbc.execute((ConnectionCallback<T>) (con) -> work.run(new Session(con, this.sql)));
	}

	/**
	 * Runs {@code work} on a connection of the pool in auto-commit mode, outside any transaction: the
	 * resolver's, which takes the worker's lock and commits or rolls back on that one session.
	 */
	public <T extends @Nullable Object> T onOwnConnection(SessionWork<T> work) {
		return this.jdbc.execute((Connection con) -> {
			boolean autoCommit = con.getAutoCommit();
			if (!autoCommit) {
				con.setAutoCommit(true);
			}
			try {
				return work.run(new Session(con, this.sql));
			}
			finally {
				if (!autoCommit) {
					con.setAutoCommit(false);
				}
			}
		});
	}

	/** Work on one connection's session, given its statements. */
	@FunctionalInterface
	public interface SessionWork<T extends @Nullable Object> {

		T run(Session session) throws SQLException;

	}

	/**
	 * The statements of two-phase commit on one connection, which the caller holds across several of
	 * them: valid only during the {@link SessionWork} it was given to.
	 */
	public static final class Session {

		private final Connection con;

		private final PreparedTransactionStatements sql;

		private Session(Connection con, PreparedTransactionStatements sql) {
			this.con = con;
			this.sql = sql;
		}

		/** Takes the lock of a prepared transaction at session level, waiting for it if need be. */
		public void hold(String gid) throws SQLException {
			isTrue(this.sql.hold, gid);
		}

		/**
		 * Takes the lock of a prepared transaction at session level if nobody holds it; returns whether
		 * it did.
		 */
		public boolean tryHold(String gid) throws SQLException {
			return isTrue(this.sql.tryHold, gid);
		}

		/** {@link PreparedTransactionRepository#isHeldElsewhere(String)} on this session. */
		boolean isHeldElsewhere(String gid) throws SQLException {
			return isTrue(this.sql.isHeldElsewhere, gid, gid);
		}

		/** Releases the session-level lock of a prepared transaction. */
		public void release(String gid) throws SQLException {
			isTrue(this.sql.release, gid);
		}

		/** Whether the transaction {@code xid} is still prepared under {@code gid}. */
		public boolean isPrepared(String gid, String xid) throws SQLException {
			return isTrue(this.sql.isPrepared, gid, xid);
		}

		/**
		 * Prepares the session's transaction under {@code gid}. Afterwards the session has no
		 * transaction: the prepared one belongs to no session until it is committed or rolled back.
		 */
		public void prepare(String gid) throws SQLException {
			execute(this.sql.prepare(gid));
		}

		/** Commits a prepared transaction; the session must be in auto-commit mode. */
		public void commitPrepared(String gid) throws SQLException {
			execute(this.sql.commitPrepared(gid));
		}

		/** Rolls a prepared transaction back; the session must be in auto-commit mode. */
		public void rollbackPrepared(String gid) throws SQLException {
			execute(this.sql.rollbackPrepared(gid));
		}

		/**
		 * Switches the connection's auto-commit mode: on after a prepare, since {@code COMMIT PREPARED}
		 * and {@code ROLLBACK PREPARED} may not run inside a transaction block and the driver opens one
		 * before each statement otherwise; off again before the connection's own transaction ends.
		 */
		public void setAutoCommit(boolean autoCommit) throws SQLException {
			this.con.setAutoCommit(autoCommit);
		}

		private void execute(String sql) throws SQLException {
			try (Statement statement = this.con.createStatement()) {
				statement.execute(sql);
			}
		}

		/** Runs a query of one boolean on the given text parameters; returns it. */
		private boolean isTrue(String sql, String... parameters) throws SQLException {
			try (PreparedStatement ps = this.con.prepareStatement(sql)) {
				for (int i = 0; i < parameters.length; i++) {
					ps.setString(i + 1, parameters[i]);
				}
				try (ResultSet rs = ps.executeQuery()) {
					return rs.next() && rs.getBoolean(1);
				}
			}
		}

	}

	/**
	 * A prepared transaction of this schema, and the job its id names.
	 *
	 * @param gid its global transaction id
	 * @param xid its transaction id, to tell it from a later transaction prepared under the same gid
	 * @param age how long it has been prepared
	 * @param jobId the job's public id, or {@code null} when no job has the id the gid names
	 * @param kind the job's kind, or {@code null}
	 * @param queue the job's queue, or {@code null}
	 * @param storedAttempt the job's attempt as stored before the prepared transaction, or {@code null}
	 * @param payload the job's payload, or {@code null}
	 */
	public record PreparedJob(String gid, String xid, Duration age, @Nullable UUID jobId, @Nullable String kind,
			@Nullable String queue, @Nullable Integer storedAttempt, @Nullable String payload) {
	}

}
