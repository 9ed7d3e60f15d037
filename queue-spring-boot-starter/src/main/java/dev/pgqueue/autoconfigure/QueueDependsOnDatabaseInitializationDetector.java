package dev.pgqueue.autoconfigure;

import java.util.Set;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.engine.QueueEngine;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDependsOnDatabaseInitializationDetector;

/**
 * Makes the beans that run pgqueue's SQL (the engine, its client and admin) wait until every database
 * initializer (pgqueue's own migrator among them) has run, so that an application enqueueing at
 * start-up finds the table.
 */
class QueueDependsOnDatabaseInitializationDetector
		extends AbstractBeansOfTypeDependsOnDatabaseInitializationDetector {

	@Override
	protected Set<Class<?>> getDependsOnDatabaseInitializationBeanTypes() {
		return Set.of(JobClient.class, JobAdmin.class, QueueEngine.class);
	}

}
