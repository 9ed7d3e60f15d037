package dev.pgqueue;

/**
 * Why an attempt failed when its listener ran past its time limit ({@code pgqueue.queues.<name>.timeout},
 * {@code @JobListener(timeout = ...)} or {@code pgqueue.kinds.<kind>.timeout}). pgqueue records it as
 * the job's last error; its stack trace is the listener's thread at the moment the limit passed,
 * which shows where the listener was stuck.
 *
 * <p>A timed-out attempt is retried like any failure. To fail a job at once when it times out,
 * list {@code dev.pgqueue.JobTimeoutException} in the queue's {@code non-retryable-exceptions}.
 */
public class JobTimeoutException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public JobTimeoutException(String message) {
		super(message);
	}

}
