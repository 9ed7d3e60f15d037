package dev.pgqueue.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.beans.factory.annotation.Qualifier;

/**
 * Qualifies the {@link org.springframework.transaction.PlatformTransactionManager} that runs
 * pgqueue's transactions: a transactional queue's claim, handler and completion, and the ticks of
 * recurring jobs. It must manage the queue's data source (see {@link QueueDataSource}), or the
 * application fails to start: a handler's writes would otherwise commit apart from its job.
 *
 * <p>When there is none, pgqueue uses the application's only transaction manager if it manages the
 * queue's data source, and a transaction manager of its own on a {@link QueueDataSource} otherwise.
 */
@Target({ ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER, ElementType.TYPE,
		ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Qualifier
public @interface QueueTransactionManager {

}
