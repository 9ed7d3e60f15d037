package dev.pgqueue.autoconfigure;

import jakarta.servlet.DispatcherType;
import org.jspecify.annotations.Nullable;

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
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.server.WebFilter;

/**
 * Guards the {@code pgqueue} endpoint's writes ({@link QueueEndpointWriteGuard}) in whichever context
 * serves Actuator: the application's, or the management server's own when {@code management.server.port}
 * differs; with a servlet filter in a servlet application, a {@link WebFilter} in a WebFlux one. Only
 * where the endpoint's writes are mapped ({@code access=unrestricted}): read-only, Spring Boot maps no
 * write and a POST answers 404.
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnAvailableEndpoint(QueueEndpoint.class)
class QueueEndpointWriteGuardConfiguration {

	/** The endpoint's path when its writes are mapped over HTTP, else {@code null}. */
	private static @Nullable String writablePath(ObjectProvider<PathMappedEndpoints> endpoints,
			ObjectProvider<EndpointAccessResolver> access) {
		PathMappedEndpoints mapped = endpoints.getIfAvailable();
		EndpointAccessResolver resolver = access.getIfAvailable();
		boolean writes = resolver != null
				&& resolver.accessFor(EndpointId.of("pgqueue"), Access.READ_ONLY) == Access.UNRESTRICTED;
		return (mapped != null && writes) ? mapped.getPath(EndpointId.of("pgqueue")) : null;
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass({ OncePerRequestFilter.class, FilterRegistrationBean.class })
	static class ServletGuard {

		@Bean
		FilterRegistrationBean<QueueEndpointWriteGuard> pgqueueEndpointWriteGuard(
				ObjectProvider<PathMappedEndpoints> endpoints, ObjectProvider<EndpointAccessResolver> access) {
			String path = writablePath(endpoints, access);
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

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	@ConditionalOnClass(WebFilter.class)
	static class ReactiveGuard {

		@Bean
		WebFilter pgqueueEndpointWriteGuard(ObjectProvider<PathMappedEndpoints> endpoints,
				ObjectProvider<EndpointAccessResolver> access) {
			String path = writablePath(endpoints, access);
			return (path != null) ? new QueueEndpointWriteWebFilter(path) : (exchange, chain) -> chain.filter(exchange);
		}

	}

}
