package dev.pgqueue.engine;

import java.util.List;

import dev.pgqueue.engine.maintenance.HistoryFlusher;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.run.QueueHistoryRecorder;
import dev.pgqueue.engine.schedules.JdbcJobSchedules;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.HistorySettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.twophase.InDoubtResolver;
import org.jspecify.annotations.Nullable;

/**
 * How the starter's tests reach the parts of the {@link QueueEngine} the auto-configuration built
 * that its public API does not show, through the package-private accessors of its
 * {@link DatabaseEngine}: the same way in as queue-core's tests have, with what these tests use. It
 * lives in the tests' sources, so it never ships.
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

	public JdbcJobSchedules schedules() {
		return this.database.schedules();
	}

	/** The pollers the engine started, one per queue with listeners. */
	public List<JobPoller> pollers() {
		return this.database.pollers();
	}

	/** The services the database's part starts, in their start order. */
	public List<EngineService> services() {
		return this.database.services();
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
