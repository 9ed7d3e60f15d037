package dev.pgqueue.autoconfigure;

import java.time.Duration;

import dev.pgqueue.engine.settings.EngineSettings;

/** The coordinator of queues with bucket assignment. */
public class QueueBucketsProperties {

	/**
	 * How often each instance polling a queue with bucket assignment heartbeats, takes its turn as
	 * leader and picks up its buckets. A member that missed three heartbeats is dead: its buckets
	 * move to the others within five heartbeat intervals of its last one.
	 */
	private Duration heartbeatInterval = EngineSettings.DEFAULT_HEARTBEAT_INTERVAL;

	public Duration getHeartbeatInterval() {
		return this.heartbeatInterval;
	}

	public void setHeartbeatInterval(Duration heartbeatInterval) {
		this.heartbeatInterval = heartbeatInterval;
	}

}
