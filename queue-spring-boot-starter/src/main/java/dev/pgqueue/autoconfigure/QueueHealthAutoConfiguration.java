package dev.pgqueue.autoconfigure;

import dev.pgqueue.engine.QueueEngine;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Contributes the {@code pgqueue} health indicator when Spring Boot's health support is present: of
 * the one engine, or of every shard's.
 */
@AutoConfiguration(after = QueueAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBooleanProperty(name = "pgqueue.enabled", matchIfMissing = true)
@ConditionalOnEnabledHealthIndicator("pgqueue")
public final class QueueHealthAutoConfiguration {

	/** The health of the engine's queues and services; over shards, of each shard's, and which shards answer. */
	@Bean
	@ConditionalOnBean(QueueEngine.class)
	@ConditionalOnMissingBean(name = "pgqueueHealthIndicator")
	QueueHealthIndicator pgqueueHealthIndicator(QueueEngine engine) {
		return new QueueHealthIndicator(engine);
	}

}
