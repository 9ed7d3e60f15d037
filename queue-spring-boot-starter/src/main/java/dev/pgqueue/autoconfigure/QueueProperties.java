package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.pgqueue.QueueAssignment;
import dev.pgqueue.RetryPolicy;
import dev.pgqueue.Schedule;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.HistorySettings;
import dev.pgqueue.engine.settings.ScheduleSettings;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.TwoPhaseSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.schema.SchemaName;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.util.unit.DataSize;

/**
 * Configuration of pgqueue: every {@code pgqueue.*} key, the dashboard's included. A key under
 * {@code pgqueue} that binds to nothing here fails start-up rather than being ignored, reported with
 * the key it is most likely a typo of; environment variables and system properties are not checked,
 * as Spring Boot checks none with {@code ignoreUnknownFields = false}.
 */
@ConfigurationProperties(prefix = "pgqueue", ignoreUnknownFields = false)
public class QueueProperties {

	/**
	 * Whether this application claims and runs jobs. When false, it only enqueues (a producer-only
	 * application, or a test that runs jobs itself with the test kit's QueueTester) and runs no
	 * pollers or background services; its @JobListener methods are still registered.
	 */
	private boolean enabled = true;

	/**
	 * Whether the application stays up while it processes jobs (it has a listener or a recurring job
	 * and pgqueue.enabled is true), with or without a web server, until its context closes (SIGTERM,
	 * SIGINT). Every pgqueue thread is a daemon, so without it a worker application without a web
	 * server exits as soon as it has started.
	 */
	private boolean keepAlive = true;

	/**
	 * How long running jobs may take to finish when the application stops, before unfinished ones go
	 * back to the queue without using an attempt. Keep it below
	 * spring.lifecycle.timeout-per-shutdown-phase.
	 */
	private Duration shutdownTimeout = WorkerSettings.DEFAULT_SHUTDOWN_TIMEOUT;

	/**
	 * Largest payload accepted at enqueue, as serialized JSON. Larger data belongs elsewhere, with its
	 * key in the payload.
	 */
	private DataSize maxPayloadSize = DataSize.ofBytes(EngineSettings.DEFAULT_MAX_PAYLOAD_BYTES);

	/**
	 * Most jobs one JobClient.enqueueAll call may carry; a larger call is refused whole. One call is one
	 * insert in one transaction: enqueue more in several calls, in one transaction if they must commit
	 * together.
	 */
	private int maxJobsPerEnqueue = EngineSettings.DEFAULT_MAX_JOBS_PER_ENQUEUE;

	/**
	 * How many attempts each job keeps in its history (start, end, outcome, error class and message):
	 * the newest this many, read oldest first; 0 keeps none.
	 */
	private int attemptHistory = WorkerSettings.DEFAULT_ATTEMPT_HISTORY;

	/**
	 * How many times a job may snooze (JobSnoozedException); a job that asks once more fails for good,
	 * saying so.
	 */
	private int maxSnoozes = WorkerSettings.DEFAULT_MAX_SNOOZES;

	/**
	 * Largest output a listener may return, as serialized JSON, stored with its completed job. A
	 * larger one fails the job, naming its size and this setting.
	 */
	private DataSize maxOutputSize = DataSize.ofBytes(WorkerSettings.DEFAULT_MAX_OUTPUT_BYTES);

	@NestedConfigurationProperty
	private final QueueSchemaProperties schema = new QueueSchemaProperties();

	@NestedConfigurationProperty
	private final QueueRetentionProperties retention = new QueueRetentionProperties();

	@NestedConfigurationProperty
	private final QueueMaintenanceProperties maintenance = new QueueMaintenanceProperties();

	@NestedConfigurationProperty
	private final QueueNotificationProperties notifications = new QueueNotificationProperties();

	@NestedConfigurationProperty
	private final QueueBucketsProperties buckets = new QueueBucketsProperties();

