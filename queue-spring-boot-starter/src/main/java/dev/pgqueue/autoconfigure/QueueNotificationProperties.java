package dev.pgqueue.autoconfigure;

import java.time.Duration;

import dev.pgqueue.engine.settings.EngineSettings;

/** The NOTIFY and LISTEN that wake pollers, under {@code pgqueue.notifications}. */
public class QueueNotificationProperties {

	/**
	 * Whether enqueues send NOTIFY and pollers LISTEN, so that a new job is picked up at once
	 * rather than at the next poll. Turn off behind a connection pooler in transaction mode, where
	 * LISTEN does not work; polling then carries on alone.
	 */
	private boolean enabled = true;

	/**
	 * Shortest time between two notifications this application sends for one queue. Enqueues in
	 * between are announced together by one notification at the end of the interval, which keeps
	 * delivery prompt under a steady stream of enqueues. Zero notifies on every enqueue.
	 */
	private Duration minInterval = EngineSettings.DEFAULT_NOTIFY_INTERVAL;

	/**
	 * Longest time the listening connection may be deaf (a half-open socket after a failover)
	 * without the listener noticing. After half of it without a notification the listener checks
	 * the connection, which must answer within the other half; otherwise it is closed and a new one
	 * opened, and every poller polls once.
	 */
	private Duration livenessTimeout = EngineSettings.DEFAULT_LIVENESS_TIMEOUT;

	/**
	 * Whether the jobs table's trigger notifies the queues of jobs inserted by plain SQL, not only
	 * through JobClient: enabled or disabled at start-up to match (the last instance to start wins).
	 * Every committed insert of due jobs then notifies, at a cost to each insert statement.
	 */
	private boolean trigger;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Duration getMinInterval() {
		return this.minInterval;
	}

	public void setMinInterval(Duration minInterval) {
		this.minInterval = minInterval;
	}

	public Duration getLivenessTimeout() {
		return this.livenessTimeout;
	}

	public void setLivenessTimeout(Duration livenessTimeout) {
		this.livenessTimeout = livenessTimeout;
	}

	public boolean isTrigger() {
		return this.trigger;
	}

	public void setTrigger(boolean trigger) {
		this.trigger = trigger;
	}

}
