package dev.pgqueue;

import java.time.Duration;
import java.util.Objects;

/**
 * Thrown by a listener to say "not yet": the job goes back to the queue, scheduled to run again after
 * the delay, without using an attempt. For a job that waits on something outside it (a report whose
 * data has not arrived, a provider that asked to come back later), where a failure would spend the
 * job's attempts and log an error for what is not one.
 *
 * <p>What the attempt did is treated like a failed attempt's work: in a transactional queue its
 * database work is rolled back; in a leased queue whatever it did outside stays done. The snooze is
 * kept in the job's attempt history and counted in {@code pgqueue.jobs.snoozed}.
 *
 * <p>Snoozes are bounded: a job that has snoozed {@code pgqueue.max-snoozes} times (100 unless
 * configured) and snoozes again fails for good, with an error that says so, rather than waiting
 * forever unnoticed.
 */
public class JobSnoozedException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final Duration delay;

	/**
	 * @param delay how long the job waits before it runs again; zero makes it due at once
	 */
	public JobSnoozedException(Duration delay) {
		this(delay, null);
	}

	/**
	 * @param delay how long the job waits before it runs again; zero makes it due at once
	 * @param reason why, kept in the job's attempt history (no payload data: it is shown to operators)
	 */
	public JobSnoozedException(Duration delay, String reason) {
		super((reason != null) ? reason : "snoozed for " + Objects.requireNonNull(delay, "delay"), null, false, false);
		if (delay.isNegative()) {
			throw new IllegalArgumentException("A snooze needs a delay of zero or more, was " + delay);
		}
		this.delay = delay;
	}

	/** How long the job waits before it runs again. */
	public Duration delay() {
		return this.delay;
	}

}