	@NestedConfigurationProperty
	private final QueueTwoPhaseCommitProperties twoPhaseCommit = new QueueTwoPhaseCommitProperties();

	@NestedConfigurationProperty
	private final QueueObservationProperties observations = new QueueObservationProperties();

	@NestedConfigurationProperty
	private final QueueDashboardProperties dashboard = new QueueDashboardProperties();

	@NestedConfigurationProperty
	private final QueueEventsProperties events = new QueueEventsProperties();

	/**
	 * Queues by name. A queue that a listener names but that is not configured here runs with the
	 * defaults.
	 */
	private Map<String, QueueSettingsProperties> queues = new LinkedHashMap<>();

	/**
	 * Settings of single kinds of job, by kind; each overrides what the kind's @JobListener says. A
	 * kind with dots goes in brackets: pgqueue.kinds[report.render].timeout.
	 */
	private Map<String, QueueKindProperties> kinds = new LinkedHashMap<>();

	/**
	 * Recurring jobs by name, saved at start-up into the schedules every instance on the jobs table
	 * shares. Removing one here does not delete it: delete it through JobSchedules or the endpoint.
	 */
	private Map<String, QueueScheduleProperties> schedules = new LinkedHashMap<>();

	/**
	 * Shards by name, each a PostgreSQL database with its own jobs table, in the order their slots are
	 * spread over. With none, pgqueue runs on the application's (or the @QueueDataSource) DataSource.
	 */
	private Map<String, QueueShardProperties> shards = new LinkedHashMap<>();

	@NestedConfigurationProperty
	private final QueueShardingProperties sharding = new QueueShardingProperties();

	@NestedConfigurationProperty
	private final QueueSchedulingProperties scheduling = new QueueSchedulingProperties();

	@NestedConfigurationProperty
	private final QueueHistoryProperties history = new QueueHistoryProperties();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public boolean isKeepAlive() {
		return this.keepAlive;
	}

	public void setKeepAlive(boolean keepAlive) {
		this.keepAlive = keepAlive;
	}

	public Duration getShutdownTimeout() {
		return this.shutdownTimeout;
	}

	public void setShutdownTimeout(Duration shutdownTimeout) {
		this.shutdownTimeout = shutdownTimeout;
	}

	public DataSize getMaxPayloadSize() {
		return this.maxPayloadSize;
	}

	public void setMaxPayloadSize(DataSize maxPayloadSize) {
		this.maxPayloadSize = maxPayloadSize;
	}

	public int getMaxJobsPerEnqueue() {
		return this.maxJobsPerEnqueue;
	}

	public void setMaxJobsPerEnqueue(int maxJobsPerEnqueue) {
		this.maxJobsPerEnqueue = maxJobsPerEnqueue;
	}

	public int getAttemptHistory() {
		return this.attemptHistory;
	}

	public void setAttemptHistory(int attemptHistory) {
		this.attemptHistory = attemptHistory;
	}

	public int getMaxSnoozes() {
		return this.maxSnoozes;
	}

	public void setMaxSnoozes(int maxSnoozes) {
		this.maxSnoozes = maxSnoozes;
	}

	public DataSize getMaxOutputSize() {
		return this.maxOutputSize;
	}

	public void setMaxOutputSize(DataSize maxOutputSize) {
		this.maxOutputSize = maxOutputSize;
	}

	public QueueEventsProperties getEvents() {
		return this.events;
	}

	public QueueSchemaProperties getSchema() {
		return this.schema;
	}

	public QueueRetentionProperties getRetention() {
		return this.retention;
	}

	public QueueMaintenanceProperties getMaintenance() {
		return this.maintenance;
	}

	public QueueNotificationProperties getNotifications() {
		return this.notifications;
	}

	public QueueBucketsProperties getBuckets() {
		return this.buckets;
	}

	public QueueTwoPhaseCommitProperties getTwoPhaseCommit() {
		return this.twoPhaseCommit;
	}

	public QueueObservationProperties getObservations() {
		return this.observations;
	}

