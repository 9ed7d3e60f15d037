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

	static InvalidQueueConfigurationException atLeastOne(String key, Object value) {
		return new InvalidQueueConfigurationException(key, key + " must be at least 1, was " + value,
				"Set " + key + " to 1 or more.");
	}

	static InvalidQueueConfigurationException positive(String key, Object value) {
		return new InvalidQueueConfigurationException(key, key + " must be positive, was " + value,
				"Set " + key + " to a positive duration such as 500ms or 1s.");
	}

}
