package dev.pgqueue.reliability;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.ExternalEffect;
import dev.pgqueue.Job;
import dev.pgqueue.JobOutcome;
import dev.pgqueue.JobRequest;
import dev.pgqueue.MissedTicks;
import dev.pgqueue.QueueAssignment;
import dev.pgqueue.QueueMode;
import dev.pgqueue.Schedule;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.buckets.BucketScope;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.maintenance.PollingHeartbeat;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.ConcurrencyLimits;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.KindSettings;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.settings.ScheduleSettings;
import dev.pgqueue.engine.settings.TwoPhaseSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.observation.JobLogContext;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestTracing;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.slf4j.MDC;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

/**
 * One worker of the reliability scenarios, in a JVM of its own: the engine as an application builds
 * it ({@link QueueEngine} on a HikariCP pool the migrator prepared, with notifications: one poller,
 * the background services with the rescuer, the notification listener), polling one queue whose
 * handler records every run it finishes in the {@code ledger} table. With {@code assignment=buckets}
 * the poller is a member of the queue's bucket coordinator: the worker prints its member name and,
 * whenever they change, the buckets its claims read ({@link #BUCKET_VIEW}). With
 * {@code external-url=…} the queue uses two-phase commit: each job's effect on an
 * {@link ExternalSystem} runs between the prepare and the commit, and the background services
 * include the in-doubt resolver, which asks that system whether a dead worker's effect happened.
 * The poller asks the worker's view of the pause table before it claims; pauses reach it by
 * notification, unless {@code pause-notifications=false}, and by reading the table at most a second
 * apart.
 * With {@code tracing=true} the worker has a tracer of its own (OpenTelemetry through Micrometer
 * Tracing, as {@link TestTracing} wires it) and its handler records, in the {@code traces} table,
 * the span it runs in and what its MDC holds.
 * With {@code schedule=<name>} the worker declares a recurring job of {@link #KIND} in its queue
 * ({@code schedule-cron}, {@code schedule-missed}), saved at start as an application's
 * {@code pgqueue.schedules.<name>} is, and its ticker passes run every {@code tick-interval-ms}. With
 * {@code tick-hold-ms=N} every tick pass that fired ticks prints {@link #TICK_HOLDING} with the ticks
 * it enqueued, holds its transaction open (the schedule's row locked, its jobs and next tick written)
 * for N ms, commits and prints {@link #TICK_COMMITTED}: a test can kill the worker in between.
 *
 * <p>Arguments are {@code key=value} pairs, see {@link Options}; user name and password come from
 * the same environment variables as the tests'. The worker runs until it gets SIGTERM (a graceful
 * stop, as a container platform sends it), SIGKILL, or the test JVM that started it is gone.
 */
public final class WorkerProcess {

	/** The queue every worker polls. */
	public static final String QUEUE = "reliability";

	/** The kind of every job; its handler writes the ledger. */
	public static final String KIND = "ledger.write";

	/** Printed once the poller runs. */
	public static final String READY = "worker ready";

	/** Starts the summary printed at a graceful stop. */
	public static final String SUMMARY = "worker summary:";

	/** Precedes the worker's member name in its queue's bucket coordinator (bucket assignment only). */
	public static final String BUCKET_MEMBER = "bucket member: ";

	/**
	 * Starts a line the worker prints whenever the buckets its claims read change, or its leadership
	 * does (bucket assignment only): {@code bucket view at <epoch millis>: generation <led or 0>,
	 * buckets [<numbers>]}.
	 */
	public static final String BUCKET_VIEW = "bucket view at ";

	/**
	 * Starts the line a worker with {@code tick-hold-ms} prints when a tick pass holds its transaction
	 * open before the commit: {@code tick pass holding: <ticks in epoch millis, comma-separated>}.
	 */
	public static final String TICK_HOLDING = "tick pass holding: ";

	/** Starts the line printed once a held tick pass committed: {@code tick pass committed: <ticks>}. */
	public static final String TICK_COMMITTED = "tick pass committed: ";

	/**
	 * One row per attempt that finished its work; a second run of the same attempt counts in
	 * {@code runs} instead of failing, so that duplicates are counted rather than hidden by a
	 * rollback.
	 */
	public static final String LEDGER_DDL = """
			CREATE TABLE ledger (
			    job_id uuid NOT NULL,
			    attempt int NOT NULL,
			    worker_pid bigint NOT NULL,
			    runs int NOT NULL DEFAULT 1,
			    written_at timestamptz NOT NULL DEFAULT clock_timestamp(),
			    PRIMARY KEY (job_id, attempt))""";

