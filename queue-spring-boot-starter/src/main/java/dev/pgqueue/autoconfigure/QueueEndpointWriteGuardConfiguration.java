package dev.pgqueue.autoconfigure;

import jakarta.servlet.DispatcherType;

import org.springframework.beans.factory.ObjectProvider;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Guards the {@code pgqueue} endpoint's writes ({@link QueueEndpointWriteGuard}) in a servlet
 * application, in whichever context serves Actuator: the application's, or the management server's
 * own when {@code management.server.port} differs.
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({ OncePerRequestFilter.class, FilterRegistrationBean.class })
@ConditionalOnAvailableEndpoint(QueueEndpoint.class)
class QueueEndpointWriteGuardConfiguration {

	@Bean
	FilterRegistrationBean<QueueEndpointWriteGuard> pgqueueEndpointWriteGuard(
			ObjectProvider<PathMappedEndpoints> endpoints, ObjectProvider<EndpointAccessResolver> access) {
		PathMappedEndpoints mapped = endpoints.getIfAvailable();
		// Read-only (the default), Spring Boot maps no write: a POST answers 404, as the docs say.
		EndpointAccessResolver resolver = access.getIfAvailable();
		boolean writes = resolver != null
				&& resolver.accessFor(EndpointId.of("pgqueue"), Access.READ_ONLY) == Access.UNRESTRICTED;
		String path = (mapped != null && writes) ? mapped.getPath(EndpointId.of("pgqueue")) : null;
		FilterRegistrationBean<QueueEndpointWriteGuard> registration = new FilterRegistrationBean<>(
				new QueueEndpointWriteGuard());
		registration.setName("pgqueueEndpointWriteGuard");
		if (path != null) {
			registration.addUrlPatterns(path, path + "/*");
		}
		else {
			// No write served over HTTP: a registration without patterns would guard every path.
			registration.setEnabled(false);
		}
		registration.setDispatcherTypes(DispatcherType.REQUEST);
		// Before the application's own filters (security included) see the request.
		registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 10);
		return registration;
	}

}
