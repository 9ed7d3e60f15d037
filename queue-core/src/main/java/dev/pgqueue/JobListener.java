package dev.pgqueue;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a bean method as the handler of one kind of job.
 *
 * <p>The method takes the payload, mapped by Jackson to the parameter's type, and optionally the
 * {@link Job} itself, in any order; a method that takes only a {@code Job} reads the raw payload
 * from it. It returns normally to complete the job; any exception schedules a retry unless it is a
 * {@link NonRetryableJobException} (or configured as non-retryable), which fails the job at once.
 *
 * <pre>{@code
 * @JobListener(kind = "email.welcome", queue = "mail")
 * void send(WelcomeEmail email, Job job) { ... }
 * }</pre>
 *
 * <p>Exactly one listener may handle a kind; a second one fails the application at start-up.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface JobListener {

	/** Stable name of the kind of job this method handles, as given to {@link JobClient}. */
	String kind();

	/** Queue (pool of workers with its own settings) whose pollers run this kind. */
	String queue() default JobRequest.DEFAULT_QUEUE;

	/**
	 * Most jobs of this kind running at once across every instance; 0 (the default) for no limit
	 * beyond the queue's. {@code pgqueue.kinds.<kind>.max-running} overrides it.
	 */
	int maxRunning() default 0;

	/**
	 * How long one attempt may run before it is interrupted and counted as failed, such as
	 * {@code "30s"} or {@code "PT2M"}; empty (the default) for the queue's {@code timeout}.
	 * {@code pgqueue.kinds.<kind>.timeout} overrides it.
	 */
	String timeout() default "";

	/**
	 * At most so many jobs of this kind start in any window of one period, across every instance,
	 * written {@code "<starts>/<period>"}, such as {@code "100/1m"} or {@code "10/1s"}; empty (the
	 * default) for no limit. The period must not be shorter than the queue's poll interval.
	 * {@code pgqueue.kinds.<kind>.rate-limit.*} overrides it.
	 */
	String rateLimit() default "";

	/**
	 * How many units of each rate limit a job of this kind uses when it starts (the queue's, the
	 * kind's and its key's): more than 1 for a job that costs an external API several calls. A weight
	 * above a limit it falls under fails start-up. {@code pgqueue.kinds.<kind>.rate-weight} overrides it,
	 * and {@link JobRequest#rateWeight} overrides both for one job.
	 */
	int rateWeight() default 1;

}
