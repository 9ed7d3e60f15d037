package dev.pgqueue.sample.signup;

/**
 * Payload of an {@value #KIND} job, stored as JSON in the job's row.
 *
 * @param accountId the new account
 * @param email where to send it
 * @param name how to greet the reader
 */
public record WelcomeEmail(long accountId, String email, String name) {

	/** The job kind; producer and listener must agree on it. */
	public static final String KIND = "email.welcome";

}
