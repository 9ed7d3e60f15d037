package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.shards.ShardWatch;
import dev.pgqueue.engine.status.DatabaseStatus;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.schema.QueueMigrator;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.dao.DataAccessException;

/**
 * Adds {@code pgqueue} to the {@code info} endpoint: the schema pgqueue's tables live in and the
 * version its own migrations left them at, whether this application runs jobs, and the queues it
 * knows with their settings: those configured and those its pollers run.
 */
class QueueInfoContributor implements InfoContributor {

	private final QueueEngine engine;

	private final @Nullable QueueMigrator migrator;

	/**
	 * @param migrator the migrator of the engine's one database (the starter's bean); over shards, each
	 * shard's is the engine's
	 */
	QueueInfoContributor(QueueEngine engine, @Nullable QueueMigrator migrator) {
		this.engine = engine;
		this.migrator = migrator;
	}

	@Override
	public void contribute(Info.Builder builder) {
		Map<String, QueueInfo> queues = new TreeMap<>();
		for (String name : this.engine.queues().configuredQueues()) {
			queues.put(name, QueueInfo.of(this.engine.queues().settings(name)));
		}
		for (DatabaseStatus database : this.engine.status().databases()) {
			database.queues().values().stream().filter((queue) -> queue.poller() != null)
				.forEach((queue) -> queues.put(queue.name(), QueueInfo.of(queue.poller().settings())));
		}
		Map<String, SchemaInfo> shardSchemas = null;
		if (!this.engine.shards().names().isEmpty()) {
			shardSchemas = new LinkedHashMap<>();
			for (String shard : this.engine.shards().names()) {
				shardSchemas.put(shard, SchemaInfo.of(this.engine, shard));
			}
		}
		builder.withDetail("pgqueue", new PgqueueInfo((this.migrator != null) ? SchemaInfo.of(this.migrator) : null,
				this.engine.processing(), queues, shardSchemas));
	}

	/**
	 * pgqueue's entry in {@code info}.
	 *
	 * @param schema where its tables are; absent with shards
	 * @param processing whether this application runs jobs ({@code pgqueue.enabled})
	 * @param queues the queues configured here or polled here, by name
	 * @param shards each shard's schema, by shard; absent without shards
	 */
	record PgqueueInfo(@Nullable SchemaInfo schema, boolean processing, Map<String, QueueInfo> queues,
			@Nullable Map<String, SchemaInfo> shards) {
	}

	/**
	 * @param name the schema of pgqueue's tables
	 * @param version the version pgqueue's own migrations left it at; absent when they did not
	 * create it ({@code pgqueue.schema.migrate=false} and no history table), or could not be read
	 * @param unavailable why a shard's version could not be read; absent while it answers
	 */
	record SchemaInfo(String name, @Nullable String version, @Nullable String unavailable) {

		static SchemaInfo of(QueueMigrator migrator) {
			return new SchemaInfo(migrator.schema().value(), migrator.schemaVersion(), null);
		}

		/** A shard's schema; its version only while the shard answers, so that a down shard fails no read. */
		static SchemaInfo of(QueueEngine engine, String shard) {
			QueueMigrator migrator = engine.migrator(shard).orElseThrow();
			String down = engine.shards().whyDown(shard);
			if (down != null) {
				return new SchemaInfo(migrator.schema().value(), null, down);
			}
			try {
				return of(migrator);
			}
			catch (DataAccessException ex) {
				// Its kind, never the driver's words, which name the server's host and the user.
				return new SchemaInfo(migrator.schema().value(), null, ShardWatch.describe(ex));
			}
		}

	}

	/**
	 * A queue's main settings.
	 *
	 * @param mode {@code transactional} or {@code leased}
	 * @param concurrency batches (transactional) or jobs (leased) run at once here
	 * @param batchSize most jobs one claim takes
	 * @param pollInterval pause between polls that found less than a full batch
	 * @param maxAttempts attempts a job gets unless its request says otherwise
	 * @param assignment how the instances that poll it divide its jobs
	 */
	record QueueInfo(String mode, int concurrency, int batchSize, Duration pollInterval, int maxAttempts,
			String assignment) {

		static QueueInfo of(QueueSettings settings) {
			return new QueueInfo(settings.mode().name().toLowerCase(Locale.ROOT), settings.concurrency(),
					settings.batchSize(), settings.pollInterval(), settings.maxAttempts(),
					settings.assignment().name().toLowerCase(Locale.ROOT));
		}

	}

}
