package dev.pgqueue.schema;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * Includes pgqueue's migrations in a native image: the SQL scripts under
 * {@link QueueMigrator#LOCATION} and the {@code .conf} files beside some of them (which run a script
 * outside a transaction). Flyway's and Spring Boot's hints cover only the application's own
 * locations. Listed in {@code META-INF/spring/aot.factories}.
 */
class QueueSchemaRuntimeHints implements RuntimeHintsRegistrar {

	/** The location as a resource path, without {@code classpath:}. */
	static final String MIGRATIONS = QueueMigrator.LOCATION.substring("classpath:".length());

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources().registerPattern(MIGRATIONS + "/*.sql").registerPattern(MIGRATIONS + "/*.sql.conf");
	}

}
