package dev.pgqueue.testkit;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

import dev.pgqueue.engine.DatabaseEngine;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.schema.SchemaName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.config.AutowireCapableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionBuilder;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.dao.DataAccessException;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.MergedContextConfiguration;

/**
 * Points pgqueue (and, if asked, the pool and Flyway) at a fresh schema, and registers the bean that
 * drops it when the context closes. Equal only for the same test class, so that no two classes
 * share a context, and so a schema.
 */
final class IsolatedQueueSchemaContextCustomizer implements ContextCustomizer {

	static final String PREFIX = "pgqueue_test_";

	static final String PROPERTY_SOURCE = "pgqueueIsolatedSchema";

	private static final String DROPPER = "pgqueueIsolatedSchemaDropper";

	private final Class<?> testClass;

	private final boolean applicationTables;

	IsolatedQueueSchemaContextCustomizer(Class<?> testClass, boolean applicationTables) {
		this.testClass = testClass;
		this.applicationTables = applicationTables;
	}

	@Override
	public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration config) {
		String schema = PREFIX + UUID.randomUUID().toString().replace("-", "").substring(0, 12).toLowerCase(Locale.ROOT);
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("pgqueue.schema.name", schema);
		if (this.applicationTables) {
			properties.put("spring.datasource.hikari.schema", schema);
			properties.put("spring.flyway.schemas", schema);
		}
		// First: the class asked for this schema, whatever the application's own configuration says.
		context.getEnvironment().getPropertySources().addFirst(new MapPropertySource(PROPERTY_SOURCE, properties));
		if (!(context instanceof BeanDefinitionRegistry registry)) {
			throw new IllegalStateException("@IsolatedQueueSchema needs an application context that registers bean "
					+ "definitions (a @SpringBootTest's does); " + this.testClass.getName() + " has a "
					+ context.getClass().getName());
		}
		AbstractBeanDefinition dropper = BeanDefinitionBuilder.rootBeanDefinition(Dropper.class)
			.addConstructorArgValue(schema)
			.setAutowireMode(AutowireCapableBeanFactory.AUTOWIRE_CONSTRUCTOR)
			.getBeanDefinition();
		registry.registerBeanDefinition(DROPPER, dropper);
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof IsolatedQueueSchemaContextCustomizer customizer
				&& customizer.testClass == this.testClass && customizer.applicationTables == this.applicationTables;
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.testClass, this.applicationTables);
	}

	/**
	 * Drops the schema when the context closes, from the application's engine or from each shard whose
	 * schema it is. It depends on the engine (or the shards), so it is destroyed after the engines have stopped (every lifecycle stops before any bean is destroyed) and before the data
	 * source closes (which the engine depends on).
	 */
	static final class Dropper implements DisposableBean {

		private static final Logger logger = LoggerFactory.getLogger(Dropper.class);

		private final String schema;

		private final List<DatabaseEngine> engines;

		Dropper(String schema, ConfigurableListableBeanFactory beans) {
			this.schema = schema;
			// Depending on the engine makes this bean go before it at close.
			for (String name : beans.getBeanNamesForType(QueueEngine.class)) {
				beans.registerDependentBean(name, DROPPER);
			}
			this.engines = QueueTesterAutoConfiguration.engine(beans.getBeanProvider(QueueEngine.class)).databases();
		}

		@Override
		public void destroy() {
			boolean dropped = false;
			for (DatabaseEngine engine : this.engines) {
				SchemaName used = engine.settings().schema();
				// Never drop what this customizer did not name: the test set the schema otherwise.
				if (used.value().equals(this.schema)) {
					try {
						engine.jobs().jdbcTemplate().execute("DROP SCHEMA IF EXISTS " + used.quoted() + " CASCADE");
					}
					catch (DataAccessException ex) {
						logger.warn("Could not drop test schema {}: {}", this.schema, ex.toString());
					}
					dropped = true;
				}
			}
			if (!dropped) {
				logger.warn("@IsolatedQueueSchema made schema {} for the test, but pgqueue used schema {}; dropping "
						+ "neither", this.schema, this.engines.stream().map((engine) -> engine.settings().schema().value())
							.distinct().toList());
			}
		}

	}

}
