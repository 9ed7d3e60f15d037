package dev.pgqueue.engine.settings;

import java.time.Duration;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.schema.SchemaName;

/**
 * Settings of one engine that are not a queue's own: where its tables are, how its workers start
 * and stop, its background services, notifications, bucket coordination and the enqueue's limits. The
 * one place that holds their defaults and validates them; {@link QueueSettings} does the same for
 * each queue.
 *
 * @param schema where the engine's tables are
 * @param workers thread and shutdown settings every poller shares
 * @param maintenance timings of the background services
 * @param twoPhase timings of the in-doubt resolver (used only when a queue has two-phase commit)
 * @param notifications whether enqueues notify the pollers of other applications ({@code LISTEN/NOTIFY}),
 * and this application listens
 * @param notifyInterval least time between two notifications of one queue from this application;
 * zero notifies on every enqueue
 * @param livenessTimeout longest time the notification listener may be deaf without noticing: after
 * half of it without a notification it checks its connection, which must answer within the other half,
 * else it is closed and a new one opened
 * @param heartbeatInterval how often members of a bucket coordinator heartbeat
 * @param maxPayloadBytes largest serialized payload accepted, in bytes of UTF-8 JSON
 * @param maxJobsPerEnqueue most jobs one {@code enqueueAll} call may carry
 * @param slaWindow how long a queue counts as slipping its latency target after a job missed it
 */
