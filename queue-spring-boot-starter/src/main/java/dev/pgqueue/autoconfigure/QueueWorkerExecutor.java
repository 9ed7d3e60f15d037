package dev.pgqueue.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.beans.factory.annotation.Qualifier;

/**
 * Qualifies the {@link java.util.concurrent.Executor} that runs the workers of every queue instead
 * of a pool per queue. Each queue still runs at most its concurrency at once. The executor must not
 * hold tasks back behind each other indefinitely: a pool with enough threads, or virtual threads.
 *
 * <p>An {@code Executor} bean named {@value QueueAutoConfiguration#WORKER_EXECUTOR_BEAN_NAME} is
 * used the same way when no bean carries this qualifier.
 */
@Target({ ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER, ElementType.TYPE,
		ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Qualifier
public @interface QueueWorkerExecutor {

}
