package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.MissedTicks;
import dev.pgqueue.Overlap;
import dev.pgqueue.QueueAssignment;
import dev.pgqueue.QueueMode;
import dev.pgqueue.RetryPolicy;
import dev.pgqueue.Schedule;
import dev.pgqueue.engine.settings.ConcurrencyLimits;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.HistorySettings;
import dev.pgqueue.engine.settings.ScheduleSettings;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.KindSettings;
import dev.pgqueue.engine.settings.KeyFairness;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.settings.TwoPhaseSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.schema.SchemaName;

import org.springframework.boot.context.properties.ConfigurationProperties;
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

	private final Schema schema = new Schema();

	private final Retention retention = new Retention();

	private final Maintenance maintenance = new Maintenance();

	private final Notifications notifications = new Notifications();

	private final Buckets buckets = new Buckets();

	private final TwoPhaseCommit twoPhaseCommit = new TwoPhaseCommit();

	private final Observations observations = new Observations();

	private final Dashboard dashboard = new Dashboard();

	private final Events events = new Events();

	/**
	 * Queues by name. A queue that a listener names but that is not configured here runs with the
	 * defaults.
	 */
	private Map<String, Queue> queues = new LinkedHashMap<>();

	/**
	 * Settings of single kinds of job, by kind; each overrides what the kind's @JobListener says. A
	 * kind with dots goes in brackets: pgqueue.kinds[report.render].timeout.
	 */
	private Map<String, Kind> kinds = new LinkedHashMap<>();

	/**
	 * Recurring jobs by name, saved at start-up into the schedules every instance on the jobs table
	 * shares. Removing one here does not delete it: delete it through JobSchedules or the endpoint.
	 */
	private Map<String, ScheduleEntry> schedules = new LinkedHashMap<>();

	/**
	 * Shards by name, each a PostgreSQL database with its own jobs table, in the order their slots are
	 * spread over. With none, pgqueue runs on the application's (or the @QueueDataSource) DataSource.
	 */
	private Map<String, QueueShardProperties> shards = new LinkedHashMap<>();

	private final Sharding sharding = new Sharding();

	private final Scheduling scheduling = new Scheduling();

	private final History history = new History();

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

	public Events getEvents() {
		return this.events;
	}

	public Schema getSchema() {
		return this.schema;
	}

	public Retention getRetention() {
		return this.retention;
	}

	public Maintenance getMaintenance() {
		return this.maintenance;
	}

	public Notifications getNotifications() {
		return this.notifications;
	}

	public Buckets getBuckets() {
		return this.buckets;
	}

	public TwoPhaseCommit getTwoPhaseCommit() {
		return this.twoPhaseCommit;
	}

	public Observations getObservations() {
		return this.observations;
	}

	public Dashboard getDashboard() {
		return this.dashboard;
	}

	public Map<String, Kind> getKinds() {
		return this.kinds;
	}

	public Map<String, QueueShardProperties> getShards() {
		return this.shards;
	}

	public void setShards(Map<String, QueueShardProperties> shards) {
		this.shards = shards;
	}

	public Sharding getSharding() {
		return this.sharding;
	}

	public void setKinds(Map<String, Kind> kinds) {
		this.kinds = kinds;
	}

	public Map<String, ScheduleEntry> getSchedules() {
		return this.schedules;
	}

	public void setSchedules(Map<String, ScheduleEntry> schedules) {
		this.schedules = schedules;
	}

	public Scheduling getScheduling() {
		return this.scheduling;
	}

	public History getHistory() {
		return this.history;
	}

	/** The queues' per-minute history settings, validated; errors name the key. */
	public HistorySettings toHistorySettings() {
		return new HistorySettings(this.history.enabled, this.history.retention);
	}

	/** The declared schedules and the ticker's timings, validated; errors name the key. */
	public ScheduleSettings toScheduleSettings() {
		List<Schedule> declared = new ArrayList<>();
		this.schedules.forEach((name, entry) -> declared.add(entry.toSchedule(name)));
		return new ScheduleSettings(declared, this.scheduling.tickInterval, this.scheduling.grace);
	}

	public Map<String, Queue> getQueues() {
		return this.queues;
	}

	public void setQueues(Map<String, Queue> queues) {
		this.queues = queues;
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
		return new TwoPhaseSettings(this.twoPhaseCommit.resolveInterval, this.twoPhaseCommit.inDoubtAfter,
				this.twoPhaseCommit.rollBackAfter);
	}

	/**
	 * The engine's settings, validated.
	 * @param virtualThreads whether the application runs on virtual threads
	 */
	public EngineSettings toEngineSettings(boolean virtualThreads) {
		WorkerSettings workers = new WorkerSettings(this.shutdownTimeout, virtualThreads,
				this.retention.completed.isZero(), this.attemptHistory, this.maxSnoozes,
				(this.maxOutputSize != null) ? this.maxOutputSize.toBytes() : 0);
		MaintenanceSettings maintenance = toMaintenanceSettings();
		return new EngineSettings(SchemaName.of(this.schema.name), workers, maintenance, toTwoPhaseSettings(),
				this.notifications.enabled, this.notifications.minInterval, this.notifications.livenessTimeout,
				this.buckets.heartbeatInterval,
				(this.maxPayloadSize != null) ? this.maxPayloadSize.toBytes() : 0,
				// A queue counts as slipping its SLA for two stats intervals after a job missed it, so that
				// the health component shows it between two reads.
				maintenance.statsInterval().multipliedBy(2));
	}

	/** The background services' settings, validated. */
	public MaintenanceSettings toMaintenanceSettings() {
		return new MaintenanceSettings(this.maintenance.promoteInterval, this.maintenance.rescueInterval,
				this.maintenance.cleanupInterval, this.maintenance.statsInterval, this.retention.completed,
				this.retention.failed, this.maintenance.cleanupBatchSize, this.maintenance.deadRowsWarning);
	}

	public static class Events {

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

	public static class Schema {

		/**
		 * Schema holding the jobs table: lower-case letters, digits and underscores.
		 */
		private String name = SchemaName.DEFAULT;

		/**
		 * Whether pgqueue creates and upgrades its table with its own Flyway instance (history in
		 * pgqueue_schema_history). Turn off when DDL is applied by other means; the table must then
		 * exist at start-up.
		 */
		private boolean migrate = true;

		public String getName() {
			return this.name;
		}

		public void setName(String name) {
			this.name = name;
		}

		public boolean isMigrate() {
			return this.migrate;
		}

		public void setMigrate(boolean migrate) {
			this.migrate = migrate;
		}

	}

	public static class Observations {

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

	public static class Notifications {

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

	/** How pgqueue runs over the shards of pgqueue.shards. */
	public static class Sharding {

		/**
		 * Whether a job without a shard or key (shard, concurrency, bucket or unique key) that its shard
		 * fails to take, as an unreachable server fails (connection refused or cut, pool timed out), is
		 * tried on the next shard that answers. Off by default: a connection cut while a commit is
		 * acknowledged hides a job that did commit, which spilling would enqueue a second time.
		 */
		private boolean spillUnkeyed;

		public boolean isSpillUnkeyed() {
			return this.spillUnkeyed;
		}

		public void setSpillUnkeyed(boolean spillUnkeyed) {
			this.spillUnkeyed = spillUnkeyed;
		}

		/**
		 * Whether the application starts while some shards do not answer (at least one must): each
		 * such shard counts as down, its keyed jobs refused, until it answers, is migrated and its
		 * pollers start. Off by default: start-up then fails naming the shard, so that a wrong URL
		 * cannot pass for an outage.
		 */
		private boolean startWhileDown;

		public boolean isStartWhileDown() {
			return this.startWhileDown;
		}

		public void setStartWhileDown(boolean startWhileDown) {
			this.startWhileDown = startWhileDown;
		}

	}

	public static class History {

		/**
		 * Whether each instance counts its queues' attempts, waits and run times per minute and adds
		 * them to the history table every 10 seconds, for the dashboard's charts and JobAdmin.history.
		 * When false nothing is recorded or written; minutes past the retention are still pruned.
		 */
		private boolean enabled = HistorySettings.DEFAULT.enabled();

		/** How long the per-minute history is kept before the cleaner prunes it. */
		private Duration retention = HistorySettings.DEFAULT_RETENTION;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getRetention() {
			return this.retention;
		}

		public void setRetention(Duration retention) {
			this.retention = retention;
		}

	}

	public static class Retention {

		/**
		 * How long completed jobs are kept before they are pruned. Zero deletes a completed job as it
		 * finishes.
		 */
		private Duration completed = MaintenanceSettings.DEFAULT.completedRetention();

		/**
		 * How long failed jobs are kept, with their last error, before they are pruned; cancelled jobs
		 * too.
		 */
		private Duration failed = MaintenanceSettings.DEFAULT.failedRetention();

		public Duration getCompleted() {
			return this.completed;
		}

		public void setCompleted(Duration completed) {
			this.completed = completed;
		}

		public Duration getFailed() {
			return this.failed;
		}

		public void setFailed(Duration failed) {
			this.failed = failed;
		}

	}

	public static class Maintenance {

		/**
		 * How often delayed jobs and retries that have become due are made available to pollers.
		 * Bounds the extra latency of a delayed job.
		 */
		private Duration promoteInterval = MaintenanceSettings.DEFAULT.promoteInterval();

		/**
		 * How often leased jobs whose lease expired (their worker died) are looked for and returned to
		 * the queue.
		 */
		private Duration rescueInterval = MaintenanceSettings.DEFAULT.rescueInterval();

		/**
		 * How often finished jobs past their retention are pruned (by one instance at a time).
		 */
		private Duration cleanupInterval = MaintenanceSettings.DEFAULT.cleanupInterval();

		/**
		 * How often queue depth and the age of the oldest due job are read for metrics and health.
		 */
		private Duration statsInterval = MaintenanceSettings.DEFAULT.statsInterval();

		/**
		 * Most finished jobs deleted by one prune statement.
		 */
		private int cleanupBatchSize = MaintenanceSettings.DEFAULT.cleanupBatchSize();

		/**
		 * Dead rows in the jobs table from which the stats reader warns that they grow without
		 * vacuum, when they also outnumber the live rows and the table was not vacuumed in the last
		 * ten minutes.
		 */
		private long deadRowsWarning = MaintenanceSettings.DEFAULT.deadRowsWarning();

		public Duration getPromoteInterval() {
			return this.promoteInterval;
		}

		public void setPromoteInterval(Duration promoteInterval) {
			this.promoteInterval = promoteInterval;
		}

		public Duration getRescueInterval() {
			return this.rescueInterval;
		}

		public void setRescueInterval(Duration rescueInterval) {
			this.rescueInterval = rescueInterval;
		}

		public Duration getCleanupInterval() {
			return this.cleanupInterval;
		}

		public void setCleanupInterval(Duration cleanupInterval) {
			this.cleanupInterval = cleanupInterval;
		}

		public Duration getStatsInterval() {
			return this.statsInterval;
		}

		public void setStatsInterval(Duration statsInterval) {
			this.statsInterval = statsInterval;
		}

		public int getCleanupBatchSize() {
			return this.cleanupBatchSize;
		}

		public void setCleanupBatchSize(int cleanupBatchSize) {
			this.cleanupBatchSize = cleanupBatchSize;
		}

		public long getDeadRowsWarning() {
			return this.deadRowsWarning;
		}

		public void setDeadRowsWarning(long deadRowsWarning) {
			this.deadRowsWarning = deadRowsWarning;
		}

	}

	/** How recurring jobs' ticks are fired. */
	public static class Scheduling {

		/** Time between two passes of the ticker, which fires the ticks that fell due. */
		private Duration tickInterval = ScheduleSettings.DEFAULT.tickInterval();

		/**
		 * How late a tick may fire and still be on time; a later one is missed and goes by its schedule's
		 * missed policy. Also how late a due tick may be before health reports it.
		 */
		private Duration grace = ScheduleSettings.DEFAULT.grace();

		public Duration getTickInterval() {
			return this.tickInterval;
		}

		public void setTickInterval(Duration tickInterval) {
			this.tickInterval = tickInterval;
		}

		public Duration getGrace() {
			return this.grace;
		}

		public void setGrace(Duration grace) {
			this.grace = grace;
		}

	}

	/** One recurring job. */
	public static class ScheduleEntry {

		/**
		 * Spring's cron expression: six fields (second minute hour day-of-month month day-of-week), such
		 * as "0 0 2 * * *", or a macro such as @hourly.
		 */
		private String cron;

		/** Time zone the expression reads in, such as Europe/Paris. */
		private String zone = "UTC";

		/** Kind of the job each tick enqueues. */
		private String kind;

		/** Queue of that job; by default the queue of the kind's listener, else "default". */
		private String queue;

		/**
		 * Payload of that job, a JSON object written as keys under payload (strings, numbers, booleans,
		 * nested objects; a list becomes an object keyed 0, 1, ...). For a payload that is not an
		 * object, save the schedule through JobSchedules.
		 */
		private Map<String, Object> payload;

		/** What to do with ticks missed while no instance ran: latest, all or none. */
		private MissedTicks missed = MissedTicks.LATEST;

		/** Whether a tick fires while the previous tick's job is unfinished: allow or skip. */
		private Overlap overlap = Overlap.ALLOW;

		Schedule toSchedule(String name) {
			String prefix = "pgqueue.schedules." + name + ".";
			if (this.kind == null || this.kind.isBlank()) {
				throw new InvalidQueueConfigurationException(prefix + "kind", "Schedule '" + name + "' has no kind",
						"Set " + prefix + "kind to the kind of job each tick enqueues, as its @JobListener names it.");
			}
			if (this.cron == null || this.cron.isBlank()) {
				throw new InvalidQueueConfigurationException(prefix + "cron", "Schedule '" + name + "' has no cron expression",
						"Set " + prefix + "cron, such as \"0 0 2 * * *\" (02:00 every day) or @hourly.");
			}
			Schedule schedule;
			try {
				schedule = Schedule.of(name, this.cron, this.kind);
			}
			catch (IllegalArgumentException ex) {
				String key = ex.getMessage().startsWith("Schedule name") ? "pgqueue.schedules." + name : prefix + "cron";
				throw new InvalidQueueConfigurationException(key, ex.getMessage(), "Fix " + key + ".");
			}
			try {
				schedule.zone(this.zone);
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidQueueConfigurationException(prefix + "zone", ex.getMessage(), "Fix " + prefix + "zone.");
			}
			return schedule.queue(this.queue).payload(this.payload).missed(this.missed).overlap(this.overlap);
		}

		public String getCron() {
			return this.cron;
		}

		public void setCron(String cron) {
			this.cron = cron;
		}

		public String getZone() {
			return this.zone;
		}

		public void setZone(String zone) {
			this.zone = zone;
		}

		public String getKind() {
			return this.kind;
		}

		public void setKind(String kind) {
			this.kind = kind;
		}

		public String getQueue() {
			return this.queue;
		}

		public void setQueue(String queue) {
			this.queue = queue;
		}

		public Map<String, Object> getPayload() {
			return this.payload;
		}

		public void setPayload(Map<String, Object> payload) {
			this.payload = payload;
		}

		public MissedTicks getMissed() {
			return this.missed;
		}

		public void setMissed(MissedTicks missed) {
			this.missed = missed;
		}

		public Overlap getOverlap() {
			return this.overlap;
		}

		public void setOverlap(Overlap overlap) {
			this.overlap = overlap;
		}

	}

	/** Settings of one kind of job. */
	public static class Kind {

		/**
		 * Most jobs of this kind running at once across every instance; overrides
		 * @JobListener(maxRunning). 0 for no limit.
		 */
		private Integer maxRunning;

		/**
		 * How long one attempt of this kind may run; overrides @JobListener(timeout) and the queue's
		 * timeout.
		 */
		private Duration timeout;

		/**
		 * At most so many jobs of this kind start in any window of one period, across every instance;
		 * overrides @JobListener(rateLimit).
		 */
		private final RateLimitProperties rateLimit = new RateLimitProperties();

		/**
		 * Units of each rate limit one job of this kind uses when it starts (the queue's, the kind's and
		 * its key's); overrides @JobListener(rateWeight). At most the smallest of those limits' starts.
		 */
		private Integer rateWeight;

		public RateLimitProperties getRateLimit() {
			return this.rateLimit;
		}

		public Integer getRateWeight() {
			return this.rateWeight;
		}

		public void setRateWeight(Integer rateWeight) {
			this.rateWeight = rateWeight;
		}

		/** The kind's settings; its rate limit's period is checked against its queue's poll interval later. */
		KindSettings toSettings(String kind) {
			RateLimit limit = (this.rateLimit.starts != null) ? RateLimit.of("pgqueue.kinds." + kind + ".rate-limit",
					"of kind '" + kind + "'", this.rateLimit.starts, this.rateLimit.period, Duration.ZERO) : null;
			return new KindSettings(kind, this.maxRunning, this.timeout, limit, this.rateWeight);
		}

		public Integer getMaxRunning() {
			return this.maxRunning;
		}

		public void setMaxRunning(Integer maxRunning) {
			this.maxRunning = maxRunning;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

	}

	/** The coordinator of queues with bucket assignment. */
	public static class Buckets {

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

	/**
	 * The in-doubt resolver of queues with two-phase commit, which finishes the prepared
	 * transactions of workers that died between prepare and commit.
	 */
	public static class TwoPhaseCommit {

		/**
		 * How often this schema's prepared transactions are looked for, and their metrics read. The
		 * first look is at start-up.
		 */
		private Duration resolveInterval = TwoPhaseSettings.DEFAULT.resolveInterval();

		/**
		 * How long a transaction must have been prepared, with its worker gone, before the
		 * InDoubtJobResolver is asked whether its effect happened. Keep it above the longest
		 * external effect: a worker cut off from the database may still be running one.
		 */
		private Duration inDoubtAfter = TwoPhaseSettings.DEFAULT.inDoubtAfter();

		/**
		 * Longest time a transaction stays prepared. One that could not be decided by then (no
		 * listener for its kind here, or a resolver that kept failing) is rolled back and its job
		 * runs again.
		 */
		private Duration rollBackAfter = TwoPhaseSettings.DEFAULT.rollBackAfter();

		public Duration getResolveInterval() {
			return this.resolveInterval;
		}

		public void setResolveInterval(Duration resolveInterval) {
			this.resolveInterval = resolveInterval;
		}

		public Duration getInDoubtAfter() {
			return this.inDoubtAfter;
		}

		public void setInDoubtAfter(Duration inDoubtAfter) {
			this.inDoubtAfter = inDoubtAfter;
		}

		public Duration getRollBackAfter() {
			return this.rollBackAfter;
		}

		public void setRollBackAfter(Duration rollBackAfter) {
			this.rollBackAfter = rollBackAfter;
		}

	}

	/** The dashboard. */
	public static class Dashboard {

		/**
		 * Whether the application serves the dashboard. It needs a servlet web application with Spring
		 * MVC.
		 */
		private boolean enabled;

		/**
		 * Path of the dashboard, below the servlet context path: starts with '/', does not end with
		 * one.
		 */
		private String path = "/pgqueue";

		/**
		 * Role a user needs, with Spring Security, to act in the dashboard: retry and cancel jobs,
		 * pause and resume queues and schedules, run schedules now and delete them. Given without
		 * Spring Security's 'ROLE_' prefix.
		 */
		private String writeRole = "PGQUEUE_ADMIN";

		/**
		 * Whether anyone who reaches the dashboard may act in it (retry, cancel, pause, resume, run
		 * now, delete) when the application has no Spring Security. Nothing then guards these actions, cross-site requests
		 * included: only for an application on a trusted network or a developer's machine.
		 */
		private boolean allowWritesWithoutSecurity;

		/**
		 * How often an open page reloads its queues and jobs. Zero turns reloading off.
		 */
		private Duration refreshInterval = Duration.ofSeconds(5);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public String getPath() {
			return this.path;
		}

		public void setPath(String path) {
			this.path = path;
		}

		public String getWriteRole() {
			return this.writeRole;
		}

		public void setWriteRole(String writeRole) {
			this.writeRole = writeRole;
		}

		public boolean isAllowWritesWithoutSecurity() {
			return this.allowWritesWithoutSecurity;
		}

		public void setAllowWritesWithoutSecurity(boolean allowWritesWithoutSecurity) {
			this.allowWritesWithoutSecurity = allowWritesWithoutSecurity;
		}

		public Duration getRefreshInterval() {
			return this.refreshInterval;
		}

		public void setRefreshInterval(Duration refreshInterval) {
			this.refreshInterval = refreshInterval;
		}

	}

	public static class Queue {

		/**
		 * How jobs run: 'transactional' (claim, run and finish in one transaction; database effects
		 * exactly once) or 'leased' (claim with a lease, run outside a transaction; at least once).
		 */
		private QueueMode mode = QueueSettings.DEFAULT_MODE;

		/**
		 * Workers of this queue in each instance. In transactional mode, batches run at once, each
		 * holding a pooled connection for as long as it runs; in leased mode, jobs run at once.
		 */
		private int concurrency = QueueSettings.DEFAULT_CONCURRENCY;

		/**
		 * Most jobs one claim statement takes. Defaults to 10, and to 1 for a queue with
		 * two-phase-commit, which accepts no other value. In transactional mode, where a batch
		 * starts and the least it shrinks to when its size adapts (max-batch-size).
		 */
		private Integer batchSize;

		/**
		 * Transactional mode: the most jobs a batch grows to while claims come back full and batches
		 * run shorter than 200 ms. Defaults to 500 (or batch-size, when larger); set it to
		 * batch-size for a batch that never grows. Leased queues, queues with two-phase-commit and
		 * queues with a batch-size of 1 (one job per transaction) do not adapt.
		 */
		private Integer maxBatchSize;

		/**
		 * Pause after a poll that found less than a full batch, spread by ±10 %.
		 */
		private Duration pollInterval = QueueSettings.DEFAULT_POLL_INTERVAL;

		/**
		 * Leased mode: how long a job may run without its lease being extended. Leases of running
		 * jobs are extended every third of this; a job whose lease expires is rescued.
		 */
		private Duration leaseDuration = QueueSettings.DEFAULT_LEASE_DURATION;

		/**
		 * Attempts a job gets unless its request says otherwise.
		 */
		private int maxAttempts = QueueSettings.DEFAULT_MAX_ATTEMPTS;

		/**
		 * Leased mode: whether the poller may claim a few jobs beyond its free workers while jobs
		 * are short (about what the workers start during two claim round trips, at most batch-size),
		 * so that a worker that finishes starts the next job at once. Jobs claimed ahead keep their
		 * lease extended and go back to the queue if they wait more than a second. While there is a
		 * backlog, up to 4 workers that find nothing claimed ahead also claim for themselves. Turn it
		 * off to never hold a job that no worker is running.
		 */
		private boolean claimAhead = QueueSettings.DEFAULT_CLAIM_AHEAD;

		/**
		 * Exception types that fail a job at once, without retries, besides
		 * NonRetryableJobException and payload mapping errors.
		 */
		private List<Class<? extends Throwable>> nonRetryableExceptions = new ArrayList<>();

		/**
		 * Spread of the run-at of each job enqueued without a jitter of its own: the job runs at a
		 * random instant in [run-at, run-at + jitter), on the database clock. Spreads jobs that fall
		 * due at the same instant, so that pollers do not all scan the same rows; spends part of the
		 * SLA to do it. Zero for none.
		 */
		private Duration runAtJitter = QueueSettings.DEFAULT_RUN_AT_JITTER;

		/**
		 * How the instances that poll this queue divide its jobs: 'shared' (every instance claims
		 * from the whole queue with SKIP LOCKED) or 'buckets' (a coordinator in PostgreSQL spreads
		 * the queue's buckets over the live instances; each claims only from its own).
		 */
		private QueueAssignment assignment = QueueSettings.DEFAULT_ASSIGNMENT;

		/**
		 * Number of buckets the queue's jobs are spread over, whatever the assignment; with
		 * 'buckets' assignment, comfortably more than the instances that will poll the queue.
		 */
		private int buckets = QueueSettings.DEFAULT_BUCKETS;

		/**
		 * How long after its run-at a job should have started. Jobs that start later are counted
		 * (pgqueue.jobs.sla.missed) and the queue is reported degraded while that count grows.
		 * None by default.
		 */
		private Duration sla;

		/**
		 * Most jobs with the same concurrency key (JobRequest.concurrencyKey) running at once across
		 * every instance. No limit by default.
		 */
		private int perKeyConcurrency;

		/**
		 * Whether the jobs of a concurrency key start in enqueue order, each after the previous one
		 * finished (a retry keeps its place); implies one job of a key at a time.
		 */
		private boolean orderedByKey;

		/**
		 * Most jobs of this queue running at once across every instance. No limit by default.
		 */
		private int maxRunning;

		/**
		 * How long one attempt may run before it is interrupted and counted as failed. A listener
		 * may set its own (@JobListener(timeout = ...)). No limit by default.
		 */
		private Duration timeout;

		/**
		 * Transactional mode: whether each job's transaction is prepared (PREPARE TRANSACTION)
		 * before the ExternalEffect its listener returns runs, and committed after it, so that the
		 * effect and the job's database work happen together, once. Runs one job per transaction
		 * and needs max_prepared_transactions above zero on the server and an InDoubtJobResolver
		 * bean.
		 */
		private boolean twoPhaseCommit;

		/**
		 * Whether the queue's workers are shared fairly across concurrency keys (tenants): claims take
		 * the keys with waiting jobs in turn, round robin, so that a key with many waiting jobs cannot
		 * starve one with few. Within a key, jobs start in the queue's order.
		 */
		private boolean fairByKey;

		/**
		 * With fair-by-key: the share of a key's turn, relative to keys not named here (which weigh
		 * 1). A key of weight 3 starts three jobs on its turn where others start one.
		 */
		private Map<String, Integer> keyWeights = new LinkedHashMap<>();

		private final Retry retry = new Retry();

		private final RateLimitProperties rateLimit = new RateLimitProperties();

		/**
		 * At most so many jobs of one concurrency key start in any window of one period, across every
		 * instance; each key has a window of its own. No limit by default.
		 */
		private final RateLimitProperties perKeyRateLimit = new RateLimitProperties();

		public QueueMode getMode() {
			return this.mode;
		}

		public void setMode(QueueMode mode) {
			this.mode = mode;
		}

		public int getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(int concurrency) {
			this.concurrency = concurrency;
		}

		public Integer getBatchSize() {
			return this.batchSize;
		}

		public void setBatchSize(Integer batchSize) {
			this.batchSize = batchSize;
		}

		public Integer getMaxBatchSize() {
			return this.maxBatchSize;
		}

		public void setMaxBatchSize(Integer maxBatchSize) {
			this.maxBatchSize = maxBatchSize;
		}

		public Duration getPollInterval() {
			return this.pollInterval;
		}

		public void setPollInterval(Duration pollInterval) {
			this.pollInterval = pollInterval;
		}

		public Duration getLeaseDuration() {
			return this.leaseDuration;
		}

		public void setLeaseDuration(Duration leaseDuration) {
			this.leaseDuration = leaseDuration;
		}

		public int getMaxAttempts() {
			return this.maxAttempts;
		}

		public void setMaxAttempts(int maxAttempts) {
			this.maxAttempts = maxAttempts;
		}

		public boolean isClaimAhead() {
			return this.claimAhead;
		}

		public void setClaimAhead(boolean claimAhead) {
			this.claimAhead = claimAhead;
		}

		public List<Class<? extends Throwable>> getNonRetryableExceptions() {
			return this.nonRetryableExceptions;
		}

		public void setNonRetryableExceptions(List<Class<? extends Throwable>> nonRetryableExceptions) {
			this.nonRetryableExceptions = nonRetryableExceptions;
		}

		public Duration getRunAtJitter() {
			return this.runAtJitter;
		}

		public void setRunAtJitter(Duration runAtJitter) {
			this.runAtJitter = runAtJitter;
		}

		public QueueAssignment getAssignment() {
			return this.assignment;
		}

		public void setAssignment(QueueAssignment assignment) {
			this.assignment = assignment;
		}

		public int getBuckets() {
			return this.buckets;
		}

		public void setBuckets(int buckets) {
			this.buckets = buckets;
		}

		public Duration getSla() {
			return this.sla;
		}

		public void setSla(Duration sla) {
			this.sla = sla;
		}

		public int getPerKeyConcurrency() {
			return this.perKeyConcurrency;
		}

		public void setPerKeyConcurrency(int perKeyConcurrency) {
			this.perKeyConcurrency = perKeyConcurrency;
		}

		public boolean isOrderedByKey() {
			return this.orderedByKey;
		}

		public void setOrderedByKey(boolean orderedByKey) {
			this.orderedByKey = orderedByKey;
		}

		public int getMaxRunning() {
			return this.maxRunning;
		}

		public void setMaxRunning(int maxRunning) {
			this.maxRunning = maxRunning;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public boolean isTwoPhaseCommit() {
			return this.twoPhaseCommit;
		}

		public boolean isFairByKey() {
			return this.fairByKey;
		}

		public void setFairByKey(boolean fairByKey) {
			this.fairByKey = fairByKey;
		}

		public Map<String, Integer> getKeyWeights() {
			return this.keyWeights;
		}

		public void setKeyWeights(Map<String, Integer> keyWeights) {
			this.keyWeights = keyWeights;
		}

		public void setTwoPhaseCommit(boolean twoPhaseCommit) {
			this.twoPhaseCommit = twoPhaseCommit;
		}

		public Retry getRetry() {
			return this.retry;
		}

		public RateLimitProperties getRateLimit() {
			return this.rateLimit;
		}

		public RateLimitProperties getPerKeyRateLimit() {
			return this.perKeyRateLimit;
		}

		QueueSettings toSettings(String name, RetryPolicy defaultRetry) {
			RetryPolicy policy = QueueSettings.retryPolicy(name, defaultRetry, this.retry.initialDelay,
					this.retry.maxDelay, this.retry.multiplier, this.retry.jitter);
			int batchSize = (this.batchSize != null) ? this.batchSize
					: this.twoPhaseCommit ? 1 : QueueSettings.DEFAULT_BATCH_SIZE;
			int maxBatchSize = (this.maxBatchSize != null) ? this.maxBatchSize
					: Math.max(batchSize, QueueSettings.DEFAULT_MAX_BATCH_SIZE);
			return new QueueSettings(name, this.mode, this.concurrency, batchSize, maxBatchSize, this.pollInterval,
					this.leaseDuration, this.maxAttempts, policy, this.nonRetryableExceptions, this.claimAhead,
					this.runAtJitter, this.assignment, this.buckets, this.sla,
					ConcurrencyLimits.of(name, this.perKeyConcurrency, this.orderedByKey, this.maxRunning), this.timeout,
					this.twoPhaseCommit, this.rateLimit.toRateLimit(name, this.pollInterval),
					this.perKeyRateLimit.toRateLimit("pgqueue.queues." + name + ".per-key-rate-limit", name,
							this.pollInterval), fairness(name));
		}

		private KeyFairness fairness(String name) {
			if (!this.fairByKey) {
				if (!this.keyWeights.isEmpty()) {
					String key = "pgqueue.queues." + name + ".key-weights";
					throw new InvalidQueueConfigurationException(key, key + " weighs keys, but the queue does not "
							+ "share its workers across keys", "Set pgqueue.queues." + name + ".fair-by-key to true, "
									+ "or remove " + key + ".");
				}
				return null;
			}
			return KeyFairness.of(name, this.keyWeights);
		}

	}

	/**
	 * Backoff between attempts. A key left out comes from the application's RetryPolicy bean, if it
	 * defines one, else from the defaults: initial-delay 1s, max-delay 1h, multiplier 2, jitter 0.2.
	 */
	public static class Retry {

		/**
		 * Delay after the first failed attempt.
		 */
		private Duration initialDelay;

		/**
		 * Longest delay between two attempts.
		 */
		private Duration maxDelay;

		/**
		 * Factor by which the delay grows after each failed attempt.
		 */
		private Double multiplier;

		/**
		 * Fraction (0 to 1) of each delay by which it is randomly spread, so that jobs that failed
		 * together do not come back together.
		 */
		private Double jitter;

		public Duration getInitialDelay() {
			return this.initialDelay;
		}

		public void setInitialDelay(Duration initialDelay) {
			this.initialDelay = initialDelay;
		}

		public Duration getMaxDelay() {
			return this.maxDelay;
		}

		public void setMaxDelay(Duration maxDelay) {
			this.maxDelay = maxDelay;
		}

		public Double getMultiplier() {
			return this.multiplier;
		}

		public void setMultiplier(Double multiplier) {
			this.multiplier = multiplier;
		}

		public Double getJitter() {
			return this.jitter;
		}

		public void setJitter(Double jitter) {
			this.jitter = jitter;
		}

	}

	/**
	 * At most so many of a queue's jobs start in any window of one period, counted across every
	 * instance by the database. A job that cannot start yet is not claimed: it stays first in line and
	 * starts as soon as the window lets it. No limit by default.
	 */
	public static class RateLimitProperties {

		/**
		 * Most job starts in any window of one period. Leave out for no limit.
		 */
		private Integer starts;

		/**
		 * Length of the window; at least 50ms and at least the queue's poll-interval.
		 */
		private Duration period = Duration.ofSeconds(1);

		public Integer getStarts() {
			return this.starts;
		}

		public void setStarts(Integer starts) {
			this.starts = starts;
		}

		public Duration getPeriod() {
			return this.period;
		}

		public void setPeriod(Duration period) {
			this.period = period;
		}

		RateLimit toRateLimit(String queue, Duration pollInterval) {
			return (this.starts != null) ? RateLimit.of(queue, this.starts, this.period, pollInterval) : null;
		}

		RateLimit toRateLimit(String key, String queue, Duration pollInterval) {
			return (this.starts != null) ? RateLimit.of(key, queue, this.starts, this.period, pollInterval) : null;
		}

	}

}
