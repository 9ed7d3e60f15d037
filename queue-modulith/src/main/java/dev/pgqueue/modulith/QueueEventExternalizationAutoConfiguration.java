package dev.pgqueue.modulith;

import dev.pgqueue.JobClient;
import dev.pgqueue.autoconfigure.QueueAutoConfiguration;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.config.EventExternalizationAutoConfiguration;
import org.springframework.modulith.events.core.ConditionalEventListener;

/**
 * Auto-configuration of the {@link JobEventExternalizer}: with Spring Modulith's event
 * externalization on ({@code spring.modulith.events.externalization.enabled}, the default) and a
 * pgqueue {@link JobClient}, externalized events become pgqueue jobs. It does not depend on
 * {@code spring.modulith.events.externalization.mode}: the job is enqueued in the publishing
 * transaction in either mode.
 */
@AutoConfiguration(after = { EventExternalizationAutoConfiguration.class, QueueAutoConfiguration.class })
@ConditionalOnClass({ EventExternalizationConfiguration.class, ConditionalEventListener.class, JobClient.class })
@ConditionalOnProperty(name = "spring.modulith.events.externalization.enabled", havingValue = "true",
		matchIfMissing = true)
@ConditionalOnBean({ JobClient.class, EventExternalizationConfiguration.class })
public final class QueueEventExternalizationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	JobEventExternalizer pgqueueJobEventExternalizer(JobClient jobs, EventExternalizationConfiguration configuration,
			ObjectProvider<ExternalizedJobCustomizer> customizers, BeanFactory beanFactory) {
		// @bean references in routing templates resolve against the application's beans.
		StandardEvaluationContext context = new StandardEvaluationContext();
		context.setBeanResolver(new BeanFactoryResolver(beanFactory));
		return new JobEventExternalizer(jobs, configuration, context, customizers.orderedStream().toList());
	}

}
