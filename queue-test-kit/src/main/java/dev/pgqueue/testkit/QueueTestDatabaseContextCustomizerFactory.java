package dev.pgqueue.testkit;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.pgqueue.embedded.TestPostgres;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

/** Gives test classes annotated {@link QueueTestDatabase} the server {@link TestPostgres} chooses. */
final class QueueTestDatabaseContextCustomizerFactory implements ContextCustomizerFactory {

	static final String PROPERTY_SOURCE = "pgqueueTestDatabase";

	@Override
	public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		return TestContextAnnotationUtils.hasAnnotation(testClass, QueueTestDatabase.class) ? new Customizer()
				: null;
	}

	/** One server per JVM: every annotated class's customizer is equal, so they may share a context. */
	static final class Customizer implements ContextCustomizer {

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration config) {
			TestPostgres server = TestPostgres.get();
			Map<String, Object> properties = new LinkedHashMap<>();
			properties.put("spring.datasource.url", server.jdbcUrl());
			// Without them, the URL carries the user (its parameters win over the pool's properties).
			if (server.username() != null) {
				properties.put("spring.datasource.username", server.username());
			}
			if (server.password() != null) {
				properties.put("spring.datasource.password", server.password());
			}
			context.getEnvironment().getPropertySources().addFirst(new MapPropertySource(PROPERTY_SOURCE, properties));
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof Customizer;
		}

		@Override
		public int hashCode() {
			return Customizer.class.hashCode();
		}

	}

}
