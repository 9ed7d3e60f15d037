package dev.pgqueue.autoconfigure;

import java.util.Set;

import dev.pgqueue.schema.QueueMigrator;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;
import org.springframework.core.Ordered;

/**
 * Tells Spring Boot that {@link QueueMigrator} initializes the database, so that beans that depend
 * on database initialization wait for the jobs table.
 */
class QueueMigratorDatabaseInitializerDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {

	@Override
	protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
		return Set.of(QueueMigrator.class);
	}

	/**
	 * After the application's own initializers (Flyway, Liquibase, SQL scripts): Spring Boot makes
	 * each detector's initializers wait for those of earlier detectors, and the application's Flyway
	 * refuses a non-empty schema without its history table, whereas pgqueue's migrator baselines one.
	 */
	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

}
