package dev.pgqueue.engine;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.shards.ShardWatch;
import dev.pgqueue.schema.QueueMigrator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shards that did not answer when the engine was built, which it started without
 * ({@link QueueEngineBuilder#startWhileDown}): each interval, each is migrated, and once it is, its
 * part of the engine starts and the watch lets it take jobs again. A shard that still does not answer,
 * or fails to start, is tried again next time.
 */
final class ShardLatecomers extends PeriodicService {

	private static final Logger logger = LoggerFactory.getLogger(ShardLatecomers.class);

	/** Time between two tries to migrate a shard that did not answer at start-up. */
	static final Duration INTERVAL = Duration.ofSeconds(1);

	private final Map<String, DatabaseEngine> databases;

	private final Map<String, QueueMigrator> migrators;

	private final ShardWatch watch;

	/** The shards still away, with why they were not migrated last time. */
	private final Map<String, RuntimeException> away = new ConcurrentHashMap<>();

	ShardLatecomers(Map<String, DatabaseEngine> databases, Map<String, QueueMigrator> migrators,
			Map<String, RuntimeException> away, ShardWatch watch) {
		super("shard latecomers", INTERVAL);
		this.databases = databases;
		this.migrators = migrators;
		this.watch = watch;
		this.away.putAll(away);
	}

	/** Whether a shard is still away: not migrated, its part of the engine not started. */
	boolean isAway(String shard) {
		return this.away.containsKey(shard);
	}

	boolean anyAway() {
		return !this.away.isEmpty();
	}

	/** Holds each shard still away down in the watch, with why, before the watch's first probe counts. */
	void holdDown() {
		this.away.forEach((shard, why) -> this.watch.holdDown(shard, notMigrated(why)));
	}

	/** Logs, once at start, the shards the engine starts without. */
	void warn() {
		this.away.forEach((shard, why) -> logger.warn("pgqueue starts without shard '{}', which did not "
				+ "answer ({}): its keyed jobs are refused until it answers, is migrated and its pollers start "
				+ "(pgqueue.sharding.start-while-down)", shard, why.getMessage()));
	}

	@Override
	protected void runOnce() {
		for (String shard : List.copyOf(this.away.keySet())) {
			try {
				Objects.requireNonNull(this.migrators.get(shard)).afterPropertiesSet();
				this.databases.get(shard).start();
				this.away.remove(shard);
				this.watch.release(shard);
				logger.info("pgqueue's shard '{}' answers and is migrated: its pollers run and it takes jobs", shard);
			}
			catch (RuntimeException ex) {
				this.away.put(shard, ex);
				this.watch.holdDown(shard, notMigrated(ex));
				logger.debug("pgqueue's shard '{}' could not join yet", shard, ex);
			}
		}
	}

	private static String notMigrated(RuntimeException why) {
		return "it did not answer at start-up, so its tables are not migrated and its pollers not started yet ("
				+ ShardWatch.describe(why) + ")";
	}

}
