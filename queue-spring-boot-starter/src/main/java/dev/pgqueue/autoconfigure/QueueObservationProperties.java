package dev.pgqueue.autoconfigure;

/** Observations of enqueues and attempts, under {@code pgqueue.observations}. */
public class QueueObservationProperties {

	/**
	 * Whether enqueues and attempts are observed on the application's ObservationRegistry: spans
	 * that carry the enqueue's trace to the job's processing, and the timers a meter handler makes
	 * of them. Unset, they are observed when the application has a Micrometer Tracing tracer.
	 */
	private Boolean enabled;

	public Boolean getEnabled() {
		return this.enabled;
	}

	public void setEnabled(Boolean enabled) {
		this.enabled = enabled;
	}

}
