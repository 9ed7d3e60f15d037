package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.schema.QueueMigrator;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

/**
 * Adds {@code pgqueue} to the {@code info} endpoint: the schema pgqueue's tables live in and the
 * version its own migrations left them at, whether this application runs jobs, and the queues it
 * knows with their settings: those configured and those its pollers run.
 */
class QueueInfoContributor implements InfoContributor {

	private final QueueMigrator migrator;

	private final QueueEngine engine;

	QueueInfoContributor(QueueMigrator migrator, QueueEngine engine) {
		this.migrator = migrator;
		this.engine = engine;
	}

	@Override
	public void contribute(Info.Builder builder) {
		Map<String, QueueInfo> queues = new TreeMap<>();
		for (String name : this.engine.queues().configuredQueues()) {
			queues.put(name, QueueInfo.of(this.engine.queues().settings(name)));
		}
		for (JobPoller poller : this.engine.pollers()) {
			queues.put(poller.settings().name(), QueueInfo.of(poller.settings()));
		}
		builder.withDetail("pgqueue", new PgqueueInfo(
				new SchemaInfo(this.migrator.schema().value(), this.migrator.schemaVersion()),
				this.engine.processing(), queues));
	}

	/**
	 * pgqueue's entry in {@code info}.
	 *
	 * @param schema where its tables are
	 * @param processing whether this application runs jobs ({@code pgqueue.enabled})
	 * @param queues the queues configured here or polled here, by name
	 */
	record PgqueueInfo(SchemaInfo schema, boolean processing, Map<String, QueueInfo> queues) {
	}

	/**
	 * @param name the schema of pgqueue's tables
	 * @param version the version pgqueue's own migrations left it at; absent when they did not
	 * create it ({@code pgqueue.schema.migrate=false} and no history table)
	 */
	record SchemaInfo(String name, @Nullable String version) {
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
