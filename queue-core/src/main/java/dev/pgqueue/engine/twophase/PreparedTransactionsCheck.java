package dev.pgqueue.engine.twophase;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.schema.SchemaName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up check of a queue with two-phase commit: the server must allow prepared transactions
 * ({@code max_prepared_transactions} is 0 by default, and changing it needs a restart), and the ids
 * of the queue's transactions must fit PostgreSQL's 200 bytes.
 */
public final class PreparedTransactionsCheck {

	private static final Logger logger = LoggerFactory.getLogger(PreparedTransactionsCheck.class);

	private PreparedTransactionsCheck() {
	}

	/**
	 * Checks a queue with two-phase commit against the server's {@code max_prepared_transactions}.
	 * @throws InvalidQueueConfigurationException when the queue cannot work on this server
	 */
	public static void check(QueueSettings settings, SchemaName schema, int maxPreparedTransactions) {
		String key = "pgqueue.queues." + settings.name() + ".two-phase-commit";
		if (maxPreparedTransactions <= 0) {
			throw new InvalidQueueConfigurationException(key, "Queue '" + settings.name() + "' uses two-phase commit, "
					+ "but the PostgreSQL server does not allow prepared transactions (max_prepared_transactions is "
					+ maxPreparedTransactions + ")", "Set max_prepared_transactions on the server to at least the "
							+ "number of jobs that run at once with two-phase commit across every instance (for example "
							+ "ALTER SYSTEM SET max_prepared_transactions = 64; it takes effect after a restart), or turn "
							+ key + " off.");
		}
		if (!TransactionIds.fits(schema, settings.name())) {
			throw new InvalidQueueConfigurationException(key, "Queue '" + settings.name() + "' uses two-phase commit, "
					+ "but its name is too long: the ids of its prepared transactions ('"
					+ TransactionIds.prefix(schema) + "<queue>:<job id>') would pass PostgreSQL's 200 bytes",
					"Give the queue a shorter name, or turn " + key + " off.");
		}
		if (maxPreparedTransactions < settings.concurrency()) {
			logger.warn("Queue '{}' runs up to {} jobs at once with two-phase commit, but the server allows {} prepared "
					+ "transactions (max_prepared_transactions), across every application: the jobs past that fail to "
					+ "prepare and go back to the queue. Raise max_prepared_transactions (it takes a restart), or "
					+ "lower pgqueue.queues.{}.concurrency.", settings.name(), settings.concurrency(),
					maxPreparedTransactions, settings.name());
		}
	}

}
