package dev.pgqueue.autoconfigure;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.maintenance.QueueMaintenance;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
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
@ConditionalOnBean(QueueMaintenance.class)
@ConditionalOnEnabledHealthIndicator("pgqueue")
public final class QueueHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "pgqueueHealthIndicator")
	QueueHealthIndicator pgqueueHealthIndicator(QueueMaintenance maintenance, ObjectProvider<JobPoller> pollers) {
		return new QueueHealthIndicator(maintenance, pollers);
	}

}
