package dev.pgqueue.sample.database;

/**
 * No PostgreSQL could be found or started for the sample.
 */
public class NoDatabaseException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public NoDatabaseException(String reason) {
		super("The pgqueue sample found no PostgreSQL to use: " + reason + ".");
	}

}
