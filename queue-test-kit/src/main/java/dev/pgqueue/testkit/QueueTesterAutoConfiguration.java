package dev.pgqueue.testkit;

import java.util.List;

import dev.pgqueue.autoconfigure.QueueAutoConfiguration;
import dev.pgqueue.autoconfigure.QueueShards;
import dev.pgqueue.engine.QueueEngine;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@link QueueTester}, imported by
 * {@link AutoConfigureQueueTester @AutoConfigureQueueTester}: a test asks for it, an application
 * never gets it.
 */
@AutoConfiguration(after = QueueAutoConfiguration.class)
public final class QueueTesterAutoConfiguration {

	/** Over the application's engine, or over each shard's where queues are spread over shards. */
	@Bean
	@ConditionalOnMissingBean
	QueueTester queueTester(ObjectProvider<QueueEngine> engine, ObjectProvider<QueueShards> shards,
			ObjectProvider<JsonMapper> jsonMapper) {
		return new QueueTester(QueueTesterAutoConfiguration.engines(engine, shards), jsonMapper.getIfAvailable(JsonMapper::new));
	}

	/** The application's engine, or each shard's in declared order. */
	static List<QueueEngine> engines(ObjectProvider<QueueEngine> engine, ObjectProvider<QueueShards> shards) {
		QueueEngine single = engine.getIfAvailable();
		if (single != null) {
			return List.of(single);
		}
		QueueShards sharded = shards.getIfAvailable();
		if (sharded != null) {
			return sharded.names().stream().map(sharded::engine).toList();
		}
		throw new IllegalStateException("The QueueTester found no pgqueue engine in the application: is the starter's "
				+ "auto-configuration excluded, or a DataSource missing?");
	}

}
