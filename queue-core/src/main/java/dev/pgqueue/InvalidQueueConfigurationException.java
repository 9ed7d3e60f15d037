package dev.pgqueue;

/**
 * A pgqueue setting has a value that cannot work. The message names the setting as it is written
 * in {@code application.yml}; {@link #action()} says what to do about it.
 */
public class InvalidQueueConfigurationException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final String key;

	private final String action;

	/**
	 * @param key the setting, for example {@code pgqueue.queues.mail.concurrency}
	 * @param problem what is wrong, naming the setting and its value
	 * @param action what to do about it
	 */
	public InvalidQueueConfigurationException(String key, String problem, String action) {
		super(problem);
		this.key = key;
		this.action = action;
	}

	/** The setting at fault. */
	public String key() {
		return this.key;
	}

	/** What to do about it. */
	public String action() {
		return this.action;
	}

	/**
	 * The same problem with its key placed under {@code prefix}: a rule checked where the setting's
	 * full name is unknown (a retry policy, say) is reported as the user wrote it.
	 */
	public InvalidQueueConfigurationException within(String prefix) {
		// Every key the message names shares the first segment ("retry." of "retry.max-delay").
		String root = (this.key.indexOf('.') > 0) ? this.key.substring(0, this.key.indexOf('.') + 1) : this.key;
		InvalidQueueConfigurationException placed = new InvalidQueueConfigurationException(prefix + this.key,
				getMessage().replace(root, prefix + root), this.action.replace(root, prefix + root));
		placed.initCause(this);
		return placed;
	}

}
