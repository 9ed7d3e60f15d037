package dev.pgqueue.benchmark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import dev.pgqueue.ExternalEffect;
import dev.pgqueue.Job;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.JdbcJobClient;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.JobPollerFactory;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.NotificationListener;
import dev.pgqueue.engine.NotificationThrottle;
import dev.pgqueue.engine.poll.PollerWakeUps;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.CoordinationRepository;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.sql.JobStatements;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.SchemaName;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The engine wired by hand, as the starter wires it but without Spring Boot: one queue with one
 * handler, on the pool a run gives it. Close it to stop its pollers.
 */
final class PgqueueEngine implements AutoCloseable {

	private static final ExternalEffect NO_EFFECT = () -> {
	};

	private final JobHandlerRegistry handlers = new JobHandlerRegistry();

	private final JsonMapper jsonMapper = JsonMapper.builder().build();

	private final DataSource dataSource;

	private final SchemaName schema;

	private final QueueSettings settings;

	private final WorkerSettings workerSettings;

	private final QueueMetrics metrics;

	private final List<JobPoller> pollers = new ArrayList<>();

	private boolean claimFloors = true;

	private Duration heartbeatInterval = JobPollerFactory.DEFAULT_HEARTBEAT_INTERVAL;

	private final List<NotificationListener> listeners = new ArrayList<>();

	private final List<NotificationThrottle> throttles = new ArrayList<>();

	/**
	 * @param dataSource the pool every statement of the engine uses
	 * @param schema where the jobs table is
	 * @param settings the queue's settings; its name is the queue jobs are enqueued to
	 * @param deleteCompleted whether completed jobs are deleted rather than kept
	 * @param metrics what the engine reports to (poll-cycle timings)
	 * @param handler the body run for every job of kind {@value BenchSchema#KIND}
	 */
	PgqueueEngine(DataSource dataSource, SchemaName schema, QueueSettings settings, boolean deleteCompleted,
			QueueMetrics metrics, Handler handler) {
		this.dataSource = dataSource;
		this.schema = schema;
		this.settings = settings;
		this.workerSettings = new WorkerSettings(Duration.ofSeconds(10), false, deleteCompleted);
		this.metrics = metrics;
		this.handlers.register(new JobHandler() {
			@Override
			public String kind() {
				return BenchSchema.KIND;
			}

			@Override
			public String queue() {
				return settings.name();
			}

			@Override
			public void handle(Job job) throws Throwable {
				handler.handle(job);
			}

			@Override
			public ExternalEffect handleForEffect(Job job) throws Throwable {
				handler.handle(job);
				// On a queue with two-phase commit every job has an (empty) external step, so that each
				// is prepared and committed in two phases.
				return settings.twoPhaseCommit() ? NO_EFFECT : null;
			}

			@Override
			public boolean hasExternalEffect() {
				return settings.twoPhaseCommit();
			}

			@Override
			public String description() {
				return "benchmark handler";
			}
		});
	}

	/** Settings for the benchmark queue with everything else at its default. */
	static QueueSettings settings(QueueMode mode, int concurrency, int batchSize, Duration pollInterval) {
		return QueueSettings.defaults(BenchSchema.QUEUE)
			.withMode(mode)
			.withConcurrency(concurrency)
			.withBatchSize(batchSize)
			.withPollInterval(pollInterval);
	}

	/**
	 * A client that enqueues through {@code pool} (producers may use a pool of their own), notifying
	 * the queue at most every {@link NotificationThrottle#DEFAULT_INTERVAL} as the starter does by
	 * default.
	 */
	JobClient client(DataSource pool) {
		return client(pool, NotificationThrottle.DEFAULT_INTERVAL);
	}

	/**
	 * A client that enqueues through {@code pool}, notifying each queue at most once per interval
	 * (zero: on every enqueue), or never when the interval is {@code null}.
	 */
	JobClient client(DataSource pool, Duration notifyInterval) {
		JobRepository repository = new JobRepository(new JdbcTemplate(pool), this.schema, notifyInterval != null);
		return new JdbcJobClient(repository, this.jsonMapper, catalog(), this.handlers,
				JdbcJobClient.DEFAULT_MAX_PAYLOAD_BYTES, null, throttle(repository, notifyInterval));
	}

	/**
	 * A client as the starter wires it in an application that also runs the queue: notifying on
	 * commit, and waking the given pollers in-process after commit.
	 */
	JobClient localClient(DataSource pool, JobPoller... pollers) {
		PollerWakeUps wakeUps = new PollerWakeUps();
		for (JobPoller poller : pollers) {
			wakeUps.register(poller);
		}
		JobRepository repository = new JobRepository(new JdbcTemplate(pool), this.schema, true);
		return new JdbcJobClient(repository, this.jsonMapper, catalog(), this.handlers,
				JdbcJobClient.DEFAULT_MAX_PAYLOAD_BYTES, wakeUps,
				throttle(repository, NotificationThrottle.DEFAULT_INTERVAL));
	}

	private NotificationThrottle throttle(JobRepository repository, Duration interval) {
		if (interval == null) {
			return null;
		}
		NotificationThrottle throttle = new NotificationThrottle(repository, interval);
		this.throttles.add(throttle);
		return throttle;
	}

	/**
	 * Starts listening for notifications on a connection of {@code listenerPool} and wakes the given
	 * pollers with them, as the starter does by default. Stopped on close.
	 */
	void listen(DataSource listenerPool, JobPoller... pollers) {
		NotificationListener listener = new NotificationListener(listenerPool, new JobStatements(this.schema).channel);
		for (JobPoller poller : pollers) {
			listener.register(poller);
		}
		listener.start();
		this.listeners.add(listener);
	}

	/**
	 * Pollers created from now on read the claim index from its start on every claim, as pgqueue did
	 * before claim floors: the baseline of the soak workload.
	 */
	PgqueueEngine withoutClaimFloors() {
		this.claimFloors = false;
		return this;
	}

	/**
	 * Members of a bucket coordinator (pollers of a queue with bucket assignment) created from now on
	 * heartbeat at this interval.
	 */
	PgqueueEngine withHeartbeatInterval(Duration interval) {
		this.heartbeatInterval = interval;
		return this;
	}

	/** A new, unstarted poller of the queue. */
	JobPoller poller() {
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		JobRepository repository = repository(this.dataSource);
		JobPoller poller = new JobPollerFactory(catalog(), repository, new JobRunner(this.handlers, this.metrics),
				transactions, this.metrics, this.workerSettings, null, this.claimFloors,
				new CoordinationRepository(repository.jdbcTemplate(), repository.schema()), this.heartbeatInterval)
			.create(this.settings.name(), this.handlers.kindsOf(this.settings.name()));
		this.pollers.add(poller);
		return poller;
	}

	private JobRepository repository(DataSource pool) {
		return new JobRepository(new JdbcTemplate(pool), this.schema);
	}

	private QueueCatalog catalog() {
		return new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE), List.of(this.settings));
	}

	@Override
	public void close() {
		this.pollers.forEach((poller) -> {
			if (poller.isRunning()) {
				poller.stop();
			}
		});
		this.pollers.clear();
		this.throttles.forEach(NotificationThrottle::close);
		this.throttles.clear();
		this.listeners.forEach(NotificationListener::stop);
		this.listeners.clear();
	}

	/** What a benchmark job does. */
	@FunctionalInterface
	interface Handler {

		void handle(Job job) throws Throwable;

	}

}
