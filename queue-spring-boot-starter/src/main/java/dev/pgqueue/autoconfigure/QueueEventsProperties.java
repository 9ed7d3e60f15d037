package dev.pgqueue.autoconfigure;

/** The application events of jobs' lifecycle, under {@code pgqueue.events}. */
public class QueueEventsProperties {

	/**
	 * Whether jobs' lifecycle steps (enqueued, started, succeeded, retried, failed, snoozed,
	 * cancelled) are published as application events (dev.pgqueue.JobEvent), each once it commits.
	 */
	private boolean enabled = true;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

}
