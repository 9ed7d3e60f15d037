package dev.pgqueue.autoconfigure;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.schema.QueueMigrator;

import org.springframework.boot.actuate.autoconfigure.info.ConditionalOnEnabledInfoContributor;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ImportRuntimeHints;

/**
 * Contributes pgqueue's entry to the {@code info} endpoint ({@link QueueInfoContributor}) when
 * Actuator is on the class path, unless {@code management.info.pgqueue.enabled=false} (or
 * {@code management.info.defaults.enabled=false}).
 */
@AutoConfiguration(after = QueueAutoConfiguration.class)
@ConditionalOnClass({ InfoContributor.class, ConditionalOnEnabledInfoContributor.class })
@ConditionalOnEnabledInfoContributor("pgqueue")
@ImportRuntimeHints(QueueEndpointRuntimeHints.class)
public final class QueueInfoContributorAutoConfiguration {

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBean({ QueueEngine.class, QueueMigrator.class })
	static class OneEngine {

		@Bean
		@ConditionalOnMissingBean(name = "pgqueueInfoContributor")
		QueueInfoContributor pgqueueInfoContributor(QueueMigrator migrator, QueueEngine engine) {
			return new QueueInfoContributor(migrator, engine);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBean(QueueShards.class)
	static class Shards {

		@Bean
		@ConditionalOnMissingBean(name = "pgqueueInfoContributor")
		QueueInfoContributor pgqueueInfoContributor(QueueShards shards) {
			return new QueueInfoContributor(shards);
		}

	}

}
