package dev.pgqueue.sample.signup;

/**
 * An account with this email exists already.
 */
public class EmailAlreadyRegisteredException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public EmailAlreadyRegisteredException(String email) {
		super("An account with email " + email + " exists already");
	}

}
