package dev.pgqueue.engine.status;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.pgqueue.metrics.QueueStats;

/**
 * What the engine knows of itself at one instant, read from memory: no statement runs to take it.
 * @param takenAt when it was taken
 * @param databases each database's part, in declared order: one, or one per shard
 */
public record EngineStatus(Instant takenAt, List<DatabaseStatus> databases) {

	public EngineStatus {
		databases = List.copyOf(databases);
	}

	/** The part of the engine's one database; over shards, the first shard's. */
	public DatabaseStatus database() {
		return this.databases.get(0);
	}

	/** Whether the engine runs over shards, each of which its databases stand for. */
	public boolean sharded() {
		return this.databases.get(0).shard() != null;
	}

	/** Whether the engine runs jobs here, or only enqueues and administers them. */
	public boolean processing() {
		return this.databases.get(0).processing();
	}

	/**
	 * The last stats of every queue read on any database, added up over the shards: jobs summed, the
	 * oldest available job's age the largest.
	 */
	public Map<String, QueueStats> stats() {
		Map<String, QueueStats> merged = new TreeMap<>();
		for (DatabaseStatus database : this.databases) {
			database.queues().values().stream().filter((queue) -> queue.stats() != null).forEach((queue) -> merged
				.merge(queue.name(), queue.stats(), (a, b) -> new QueueStats(queue.name(), a.available() + b.available(),
						a.scheduled() + b.scheduled(), a.running() + b.running(),
						(a.oldestAvailableAge().compareTo(b.oldestAvailableAge()) >= 0) ? a.oldestAvailableAge()
								: b.oldestAvailableAge())));
		}
		return merged;
	}

}