	public QueueDashboardProperties getDashboard() {
		return this.dashboard;
	}

	public Map<String, QueueKindProperties> getKinds() {
		return this.kinds;
	}

	public Map<String, QueueShardProperties> getShards() {
		return this.shards;
	}

	public void setShards(Map<String, QueueShardProperties> shards) {
		this.shards = shards;
	}

	public QueueShardingProperties getSharding() {
		return this.sharding;
	}

	public void setKinds(Map<String, QueueKindProperties> kinds) {
		this.kinds = kinds;
	}

	public Map<String, QueueScheduleProperties> getSchedules() {
		return this.schedules;
	}

	public void setSchedules(Map<String, QueueScheduleProperties> schedules) {
		this.schedules = schedules;
	}

	public QueueSchedulingProperties getScheduling() {
		return this.scheduling;
	}

	public QueueHistoryProperties getHistory() {
		return this.history;
	}

	/** The queues' per-minute history settings, validated; errors name the key. */
	public HistorySettings toHistorySettings() {
		return this.history.toHistorySettings();
	}

	/** The declared schedules and the ticker's timings, validated; errors name the key. */
	public ScheduleSettings toScheduleSettings() {
		List<Schedule> declared = new ArrayList<>();
		this.schedules.forEach((name, entry) -> declared.add(entry.toSchedule(name)));
		return this.scheduling.toScheduleSettings(declared);
	}

	public Map<String, QueueSettingsProperties> getQueues() {
		return this.queues;
	}

	public void setQueues(Map<String, QueueSettingsProperties> queues) {
		this.queues = queues;
	}

	/** The queues configured to claim by buckets, whose claims read the bucket claim index. */
	List<String> bucketQueues() {
		return this.queues.entrySet()
			.stream()
			.filter((queue) -> queue.getValue().getAssignment() == QueueAssignment.BUCKETS)
			.map(Map.Entry::getKey)
			.toList();
	}

	/**
	 * The configured queues as engine settings, validated.
	 * @param defaultRetry the retry policy of queues that set no {@code retry.*} key, and the source of
	 * the keys a queue leaves out
	 */
	public List<QueueSettings> toQueueSettings(RetryPolicy defaultRetry) {
		List<QueueSettings> settings = new ArrayList<>();
		this.queues.forEach((name, queue) -> settings.add(queue.toSettings(name, defaultRetry)));
		return settings;
	}

	/** The in-doubt resolver's settings, validated. */
	public TwoPhaseSettings toTwoPhaseSettings() {
		return this.twoPhaseCommit.toTwoPhaseSettings();
	}

	/**
	 * The engine's settings, validated.
	 * @param virtualThreads whether the application runs on virtual threads
	 */
	public EngineSettings toEngineSettings(boolean virtualThreads) {
		WorkerSettings workers = new WorkerSettings(this.shutdownTimeout, virtualThreads,
				this.retention.getCompleted().isZero(), this.attemptHistory, this.maxSnoozes,
				(this.maxOutputSize != null) ? this.maxOutputSize.toBytes() : 0);
		MaintenanceSettings maintenance = toMaintenanceSettings();
		return new EngineSettings(SchemaName.of(this.schema.getName()), workers, maintenance, toTwoPhaseSettings(),
				this.notifications.isEnabled(), this.notifications.getMinInterval(),
				this.notifications.getLivenessTimeout(), this.buckets.getHeartbeatInterval(),
				(this.maxPayloadSize != null) ? this.maxPayloadSize.toBytes() : 0, this.maxJobsPerEnqueue,
				// A queue counts as slipping its SLA for two stats intervals after a job missed it, so that
				// the health component shows it between two reads.
				maintenance.statsInterval().multipliedBy(2));
	}

	/** The background services' settings, validated. */
	public MaintenanceSettings toMaintenanceSettings() {
		return this.maintenance.toMaintenanceSettings(this.retention);
	}

}
