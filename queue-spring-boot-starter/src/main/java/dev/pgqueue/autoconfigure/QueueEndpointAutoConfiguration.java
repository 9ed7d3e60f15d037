package dev.pgqueue.autoconfigure;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.engine.QueueEngine;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ImportRuntimeHints;

/**
 * Contributes the {@code pgqueue} Actuator endpoint ({@link QueueEndpoint}) when Actuator is on the
 * class path and the endpoint is available (its access is not {@code none} and it is exposed), and
 * its {@link QueueEndpointWebExtension web extension} when it is exposed over HTTP.
 */
@AutoConfiguration(after = QueueAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean(JobAdmin.class)
@ConditionalOnAvailableEndpoint(QueueEndpoint.class)
@EnableConfigurationProperties(QueueEndpointProperties.class)
@ImportRuntimeHints(QueueEndpointRuntimeHints.class)
public final class QueueEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	QueueEndpoint pgqueueEndpoint(JobAdmin admin, ObjectProvider<QueueEngine> engine,
			ObjectProvider<JobSchedules> schedules,
			ObjectProvider<EndpointAccessResolver> access,
			QueueEndpointProperties properties) {
		// The access Boot maps the operations by: management.endpoint.pgqueue.access, else the default
		// of every endpoint, else the endpoint's own (read-only).
		EndpointAccessResolver resolver = access.getIfAvailable();
		Access resolved = (resolver != null) ? resolver.accessFor(EndpointId.of("pgqueue"), Access.READ_ONLY)
				: Access.READ_ONLY;
		return new QueueEndpoint(admin, engine, schedules, resolved == Access.UNRESTRICTED, properties.getShowValues());
	}

	@Bean
	@ConditionalOnBean(QueueEndpoint.class)
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
	QueueEndpointWebExtension pgqueueEndpointWebExtension(QueueEndpoint endpoint,
			QueueEndpointProperties properties) {
		return new QueueEndpointWebExtension(endpoint, properties.getShowValues(), properties.getRoles());
	}

}
