package dev.pgqueue.engine.sql;

import dev.pgqueue.schema.SchemaName;

/**
 * The statements of two-phase commit, for one schema's jobs table, each named after what it does;
 * {@link PreparedTransactionRepository} runs them. Parameters are positional and listed in each
 * statement's Javadoc.
 *
 * <p>The worker's lock on a prepared transaction is the session-level advisory lock keyed on its
 * transaction id, {@code hashtextextended(gid, 0)}: every statement on it computes the key the same
 * way.
 *
 * <p>{@code PREPARE TRANSACTION}, {@code COMMIT PREPARED} and {@code ROLLBACK PREPARED} take no bind
 * parameters, so their texts are built for one transaction id at a time, written as an escape string
 * literal ({@link #literal(String)}).
 */
final class PreparedTransactionStatements {

	/** The server's {@code max_prepared_transactions}. No parameters. Returns it as an int. */
	final String maxPreparedTransactions = "SELECT current_setting('max_prepared_transactions')::int";

	/**
	 * The prepared transactions of this database whose id starts with a prefix, oldest first, each with
	 * the job its id names (the id ends with the job's public id) as every other session sees it while
	 * the transaction is prepared: before the prepared transaction's changes, so with its payload and
	 * the attempt it had. Parameter: prefix. Returns gid, transaction id (as text), age in seconds,
	 * and the job's public id, kind, queue, attempt and payload (all null when no job has the id).
	 */
	final String preparedJobs;

	/**
	 * Takes the worker's lock of a prepared transaction at session level, waiting for it if need be.
	 * Parameter: gid. Returns one row, {@code false}.
	 */
	final String hold = "SELECT pg_advisory_lock(hashtextextended(?, 0)) IS NULL";

	/**
	 * Takes the worker's lock of a prepared transaction at session level if nobody holds it.
	 * Parameter: gid. Returns whether it did.
	 */
	final String tryHold = "SELECT pg_try_advisory_lock(hashtextextended(?, 0))";

	/**
	 * Whether another session holds the worker's lock of a prepared transaction; takes and releases it
	 * at once when it is free. Parameters: gid, gid.
	 */
	final String isHeldElsewhere = """
			SELECT CASE WHEN pg_try_advisory_lock(hashtextextended(?, 0))
			            THEN NOT pg_advisory_unlock(hashtextextended(?, 0))
			            ELSE true END""";

	/**
	 * Releases the session-level worker's lock of a prepared transaction. Parameter: gid. Returns
	 * whether this session held it.
	 */
	final String release = "SELECT pg_advisory_unlock(hashtextextended(?, 0))";

	/**
	 * Whether a transaction is still prepared under a gid. Parameters: gid, transaction id (as text).
	 */
	final String isPrepared = "SELECT EXISTS (SELECT 1 FROM pg_prepared_xacts WHERE gid = ? AND transaction::text = ?)";

	PreparedTransactionStatements(SchemaName schema) {
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

	/**
	 * Prepares the session's transaction under a gid. No parameters: the gid is written into the text.
	 */
	String prepare(String gid) {
		return "PREPARE TRANSACTION " + literal(gid);
	}

	/**
	 * Commits the transaction prepared under a gid; runs outside any transaction block. No parameters:
	 * the gid is written into the text.
	 */
	String commitPrepared(String gid) {
		return "COMMIT PREPARED " + literal(gid);
	}

	/**
	 * Rolls back the transaction prepared under a gid; runs outside any transaction block. No
	 * parameters: the gid is written into the text.
	 */
	String rollbackPrepared(String gid) {
		return "ROLLBACK PREPARED " + literal(gid);
	}

	/** An escape string literal, whatever {@code standard_conforming_strings} says. */
	static String literal(String text) {
		return "E'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'";
	}

}
