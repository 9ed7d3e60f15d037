package dev.pgqueue.autoconfigure;

import dev.pgqueue.metrics.MicrometerQueueMetrics;
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
import org.springframework.context.annotation.Conditional;

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

	@Bean
	@ConditionalOnMissingBean(QueueMetrics.class)
	@Conditional(ShardsCondition.None.class)
	MicrometerQueueMetrics pgqueueMetrics(MeterRegistry registry, QueueProperties properties) {
		return new MicrometerQueueMetrics(registry, properties.getQueues().keySet());
	}

	/** With shards, each shard's engine gets meters of its own, tagged with its name. */
	@Bean
	@ConditionalOnMissingBean({ QueueMetrics.class, ShardMetrics.class })
	@Conditional(ShardsCondition.Configured.class)
	ShardMetrics pgqueueShardMetrics(MeterRegistry registry, QueueProperties properties) {
		return new ShardMetrics(registry, properties.getQueues().keySet());
	}

}
