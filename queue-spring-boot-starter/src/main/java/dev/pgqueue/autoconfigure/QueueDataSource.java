package dev.pgqueue.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.beans.factory.annotation.Qualifier;

/**
 * Qualifies the {@link javax.sql.DataSource} pgqueue uses instead of the application's: its
 * migrations, its pollers, its {@code JobClient} and its {@code JobAdmin} all go through it. When
 * there is none, pgqueue uses the application's {@code DataSource}.
 *
 * <p>Jobs enqueued through a dedicated data source are not part of transactions on the
 * application's other data sources: enqueueing is then atomic with the application's writes only
 * when they share the queue's data source.
 *
 * @see QueueTransactionManager
 */
@Target({ ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER, ElementType.TYPE,
		ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Qualifier
public @interface QueueDataSource {

}
