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

import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The statements of two-phase commit: prepare a job's transaction, commit or roll it back, find this
 * schema's prepared transactions, and the session-level advisory lock by which a worker says it is
 * still alive while its transaction is prepared.
 *
 * <p>{@code PREPARE TRANSACTION}, {@code COMMIT PREPARED} and {@code ROLLBACK PREPARED} take no bind
 * parameters: the transaction id is written as an escaped string literal. The methods that take a
 * {@link Connection} run on that connection, which the caller holds across several of them.
 *
 * <p>The worker's lock is keyed on the transaction id ({@code hashtextextended(gid, 0)}) and taken at
 * session level inside the transaction, just before the prepare: PostgreSQL prepares a transaction
 * without its session-level locks, so the lock stays with the worker's session until the worker
 * releases it after the commit, or until that session ends. A resolver that can take it knows the
 * worker is gone (or done).
 */
public class PreparedTransactionRepository {

	private static final String LOCK_KEY = "hashtextextended(?, 0)";

	private final JdbcTemplate jdbc;

	private final String preparedJobs;

	public PreparedTransactionRepository(JdbcTemplate jdbc, SchemaName schema) {
		this.jdbc = jdbc;
		// The job's row as every other session sees it while the transaction is prepared: before
		// the prepared transaction's changes, so with its payload and the attempt it had.
		this.preparedJobs = """
				SELECT p.gid, p.transaction::text, extract(epoch FROM clock_timestamp() - p.prepared)::float8,
				       j.public_id, j.kind, j.queue, j.attempt, j.payload::text
				FROM pg_prepared_xacts p
				LEFT JOIN %s j ON j.public_id = CASE
				    WHEN p.gid ~ '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
				    THEN right(p.gid, 36)::uuid END
				WHERE p.database = current_database() AND starts_with(p.gid, ?)
				ORDER BY p.prepared
				""".formatted(schema.qualify("pgqueue_jobs"));
	}

	/** The server's {@code max_prepared_transactions}: 0 (its default) turns prepared transactions off. */
	public int maxPreparedTransactions() {
		Integer max = this.jdbc.queryForObject("SELECT current_setting('max_prepared_transactions')::int",
				Integer.class);
		return (max != null) ? max : 0;
	}

	/**
	 * The prepared transactions of this database whose id starts with {@code prefix}, oldest first,
	 * each with the job its id names as other sessions see it (the job's columns are null when there
	 * is no such job).
	 */
	public List<PreparedJob> preparedJobs(String prefix) {
		return this.jdbc.query(this.preparedJobs, (rs, i) -> new PreparedJob(rs.getString(1), rs.getString(2),
				Duration.ofMillis(Math.round(rs.getDouble(3) * 1000)), rs.getObject(4, UUID.class), rs.getString(5),
				rs.getString(6), (Integer) rs.getObject(7), rs.getString(8)), prefix);
	}

	/**
	 * Runs {@code work} on a connection of the pool in auto-commit mode, outside any transaction: the
	 * resolver's, which takes the worker's lock and commits or rolls back on that one session.
	 */
	public <T> T onOwnConnection(ConnectionCallback<T> work) {
		return this.jdbc.execute((Connection con) -> {
			boolean autoCommit = con.getAutoCommit();
			if (!autoCommit) {
				con.setAutoCommit(true);
			}
			try {
				return work.doInConnection(con);
			}
			finally {
				if (!autoCommit) {
					con.setAutoCommit(false);
				}
			}
		});
	}

	/** Takes the lock of a prepared transaction at session level, waiting for it if need be. */
	public void hold(Connection con, String gid) throws SQLException {
		isTrue(con, "SELECT pg_advisory_lock(" + LOCK_KEY + ") IS NULL", gid);
	}

	/** Takes the lock of a prepared transaction at session level if nobody holds it; returns whether it did. */
	public boolean tryHold(Connection con, String gid) throws SQLException {
		return isTrue(con, "SELECT pg_try_advisory_lock(" + LOCK_KEY + ")", gid);
	}

	/**
	 * Whether another session holds the lock of a prepared transaction: a worker that is still
	 * finishing the job's previous attempt (its effect failed, its transaction was rolled back, and
	 * its failure not yet recorded). Takes and releases the lock at once when it is free.
	 */
	public boolean isHeldElsewhere(Connection con, String gid) throws SQLException {
		try (PreparedStatement ps = con.prepareStatement("SELECT CASE WHEN pg_try_advisory_lock(" + LOCK_KEY
				+ ") THEN NOT pg_advisory_unlock(" + LOCK_KEY + ") ELSE true END")) {
			ps.setString(1, gid);
			ps.setString(2, gid);
			try (ResultSet rs = ps.executeQuery()) {
				return rs.next() && rs.getBoolean(1);
			}
		}
	}

	/** Releases the session-level lock of a prepared transaction. */
	public void release(Connection con, String gid) throws SQLException {
		isTrue(con, "SELECT pg_advisory_unlock(" + LOCK_KEY + ")", gid);
	}

	/** Whether the transaction {@code xid} is still prepared under {@code gid}. */
	public boolean isPrepared(Connection con, String gid, String xid) throws SQLException {
		try (PreparedStatement ps = con.prepareStatement(
				"SELECT EXISTS (SELECT 1 FROM pg_prepared_xacts WHERE gid = ? AND transaction::text = ?)")) {
			ps.setString(1, gid);
			ps.setString(2, xid);
			try (ResultSet rs = ps.executeQuery()) {
				return rs.next() && rs.getBoolean(1);
			}
		}
	}

	/**
	 * Prepares the connection's transaction under {@code gid}. Afterwards the session has no
	 * transaction: the prepared one belongs to no session until it is committed or rolled back.
	 */
	public void prepare(Connection con, String gid) throws SQLException {
		execute(con, "PREPARE TRANSACTION " + literal(gid));
	}

	/** Commits a prepared transaction; the connection must be in auto-commit mode. */
	public void commitPrepared(Connection con, String gid) throws SQLException {
		execute(con, "COMMIT PREPARED " + literal(gid));
	}

	/** Rolls a prepared transaction back; the connection must be in auto-commit mode. */
	public void rollbackPrepared(Connection con, String gid) throws SQLException {
		execute(con, "ROLLBACK PREPARED " + literal(gid));
	}

	/** An escape string literal, whatever {@code standard_conforming_strings} says. */
	static String literal(String text) {
		return "E'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'";
	}

	private static void execute(Connection con, String sql) throws SQLException {
		try (Statement statement = con.createStatement()) {
			statement.execute(sql);
		}
	}

	/** Runs a query of one boolean on the transaction id; returns it. */
	private static boolean isTrue(Connection con, String sql, String gid) throws SQLException {
		try (PreparedStatement ps = con.prepareStatement(sql)) {
			ps.setString(1, gid);
			try (ResultSet rs = ps.executeQuery()) {
				return rs.next() && rs.getBoolean(1);
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
	public record PreparedJob(String gid, String xid, Duration age, UUID jobId, String kind, String queue,
			Integer storedAttempt, String payload) {
	}

}
