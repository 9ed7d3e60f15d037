package dev.pgqueue.engine;

import java.util.List;

import dev.pgqueue.engine.maintenance.PollingHeartbeat;
import dev.pgqueue.engine.maintenance.StatsReader;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.schedules.JdbcJobSchedules;
import dev.pgqueue.engine.sql.JobRepository;

/**
 * How the reliability tests and their worker processes reach the parts of a {@link QueueEngine} that
 * its public API does not show, through the package-private accessors of its {@link DatabaseEngine}:
 * the same way in as queue-core's tests have, with what these tests use. It lives in the tests'
 * sources, so it never ships.
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

	public StatsReader statsReader() {
		return this.database.statsReader();
	}

	public PollingHeartbeat pollingHeartbeat() {
		return this.database.pollingHeartbeat();
	}

}
