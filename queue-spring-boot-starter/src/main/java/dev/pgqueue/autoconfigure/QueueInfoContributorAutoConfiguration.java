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
import org.springframework.beans.factory.ObjectProvider;
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

	@Bean
	@ConditionalOnBean(QueueEngine.class)
	@ConditionalOnMissingBean(name = "pgqueueInfoContributor")
	QueueInfoContributor pgqueueInfoContributor(QueueEngine engine, ObjectProvider<QueueMigrator> migrator) {
		return new QueueInfoContributor(engine, migrator.getIfUnique());
	}

}
