package dev.pgqueue.engine;

import java.util.List;

import dev.pgqueue.JobClient;
import dev.pgqueue.engine.maintenance.Cleaner;
import dev.pgqueue.engine.maintenance.HistoryFlusher;
import dev.pgqueue.engine.maintenance.PollingHeartbeat;
import dev.pgqueue.engine.maintenance.Promoter;
import dev.pgqueue.engine.maintenance.Rescuer;
import dev.pgqueue.engine.maintenance.StatsReader;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.run.QueueHistoryRecorder;
import dev.pgqueue.engine.schedules.JdbcJobSchedules;
import dev.pgqueue.engine.schedules.ScheduleTicker;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.HistorySettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.twophase.InDoubtResolver;
import org.jspecify.annotations.Nullable;

/**
 * How the tests reach the parts of a {@link QueueEngine} that its public API does not show: one
 * database's services, runner and pollers, through the package-private accessors of its
 * {@link DatabaseEngine}. It lives in the tests' sources, so it never ships; the starter's tests and
 * the reliability suite (its worker processes too) use this same class through queue-core's
 * test jar, which holds it alone.
 */
public final class EngineInternals {

	private final DatabaseEngine database;

	private EngineInternals(DatabaseEngine database) {
		this.database = database;
	}

	/** The parts of the engine's one database; over shards, those of the first shard. */
	public static EngineInternals of(QueueEngine engine) {
		return new EngineInternals(engine.database());
	}

	/** The parts of one shard of the engine. */
	public static EngineInternals of(QueueEngine engine, String shard) {
		return new EngineInternals(engine.database(shard));
	}

	public EngineSettings settings() {
		return this.database.settings();
	}

	public JobRepository jobs() {
		return this.database.jobs();
	}

	/** The pollers the engine started, one per queue with listeners. */
	public List<JobPoller> pollers() {
		return this.database.pollers();
	}

	/**
	 * The builder of an engine that shares its claim signals and its pause reader with others, as the
	 * engines of one application's instances do in a test.
	 */
	public static QueueEngineBuilder sharing(QueueEngineBuilder builder, @Nullable QueueSignals signals,
			@Nullable QueuePauses pauses) {
		return builder.signals(signals).pauses(pauses);
	}

	/** The builder of an engine whose statements of the jobs table are these (a test's, that fail some). */
	public static QueueEngineBuilder withJobs(QueueEngineBuilder builder, JobRepository jobs) {
		return builder.jobs(jobs);
	}

	/** This database's own client, which enqueues into it alone. */
	public JobClient client() {
		return this.database.client();
	}

	public JobRunner runner() {
		return this.database.runner();
	}

	/**
	 * A new, unstarted poller of the queue, as another instance would run it: it asks {@code pauses}
	 * whether its queue is paused, or never when {@code null}.
	 */
	public JobPoller newPoller(String queue, @Nullable QueuePauses pauses) {
		return this.database.newPoller(queue, pauses);
	}

	/** The services the database's part starts, in their start order. */
	public List<EngineService> services() {
		return this.database.services();
	}

	public Promoter promoter() {
		return this.database.promoter();
	}

	public Rescuer rescuer() {
		return this.database.rescuer();
	}

	public Cleaner cleaner() {
		return this.database.cleaner();
	}

	public StatsReader statsReader() {
		return this.database.statsReader();
	}

	public PollingHeartbeat pollingHeartbeat() {
		return this.database.pollingHeartbeat();
	}

	public JdbcJobSchedules schedules() {
		return this.database.schedules();
	}

	public ScheduleTicker scheduleTicker() {
		return this.database.scheduleTicker();
	}

	public HistorySettings historySettings() {
		return this.database.historySettings();
	}

	public QueueHistoryRecorder historyRecorder() {
		return this.database.historyRecorder();
	}

	public HistoryFlusher historyFlusher() {
		return this.database.historyFlusher();
	}

	public @Nullable InDoubtResolver inDoubtResolver() {
		return this.database.inDoubtResolver();
	}

}
