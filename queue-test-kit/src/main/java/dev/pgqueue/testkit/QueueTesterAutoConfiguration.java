package dev.pgqueue.testkit;

import dev.pgqueue.autoconfigure.QueueAutoConfiguration;
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

	@Bean
	@ConditionalOnMissingBean
	QueueTester queueTester(QueueEngine engine, ObjectProvider<JsonMapper> jsonMapper) {
		return new QueueTester(engine, jsonMapper.getIfAvailable(JsonMapper::new));
	}

}