	/**
	 * One row per attempt of a job with a concurrency key that finished its work: when, on this
	 * machine's clock (shared by every worker), the listener started and ended. In transactional
	 * mode it commits with the job, so only attempts whose outcome stands are kept.
	 */
	public static final String INTERVALS_DDL = """
			CREATE TABLE intervals (
			    job_id uuid NOT NULL,
			    attempt int NOT NULL,
			    key text NOT NULL,
			    seq int NOT NULL,
			    worker_pid bigint NOT NULL,
			    started_at timestamptz NOT NULL,
			    ended_at timestamptz NOT NULL)""";

	/**
	 * One row per run of a job by a worker with {@code tracing=true}: the span the handler ran in (its
	 * trace, its own id and its parent's) and the trace id and job id in the handler's MDC.
	 */
	public static final String TRACES_DDL = """
			CREATE TABLE traces (
			    job_id uuid NOT NULL,
			    attempt int NOT NULL,
			    worker_pid bigint NOT NULL,
			    trace_id text,
			    span_id text,
			    parent_span_id text,
			    mdc_trace_id text,
			    mdc_job_id text)""";

	private static final String TRACE_INSERT = """
			INSERT INTO traces (job_id, attempt, worker_pid, trace_id, span_id, parent_span_id, mdc_trace_id, mdc_job_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)""";

	private static final String INTERVAL_INSERT = """
			INSERT INTO intervals (job_id, attempt, key, seq, worker_pid, started_at, ended_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)""";

	private static final String LEDGER_INSERT = """
			INSERT INTO ledger (job_id, attempt, worker_pid) VALUES (?, ?, ?)
			ON CONFLICT (job_id, attempt) DO UPDATE SET runs = ledger.runs + 1""";

	private static final long PID = ProcessHandle.current().pid();

	private static final JsonMapper PAYLOADS = JsonMapper.builder().build();

	private WorkerProcess() {
	}

