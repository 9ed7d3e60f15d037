package dev.pgqueue.testkit;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.pgqueue.test.TestDatabase;

import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;

/**
 * Gives the test application the project's test database as {@code spring.datasource.*}: the one
 * place where the kit's tests learn which PostgreSQL server they run against ({@link TestDatabase}
 * decides). The kit itself never asks; it uses whatever data source the application has.
 */
class TestDatabaseInitializer implements ApplicationContextInitializer<ConfigurableApplicationContext> {

	@Override
	public void initialize(ConfigurableApplicationContext context) {
		TestDatabase database = TestDatabase.get();
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("spring.datasource.url", database.jdbcUrl());
		if (database.username() != null) {
			properties.put("spring.datasource.username", database.username());
		}
		if (database.password() != null) {
			properties.put("spring.datasource.password", database.password());
		}
		context.getEnvironment().getPropertySources().addLast(new MapPropertySource("pgqueueTestDatabase", properties));
	}

}
