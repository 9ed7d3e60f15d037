package dev.pgqueue.autoconfigure;

import dev.pgqueue.metrics.QueueMetrics;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Publishes pgqueue's metrics ({@code pgqueue.*}) to the application's {@link MeterRegistry}.
 */
@AutoConfiguration(
		after = { MetricsAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class },
		before = QueueAutoConfiguration.class)
@ConditionalOnClass({ MeterRegistry.class, MetricsAutoConfiguration.class, QueueMetrics.class })
@ConditionalOnBean(MeterRegistry.class)
@EnableConfigurationProperties(QueueProperties.class)
public final class QueueMetricsAutoConfiguration {

	/**
	 * The meters of each database the engine runs on: one database's as they are, each shard's tagged
	 * with its name. An application's own {@link QueueMetrics} replaces them on every database.
	 */
	@Bean
	@ConditionalOnMissingBean({ QueueMetrics.class, DatabaseMetrics.class })
	DatabaseMetrics pgqueueMetrics(MeterRegistry registry, QueueProperties properties) {
		return new DatabaseMetrics(registry, properties.getQueues().keySet());
	}

}
