package dev.pgqueue.engine.sql;

import dev.pgqueue.schema.SchemaName;

/**
 * The statements of the polling heartbeat, over the pollers and handled-kinds tables of one schema,
 * each named after what it does; {@link PollingRepository} runs them. Parameters are positional and
 * listed in each statement's Javadoc.
 *
 * <p>Times are compared on the database clock only ({@code now()}), so that instances whose clocks
 * disagree still agree on which queues are polled.
 */
final class PollingStatements {

	/**
	 * Records that an instance polls the given queues, adding the rows it did not have. Parameters:
	 * instance, array of queues.
	 */
	final String heartbeat;

	/**
	 * Records that the given kinds were handled in the given queues: adds the pairs not seen before,
	 * and refreshes the time of those last seen longer ago than a period (so that a heartbeat rewrites
	 * nothing most of the time). Parameters: arrays of queues and kinds (pairs by position, each pair
	 * at most once), the period in milliseconds.
	 */
	final String recordHandledKinds;

	/**
	 * Removes the rows of instances whose last heartbeat is older than a retention, skipping rows
	 * another transaction holds (an instance back from a long pause heartbeating). Parameter:
	 * retention in milliseconds.
	 */
	final String dropGonePollers;

	/**
	 * Removes the kinds not seen handled for longer than a retention, skipping rows another
	 * transaction holds (an instance seeing one again), so that the removal never waits on a
	 * heartbeat nor deadlocks with one. Parameter: retention in milliseconds.
	 */
	final String dropForgottenKinds;

	/**
	 * The queues some instance polls: those with a heartbeat within the expiry. Parameter: expiry in
	 * milliseconds. Returns the queue.
	 */
	final String polledQueues;

	/** Every kind seen handled, and where. Returns queue, kind. */
	final String handledKinds;

	PollingStatements(SchemaName schema) {
		String pollers = schema.qualify("pgqueue_pollers");
		String kinds = schema.qualify("pgqueue_handled_kinds");
		this.heartbeat = """
				INSERT INTO %s (queue, instance)
				SELECT q.queue, ?::text FROM unnest(?::text[]) AS q(queue)
				ON CONFLICT (queue, instance) DO UPDATE SET heartbeat_at = now()
				""".formatted(pollers);
		this.recordHandledKinds = """
				INSERT INTO %s AS k (queue, kind)
				SELECT h.queue, h.kind FROM unnest(?::text[], ?::text[]) AS h(queue, kind)
				ON CONFLICT (queue, kind) DO UPDATE SET last_seen_at = now()
				WHERE k.last_seen_at < now() - ? * interval '1 millisecond'
				""".formatted(kinds);
		this.dropGonePollers = """
				DELETE FROM %1$s WHERE (queue, instance) IN (
				    SELECT queue, instance FROM %1$s
				    WHERE heartbeat_at < now() - ? * interval '1 millisecond'
				    FOR UPDATE SKIP LOCKED)
				""".formatted(pollers);
		this.dropForgottenKinds = """
				DELETE FROM %1$s WHERE (queue, kind) IN (
				    SELECT queue, kind FROM %1$s
				    WHERE last_seen_at < now() - ? * interval '1 millisecond'
				    FOR UPDATE SKIP LOCKED)
				""".formatted(kinds);
		this.polledQueues = """
				SELECT DISTINCT queue FROM %s WHERE heartbeat_at >= now() - ? * interval '1 millisecond'
				""".formatted(pollers);
		this.handledKinds = "SELECT queue, kind FROM %s".formatted(kinds);
	}

}