public record EngineSettings(SchemaName schema, WorkerSettings workers, MaintenanceSettings maintenance,
		TwoPhaseSettings twoPhase, boolean notifications, Duration notifyInterval, Duration livenessTimeout, Duration heartbeatInterval,
		long maxPayloadBytes, int maxJobsPerEnqueue, Duration slaWindow) {

	/** Least time between two notifications of one queue, unless configured. */
	public static final Duration DEFAULT_NOTIFY_INTERVAL = Duration.ofMillis(2);

	/** Longest time the notification listener may be deaf without noticing, unless configured. */
	public static final Duration DEFAULT_LIVENESS_TIMEOUT = Duration.ofSeconds(10);

	/** How often members of a bucket coordinator heartbeat, unless configured. */
	public static final Duration DEFAULT_HEARTBEAT_INTERVAL = Duration.ofSeconds(2);

	/** Largest payload accepted unless configured: 1 MiB of JSON. */
	public static final long DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

	/**
	 * Most jobs one {@code enqueueAll} call may carry unless configured: a larger call is one insert and
	 * one transaction that holds its arrays in memory twice, and its locks and WAL all at once.
	 */
	public static final int DEFAULT_MAX_JOBS_PER_ENQUEUE = 10_000;

	/**
	 * A queue counts as slipping its latency target for two stats intervals after a job missed it,
	 * so that health shows it between two reads.
	 */
	public static final Duration DEFAULT_SLA_WINDOW = MaintenanceSettings.DEFAULT.statsInterval().multipliedBy(2);

	/** Every default, on the given schema. */
	public static EngineSettings defaults(SchemaName schema) {
		return new EngineSettings(schema, WorkerSettings.DEFAULT, MaintenanceSettings.DEFAULT, TwoPhaseSettings.DEFAULT,
				true, DEFAULT_NOTIFY_INTERVAL, DEFAULT_LIVENESS_TIMEOUT, DEFAULT_HEARTBEAT_INTERVAL,
				DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_MAX_JOBS_PER_ENQUEUE, DEFAULT_SLA_WINDOW);
	}

	public EngineSettings {
		if (notifyInterval == null || notifyInterval.isNegative()) {
			throw new InvalidQueueConfigurationException("pgqueue.notifications.min-interval",
					"pgqueue.notifications.min-interval must be zero or positive, was " + notifyInterval,
					"Set pgqueue.notifications.min-interval to a duration such as 2ms, or to 0 to notify on every "
							+ "enqueue.");
		}
		if (livenessTimeout == null || livenessTimeout.toMillis() < 2) {
			throw new InvalidQueueConfigurationException("pgqueue.notifications.liveness-timeout",
					"pgqueue.notifications.liveness-timeout must be at least 2ms, was " + livenessTimeout,
					"Set pgqueue.notifications.liveness-timeout to a duration such as 10s: how long the listener may "
							+ "go without hearing from the server before it checks (half) and gives up on (all of it) "
							+ "its connection.");
		}
		SettingRules.positive("pgqueue.buckets.heartbeat-interval", heartbeatInterval);
		SettingRules.positive("pgqueue.maintenance.stats-interval", slaWindow);
		if (maxPayloadBytes < 1) {
			throw new InvalidQueueConfigurationException("pgqueue.max-payload-size",
					"pgqueue.max-payload-size must be positive, was " + maxPayloadBytes + " bytes",
					"Set pgqueue.max-payload-size to a size such as 64KB or 1MB.");
		}
		if (maxJobsPerEnqueue < 1) {
			throw new InvalidQueueConfigurationException("pgqueue.max-jobs-per-enqueue",
					"pgqueue.max-jobs-per-enqueue must be positive, was " + maxJobsPerEnqueue,
					"Set pgqueue.max-jobs-per-enqueue to a count such as 10000.");
		}
	}

	/** These settings for the tables in another schema: a shard's, say. */
	public EngineSettings withSchema(SchemaName schema) {
		return new EngineSettings(schema, this.workers, this.maintenance, this.twoPhase, this.notifications,
				this.notifyInterval, this.livenessTimeout, this.heartbeatInterval, this.maxPayloadBytes,
				this.maxJobsPerEnqueue, this.slaWindow);
	}

	public EngineSettings withWorkers(WorkerSettings workers) {
		return new EngineSettings(this.schema, workers, this.maintenance, this.twoPhase, this.notifications,
				this.notifyInterval, this.livenessTimeout, this.heartbeatInterval, this.maxPayloadBytes,
				this.maxJobsPerEnqueue, this.slaWindow);
	}

	public EngineSettings withMaintenance(MaintenanceSettings maintenance) {
		return new EngineSettings(this.schema, this.workers, maintenance, this.twoPhase, this.notifications,
				this.notifyInterval, this.livenessTimeout, this.heartbeatInterval, this.maxPayloadBytes,
				this.maxJobsPerEnqueue, this.slaWindow);
	}

	public EngineSettings withTwoPhase(TwoPhaseSettings twoPhase) {
		return new EngineSettings(this.schema, this.workers, this.maintenance, twoPhase, this.notifications,
				this.notifyInterval, this.livenessTimeout, this.heartbeatInterval, this.maxPayloadBytes,
				this.maxJobsPerEnqueue, this.slaWindow);
	}

	/** Notifications on, at most one per queue per {@code interval}, or off when {@code notifications} is false. */
	public EngineSettings withNotifications(boolean notifications, Duration interval) {
		return new EngineSettings(this.schema, this.workers, this.maintenance, this.twoPhase, notifications, interval,
				this.livenessTimeout, this.heartbeatInterval, this.maxPayloadBytes,
				this.maxJobsPerEnqueue, this.slaWindow);
	}

	/** The notification listener's liveness timeout (see {@link #livenessTimeout()}). */
	public EngineSettings withLivenessTimeout(Duration livenessTimeout) {
		return new EngineSettings(this.schema, this.workers, this.maintenance, this.twoPhase, this.notifications,
				this.notifyInterval, livenessTimeout, this.heartbeatInterval, this.maxPayloadBytes,
				this.maxJobsPerEnqueue, this.slaWindow);
	}

	public EngineSettings withHeartbeatInterval(Duration heartbeatInterval) {
		return new EngineSettings(this.schema, this.workers, this.maintenance, this.twoPhase, this.notifications,
				this.notifyInterval, this.livenessTimeout, heartbeatInterval, this.maxPayloadBytes,
				this.maxJobsPerEnqueue, this.slaWindow);
	}

	public EngineSettings withMaxPayloadBytes(long maxPayloadBytes) {
		return new EngineSettings(this.schema, this.workers, this.maintenance, this.twoPhase, this.notifications,
				this.notifyInterval, this.livenessTimeout, this.heartbeatInterval, maxPayloadBytes,
				this.maxJobsPerEnqueue, this.slaWindow);
	}

	public EngineSettings withMaxJobsPerEnqueue(int maxJobsPerEnqueue) {
		return new EngineSettings(this.schema, this.workers, this.maintenance, this.twoPhase, this.notifications,
				this.notifyInterval, this.livenessTimeout, this.heartbeatInterval, this.maxPayloadBytes, maxJobsPerEnqueue,
				this.slaWindow);
	}

	public EngineSettings withSlaWindow(Duration slaWindow) {
		return new EngineSettings(this.schema, this.workers, this.maintenance, this.twoPhase, this.notifications,
				this.notifyInterval, this.livenessTimeout, this.heartbeatInterval, this.maxPayloadBytes,
				this.maxJobsPerEnqueue, slaWindow);
	}

}
