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
 * Contributes the {@code pgqueue} health indicator when Spring Boot's health support is present.
 */
@AutoConfiguration(after = QueueAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(QueueEngine.class)
@ConditionalOnBooleanProperty(name = "pgqueue.enabled", matchIfMissing = true)
@ConditionalOnEnabledHealthIndicator("pgqueue")
public final class QueueHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "pgqueueHealthIndicator")
	QueueHealthIndicator pgqueueHealthIndicator(QueueEngine engine) {
		return new QueueHealthIndicator(engine);
	}

}
