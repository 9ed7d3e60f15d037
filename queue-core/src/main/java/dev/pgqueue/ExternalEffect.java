package dev.pgqueue;

/**
 * The step of a job that reaches outside the database (publish a message, call a payment API),
 * returned by a {@link JobListener @JobListener} method of a queue with two-phase commit
 * ({@code pgqueue.queues.<name>.two-phase-commit: true}).
 *
 * <p>The listener does its database work and returns the step without running it. pgqueue then
 * prepares the job's transaction ({@code PREPARE TRANSACTION}: the listener's writes and the job's
 * completion, with the job's row still locked), runs the step, and commits the prepared
 * transaction. When the step throws, the prepared transaction is rolled back and the attempt counts
 * as failed, retried like any other failure. When the process dies between the prepare and the
 * commit, an {@link InDoubtJobResolver} decides later whether the step happened.
 *
 * <pre>{@code
 * @JobListener(kind = "payment.capture", queue = "payments")
 * ExternalEffect capture(Capture capture, Job job) {
 *     jdbc.update("UPDATE orders SET state = 'paid' WHERE id = ?", capture.orderId());
 *     return () -> payments.capture(capture.amount(), job.id().toString()); // idempotency key
 * }
 * }</pre>
 *
 * <p>The step runs outside any transaction, on the listener's thread. It should pass the job's
 * {@link Job#id() id} to the other system as its idempotency key: that is how the resolver can ask
 * whether it happened, and what keeps a step that did happen from happening again if it is ever
 * retried. Returning {@code null} commits the job's transaction at once, without a prepare.
 */
@FunctionalInterface
public interface ExternalEffect {

	/**
	 * Runs the step; returning normally commits the job's prepared transaction.
	 * @throws Exception when the step did not happen: the prepared transaction is rolled back
	 */
	void run() throws Exception;

}
