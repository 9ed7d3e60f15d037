package dev.pgqueue.engine.service;

import java.io.EOFException;
import java.net.SocketException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Locale;
import java.util.Set;

import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.transaction.TransactionSystemException;

/**
 * Why a statement of the engine failed, as far as what to do next goes: a connection that was lost
 * (or could not be had) is worth trying again at once on a fresh one, since the pool replaces it; a
 * conflict with another transaction is worth trying again at once too; anything else (a missing
 * table, a refused login, a bug) will fail the same way until someone acts, so retries space out.
 */
public enum FailureCause {

	/**
	 * The connection broke or none could be had: a terminated backend, a server restart or
	 * failover, a reset socket, a pool that timed out waiting for a connection.
	 */
	CONNECTION,

	/** Another transaction got in the way: a serialization failure or a deadlock. */
	CONFLICT,

	/** Anything else: it will most likely fail again the same way. */
	ERROR;

	/** SQLSTATEs of a session the server ended: admin_shutdown, crash_shutdown, cannot_connect_now. */
	private static final Set<String> SESSION_ENDED = Set.of("57P01", "57P02", "57P03");

	/** SQLSTATEs of a conflict: serialization_failure, deadlock_detected. */
	private static final Set<String> CONFLICTS = Set.of("40001", "40P01");

	/**
	 * Looks through the exception and its causes for the first sign of a lost connection or a
	 * conflict. A rollback that failed after the work had failed (the connection broke during the
	 * work) is looked through as well as the work's failure it replaced, whether that came as the
	 * rollback's application exception or as one it suppressed: a pool that closed a broken
	 * connection fails the rollback with no SQLSTATE at all ("Connection is closed").
	 */
	public static FailureCause of(Throwable failure) {
		Deque<Throwable> pending = new ArrayDeque<>();
		pending.add(failure);
		for (int looked = 0; !pending.isEmpty() && looked < 32; looked++) {
			Throwable cause = pending.poll();
			if (cause instanceof CannotGetJdbcConnectionException || cause instanceof SQLTransientConnectionException
					|| cause instanceof SocketException || cause instanceof EOFException) {
				return CONNECTION;
			}
			if (cause instanceof SQLException sql && sql.getSQLState() != null) {
				String state = sql.getSQLState();
				if (state.startsWith("08") || SESSION_ENDED.contains(state)) {
					return CONNECTION;
				}
				if (CONFLICTS.contains(state)) {
					return CONFLICT;
				}
			}
			if (cause instanceof TransactionSystemException rollback && rollback.getApplicationException() != null) {
				pending.add(rollback.getApplicationException());
			}
			if (cause instanceof SQLException sql && sql.getNextException() != null) {
				pending.add(sql.getNextException());
			}
			if (cause.getCause() != null && cause.getCause() != cause) {
				pending.add(cause.getCause());
			}
			for (Throwable suppressed : cause.getSuppressed()) {
				pending.add(suppressed);
			}
		}
		return ERROR;
	}

	/** Whether trying again at once, on a fresh connection, is likely to work. */
	public boolean worthRetryingAtOnce() {
		return this != ERROR;
	}

	/** The cause's name in logs and in the {@code cause} tag of metrics. */
	public String tag() {
		return name().toLowerCase(Locale.ROOT);
	}

}
