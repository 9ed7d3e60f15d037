package dev.pgqueue;

/**
 * Thrown by a listener for a failure that can never succeed on a retry (a malformed request, a
 * record that no longer exists): the job fails at once and keeps this message as its last error.
 */
public class NonRetryableJobException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public NonRetryableJobException(String message) {
		super(message);
	}

	public NonRetryableJobException(String message, Throwable cause) {
		super(message, cause);
	}

}
