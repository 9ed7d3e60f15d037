package dev.pgqueue.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.test.annotation.DirtiesContext;

/**
 * Gives a {@code @SpringBootTest} class a pgqueue schema of its own, on the database the application
 * already uses ({@code spring.datasource.*}, or a {@code @ServiceConnection} container): a fresh
 * schema named {@code pgqueue_test_…} becomes {@code pgqueue.schema.name}, pgqueue creates its
 * tables there at start-up, and the schema is dropped, with everything in it, when the class's
 * application context closes, which it does after the class ({@link DirtiesContext}). The jobs of
 * other test classes are then never in the way, and a failed test leaves none behind.
 *
 * <p>The application's own tables stay where they are, unless {@link #applicationTables()} says
 * otherwise. Finding or starting the PostgreSQL server is not this annotation's business: it works
 * with whatever data source the test gives the application.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@DirtiesContext
public @interface IsolatedQueueSchema {

	/**
	 * Whether the application's own tables go in the schema too: it also becomes the schema of the
	 * pool's connections (their search path, {@code spring.datasource.hikari.schema}) and of the
	 * application's Flyway migrations ({@code spring.flyway.schemas}). For a HikariCP pool.
	 */
	boolean applicationTables() default false;

}
