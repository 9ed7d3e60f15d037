package dev.pgqueue.testkit;

import java.util.List;

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

	/** Over the application's engine: on its database, or on each of its shards. */
	@Bean
	@ConditionalOnMissingBean
	QueueTester queueTester(ObjectProvider<QueueEngine> engine, ObjectProvider<JsonMapper> jsonMapper) {
		return new QueueTester(QueueTesterAutoConfiguration.engine(engine), jsonMapper.getIfAvailable(JsonMapper::new));
	}

	/** The application's engine. */
	static QueueEngine engine(ObjectProvider<QueueEngine> engine) {
		QueueEngine found = engine.getIfAvailable();
		if (found == null) {
			throw new IllegalStateException("The QueueTester found no pgqueue engine in the application: is the "
					+ "starter's auto-configuration excluded, or a DataSource missing?");
		}
		return found;
	}

}