	public static void main(String[] args) throws Exception {
		Options options = Options.parse(args);
		HikariDataSource pool = pool(options);
		SchemaName schema = SchemaName.of(options.schema);
		new QueueMigrator(pool, schema, true)
			.withBucketQueues((options.assignment == QueueAssignment.BUCKETS) ? List.of(QUEUE) : List.of())
			.afterPropertiesSet();

		JdbcTemplate jdbc = new JdbcTemplate(pool);
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		ExternalSystem external = (options.externalUrl != null)
				? new ExternalSystem(externalPool(options), options.schema) : null;
		handlers.register((external != null) ? new EffectHandler(jdbc, options.work, external)
				: new LedgerHandler(jdbc, options.work, options.tracing));
		QueueObservations observations = options.tracing
				? new QueueObservations(new TestTracing().observationRegistry()) : QueueObservations.NONE;
		Counters counters = new Counters();
		QueueSettings queue = QueueSettings.defaults(QUEUE)
			.withMode(options.mode)
			.withConcurrency(options.concurrency)
			.withBatchSize(options.batchSize)
			.withMaxBatchSize(Math.max(options.batchSize, options.maxBatchSize))
			.withPollInterval(Duration.ofMillis(200))
			.withLeaseDuration(options.lease)
			.withAssignment(options.assignment)
			.withBuckets(options.buckets)
			.withLimits(ConcurrencyLimits.of(QUEUE, options.perKey, options.ordered, options.maxRunning))
			.withRateLimit((options.rateStarts > 0)
					? RateLimit.of(QUEUE, options.rateStarts, options.ratePeriod, Duration.ofMillis(200)) : null)
			.withPerKeyRateLimit((options.perKeyRateStarts > 0)
					? new RateLimit(options.perKeyRateStarts, options.ratePeriod) : null)
			.withTwoPhaseCommit(external != null);
		if (options.kindMaxRunning > 0 || options.rateWeight > 1) {
			handlers.override(new KindSettings(KIND, (options.kindMaxRunning > 0) ? options.kindMaxRunning : null, null,
					null, (options.rateWeight > 1) ? options.rateWeight : null));
		}
		List<Schedule> declared = (options.schedule != null)
				? List.of(schedule(options.schedule, options.scheduleCron, options.scheduleMissed)) : List.of();
		MaintenanceSettings defaults = MaintenanceSettings.DEFAULT;
		EngineSettings settings = EngineSettings.defaults(schema)
			.withWorkers(new WorkerSettings(options.shutdownTimeout, false, false))
			.withMaintenance(new MaintenanceSettings(Duration.ofMillis(500), options.rescueInterval,
					defaults.cleanupInterval(), defaults.statsInterval(), defaults.completedRetention(),
					defaults.failedRetention(), defaults.cleanupBatchSize(), defaults.deadRowsWarning()))
			.withTwoPhase(new TwoPhaseSettings(Duration.ofMillis(500), options.inDoubtAfter, Duration.ofMinutes(10)))
			.withHeartbeatInterval(options.heartbeat);
		QueueEngine engine = QueueEngine.builder(pool)
			.settings(settings)
			.queues(new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE), List.of(queue)))
			.handlers(handlers)
			.transactionManager(options.tickHold.isZero() ? new DataSourceTransactionManager(pool)
					: new TickHoldingTransactionManager(pool, jdbc, schema.qualify("pgqueue_jobs"), options.tickHold))
			.schedules(new ScheduleSettings(declared, options.tickInterval, options.scheduleGrace))
			.metrics(counters)
			.observations(observations)
			.inDoubtJobResolver((external != null) ? external::effectHappened : null)
			.pauseNotifications(options.pauseNotifications)
			.pollingHeartbeat(options.pollingHeartbeat)
			.build();

		// Stops the poller, then the services, then the listener, as the Spring lifecycle does.
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			engine.close();
			pool.close();
			System.out.println(SUMMARY + " " + counters.summary());
		}, "worker-shutdown"));
		engine.start();
		JobPoller poller = EngineInternals.of(engine).pollers().get(0);
		if (poller.scope() instanceof BucketScope buckets) {
			System.out.println(BUCKET_MEMBER + buckets.coordinator().member());
			reportBuckets(buckets);
		}
		System.out.println(READY + ": " + options.name + " pid " + PID + ", " + queue);

		// Stop gracefully when the test JVM that started this worker is gone.
		ProcessHandle.current().parent().ifPresent((parent) -> parent.onExit().thenRun(() -> System.exit(0)));
		new CountDownLatch(1).await();
	}

	/**
	 * The recurring job a worker declares with {@code schedule=<name>}: a {@link #KIND} job in
	 * {@link #QUEUE} on every tick, its payload naming the schedule. A test that saves the same
	 * schedule with {@code saveDeclared} first makes every worker's declaration a no-op.
	 */
	public static Schedule schedule(String name, String cron, MissedTicks missed) {
		return Schedule.of(name, cron, KIND).queue(QUEUE).payload(Map.of("schedule", name)).missed(missed);
	}

	/**
	 * Prints a {@link #BUCKET_VIEW} line whenever what the claims read changes (looking every 20 ms):
	 * the tests learn from it when this worker actually claims from the buckets the coordinator's
	 * tables give it (or stopped claiming from any, once its assignment lapsed).
	 */
	private static void reportBuckets(BucketScope scope) {
		ScheduledExecutorService reporter = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "bucket-reporter");
			thread.setDaemon(true);
			return thread;
		});
		AtomicReference<String> last = new AtomicReference<>();
		reporter.scheduleWithFixedDelay(() -> {
			String view = "generation " + scope.coordinator().leadingGeneration() + ", buckets "
					+ Arrays.toString(scope.buckets());
			if (!view.equals(last.getAndSet(view))) {
				System.out.println(BUCKET_VIEW + System.currentTimeMillis() + ": " + view);
			}
		}, 0, 20, TimeUnit.MILLISECONDS);
	}

	private static HikariDataSource pool(Options options) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(options.url);
		String username = System.getenv(TestDatabase.USERNAME_VARIABLE);
		String password = System.getenv(TestDatabase.PASSWORD_VARIABLE);
		if (username != null && !username.isBlank()) {
			config.setUsername(username);
		}
		if (password != null && !password.isBlank()) {
			config.setPassword(password);
		}
		config.setSchema(options.schema);
		config.setMaximumPoolSize(options.poolSize);
		config.setMinimumIdle(0);
		config.setConnectionTimeout(options.connectionTimeout.toMillis());
		config.setPoolName("worker-" + options.name);
		// Lets the tests find this worker's backends in pg_stat_activity.
		config.addDataSourceProperty("ApplicationName", applicationName(options.schema, options.name));
		return new HikariDataSource(config);
	}

	/** A small pool on the external system's database, in auto-commit mode as a client of another system is. */
	private static HikariDataSource externalPool(Options options) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(options.externalUrl);
		String username = System.getenv(TestDatabase.USERNAME_VARIABLE);
		String password = System.getenv(TestDatabase.PASSWORD_VARIABLE);
		if (username != null && !username.isBlank()) {
			config.setUsername(username);
		}
		if (password != null && !password.isBlank()) {
			config.setPassword(password);
		}
		config.setMaximumPoolSize(options.concurrency + 1);
		config.setMinimumIdle(0);
		config.setPoolName("external-" + options.name);
		return new HikariDataSource(config);
	}

	/** The application name of a worker's connections, as the tests look for them. */
	public static String applicationName(String schema, String worker) {
		return schema + "/" + worker;
	}

	/**
	 * Simulates some work, then records the attempt (and, when traced, the span it ran in), in the
	 * job's transaction when there is one.
	 */
	private record LedgerHandler(JdbcTemplate jdbc, Duration work, boolean traced) implements JobHandler {

		@Override
		public String kind() {
			return KIND;
		}

		@Override
		public String queue() {
			return QUEUE;
		}

		@Override
		public void handle(Job job) throws InterruptedException {
			Instant started = Instant.now();
			JsonNode payload = PAYLOADS.readTree(job.payload());
			long millis = this.work.toMillis();
			if (payload.has("sleep-ms")) {
				// A job that asks for a work of its own: long ones are what scenario 27 cancels.
				Thread.sleep(payload.get("sleep-ms").asLong());
			}
			else if (millis > 0) {
				Thread.sleep(ThreadLocalRandom.current().nextLong(millis / 2, millis + millis / 2 + 1));
			}
			this.jdbc.update(LEDGER_INSERT, job.id(), job.attempt(), PID);
			if (this.traced) {
				SpanData span = TestTracing.currentSpan();
				this.jdbc.update(TRACE_INSERT, job.id(), job.attempt(), PID, (span != null) ? span.getTraceId() : null,
						(span != null) ? span.getSpanId() : null, (span != null) ? span.getParentSpanId() : null,
						MDC.get("traceId"), MDC.get(JobLogContext.JOB_ID));
			}
			if (payload.has("key")) {
				this.jdbc.update(INTERVAL_INSERT, job.id(), job.attempt(), payload.get("key").asString(),
						payload.get("seq").asInt(), PID, Timestamp.from(started), Timestamp.from(Instant.now()));
			}
		}

		@Override
		public String description() {
			return "ledger handler";
		}

	}

	/**
	 * The handler of a queue with two-phase commit: writes the ledger in the job's transaction, like
	 * {@link LedgerHandler}, and returns the effect on the {@link ExternalSystem}, which runs once the
	 * transaction is prepared. A job enqueued with a trap stops its worker once, for the test to kill
	 * it: before the effect or after it, printing {@link ExternalSystem#TRAPPED} with the job's id.
	 */
	private record EffectHandler(JdbcTemplate jdbc, Duration work, ExternalSystem external) implements JobHandler {

		@Override
		public String kind() {
			return KIND;
		}

		@Override
		public String queue() {
			return QUEUE;
		}

		@Override
		public void handle(Job job) throws InterruptedException {
			handleForEffect(job);
		}

		@Override
		public ExternalEffect handleForEffect(Job job) throws InterruptedException {
			new LedgerHandler(this.jdbc, this.work, false).handle(job);
			return () -> this.external.apply(job);
		}

		@Override
		public boolean hasExternalEffect() {
			return true;
		}

		@Override
		public String description() {
			return "ledger handler with an external effect";
		}

	}

	/**
	 * The worker's transaction manager with a trap in the ticker's passes: when a pass's transaction
	 * is about to commit and has enqueued ticks' jobs (it locked a due schedule, enqueued its ticks and
	 * moved it on), prints {@link #TICK_HOLDING} with the run times of the jobs it inserted, waits,
	 * commits and prints {@link #TICK_COMMITTED}. Every other transaction (the pollers' batches, and
	 * passes that fired nothing) commits as usual.
	 */
	private static final class TickHoldingTransactionManager extends DataSourceTransactionManager {

		/** The ticker's thread (see {@code EngineThreads}). */
		private static final String TICKER_THREAD = "pgqueue-schedule-ticker";

		private final JdbcTemplate jdbc;

		private final String inserted;

		private final Duration hold;

		private final ThreadLocal<String> held = new ThreadLocal<>();

		TickHoldingTransactionManager(HikariDataSource pool, JdbcTemplate jdbc, String jobs, Duration hold) {
			super(pool);
			this.jdbc = jdbc;
			// The run times of the jobs a transaction inserted, in epoch milliseconds, by its id.
			this.inserted = """
					SELECT string_agg((extract(epoch FROM run_at) * 1000)::bigint::text, ',' ORDER BY run_at)
					FROM %s WHERE xmin = ?::xid8::xid""".formatted(jobs);
			this.hold = hold;
		}

		@Override
		protected void prepareForCommit(DefaultTransactionStatus status) {
			super.prepareForCommit(status);
			if (!status.isNewTransaction() || !Thread.currentThread().getName().equals(TICKER_THREAD)) {
				return;
			}
			// The transaction's connection is still bound to this thread: the queries run in it. A pass
			// that locked nothing has no transaction id (and must not get one from these queries).
			String xid = this.jdbc.queryForObject("SELECT pg_current_xact_id_if_assigned()::text", String.class);
			String ticks = (xid != null) ? this.jdbc.queryForObject(this.inserted, String.class, xid) : null;
			if (ticks == null) {
				return;
			}
			System.out.println(TICK_HOLDING + ticks);
			this.held.set(ticks);
			try {
				Thread.sleep(this.hold.toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		@Override
		protected void doCommit(DefaultTransactionStatus status) {
			String ticks = this.held.get();
			this.held.remove();
			super.doCommit(status);
			if (ticks != null) {
				System.out.println(TICK_COMMITTED + ticks);
			}
		}

	}

	/** What the worker did, printed at a graceful stop. */
	private static final class Counters implements QueueMetrics {

		private final Map<JobOutcome, LongAdder> outcomes = new HashMap<>();

		private final LongAdder claims = new LongAdder();

		private final LongAdder rescued = new LongAdder();

		Counters() {
			for (JobOutcome outcome : JobOutcome.values()) {
				this.outcomes.put(outcome, new LongAdder());
			}
		}

		@Override
		public void pollCycle(String queue, long nanos, int claimed) {
			this.claims.increment();
		}

		@Override
		public void jobFinished(String queue, String kind, JobOutcome outcome, long nanos) {
			this.outcomes.get(outcome).increment();
		}

		@Override
		public void jobRescued(String queue, String kind) {
			this.rescued.increment();
		}

		String summary() {
			StringBuilder summary = new StringBuilder("pid=" + PID + " claims=" + this.claims.sum());
			this.outcomes.forEach((outcome, count) -> summary.append(' ')
				.append(outcome.name().toLowerCase(Locale.ROOT))
				.append('=')
				.append(count.sum()));
			return summary.append(" rescued=").append(this.rescued.sum()).toString();
		}

	}

	/** The worker's settings, from {@code key=value} arguments. */
	static final class Options {

		String url;

		String schema;

		String name = "worker";

		QueueMode mode = QueueMode.TRANSACTIONAL;

		int concurrency = 2;

		int batchSize = 20;

		/** Most jobs a transactional batch grows to; the batch size (a fixed batch) unless a scenario asks. */
		int maxBatchSize = 0;

		int poolSize = 8;

		Duration work = Duration.ofMillis(2);

		Duration lease = Duration.ofSeconds(5);

		Duration rescueInterval = Duration.ofSeconds(1);

		Duration shutdownTimeout = Duration.ofSeconds(10);

		Duration connectionTimeout = Duration.ofSeconds(5);

		QueueAssignment assignment = QueueAssignment.SHARED;

		int buckets = 64;

		Duration heartbeat = EngineSettings.DEFAULT_HEARTBEAT_INTERVAL;

		int perKey;

		boolean ordered;

		int maxRunning;

		int kindMaxRunning;

		/** The queue's rate limit: most starts per {@link #ratePeriod}; 0 for none. */
		int rateStarts;

		Duration ratePeriod = Duration.ofSeconds(1);

		/** Most starts of one concurrency key per {@link #ratePeriod}; 0 for no limit per key. */
		int perKeyRateStarts;

		/** Units of the rate limits one job of the kind uses. */
		int rateWeight = 1;

		/** The external system's database; when set, the queue uses two-phase commit. */
		String externalUrl;

		Duration inDoubtAfter = Duration.ofSeconds(1);

		/** Whether pauses reach the worker by notification too, or only by its reading of the pause table. */
		boolean pauseNotifications = true;

		/** Whether the worker traces its jobs' processing and records what its handler saw. */
		boolean tracing;

		/** How often the worker records that it polls its queue, and which kind it handles there. */
		Duration pollingHeartbeat = PollingHeartbeat.INTERVAL;

		/** The name of the recurring job the worker declares, if any (see {@link #schedule}). */
		String schedule;

		String scheduleCron = "* * * * * *";

		MissedTicks scheduleMissed = MissedTicks.ALL;

		/** Time between two passes of the worker's schedule ticker. */
		Duration tickInterval = ScheduleSettings.DEFAULT.tickInterval();

		Duration scheduleGrace = ScheduleSettings.DEFAULT.grace();

		/** How long a tick pass that fired holds its transaction open before the commit; zero for none. */
		Duration tickHold = Duration.ZERO;

		static Options parse(String[] args) {
			Options options = new Options();
			for (String arg : args) {
				int eq = arg.indexOf('=');
				if (eq < 1) {
					throw new IllegalArgumentException("Expected key=value, got '" + arg + "'");
				}
				String value = arg.substring(eq + 1);
				switch (arg.substring(0, eq)) {
					case "url" -> options.url = value;
					case "schema" -> options.schema = value;
					case "name" -> options.name = value;
					case "mode" -> options.mode = QueueMode.valueOf(value.toUpperCase(Locale.ROOT));
					case "concurrency" -> options.concurrency = Integer.parseInt(value);
					case "batch-size" -> options.batchSize = Integer.parseInt(value);
					case "max-batch-size" -> options.maxBatchSize = Integer.parseInt(value);
					case "pool-size" -> options.poolSize = Integer.parseInt(value);
					case "work-ms" -> options.work = Duration.ofMillis(Long.parseLong(value));
					case "lease-ms" -> options.lease = Duration.ofMillis(Long.parseLong(value));
					case "rescue-ms" -> options.rescueInterval = Duration.ofMillis(Long.parseLong(value));
					case "shutdown-ms" -> options.shutdownTimeout = Duration.ofMillis(Long.parseLong(value));
					case "connection-timeout-ms" -> options.connectionTimeout = Duration.ofMillis(Long.parseLong(value));
					case "assignment" -> options.assignment = QueueAssignment.valueOf(value.toUpperCase(Locale.ROOT));
					case "buckets" -> options.buckets = Integer.parseInt(value);
					case "heartbeat-ms" -> options.heartbeat = Duration.ofMillis(Long.parseLong(value));
					case "per-key" -> options.perKey = Integer.parseInt(value);
					case "ordered" -> options.ordered = Boolean.parseBoolean(value);
					case "max-running" -> options.maxRunning = Integer.parseInt(value);
					case "kind-max-running" -> options.kindMaxRunning = Integer.parseInt(value);
					case "rate-starts" -> options.rateStarts = Integer.parseInt(value);
					case "rate-period-ms" -> options.ratePeriod = Duration.ofMillis(Long.parseLong(value));
					case "per-key-rate-starts" -> options.perKeyRateStarts = Integer.parseInt(value);
					case "rate-weight" -> options.rateWeight = Integer.parseInt(value);
					case "external-url" -> options.externalUrl = value;
					case "in-doubt-ms" -> options.inDoubtAfter = Duration.ofMillis(Long.parseLong(value));
					case "pause-notifications" -> options.pauseNotifications = Boolean.parseBoolean(value);
					case "tracing" -> options.tracing = Boolean.parseBoolean(value);
					case "polling-heartbeat-ms" -> options.pollingHeartbeat = Duration.ofMillis(Long.parseLong(value));
					case "schedule" -> options.schedule = value;
					case "schedule-cron" -> options.scheduleCron = value;
					case "schedule-missed" -> options.scheduleMissed = MissedTicks.valueOf(value.toUpperCase(Locale.ROOT));
					case "tick-interval-ms" -> options.tickInterval = Duration.ofMillis(Long.parseLong(value));
					case "schedule-grace-ms" -> options.scheduleGrace = Duration.ofMillis(Long.parseLong(value));
					case "tick-hold-ms" -> options.tickHold = Duration.ofMillis(Long.parseLong(value));
					default -> throw new IllegalArgumentException("Unknown worker option '" + arg + "'");
				}
			}
			if (options.url == null || options.schema == null) {
				throw new IllegalArgumentException("url= and schema= are required");
			}
			return options;
		}

	}

}
