package dev.pgqueue;

/**
 * A {@link JobListener @JobListener} method cannot be used as declared: a kind claimed twice, a
 * blank kind or queue, or parameters that do not fit. {@link #action()} says how to fix it.
 */
public class InvalidJobListenerException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	private final String action;

	public InvalidJobListenerException(String problem, String action) {
		super(problem);
		this.action = action;
	}

	/** What to do about it. */
	public String action() {
		return this.action;
	}

}
