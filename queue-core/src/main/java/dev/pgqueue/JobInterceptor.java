package dev.pgqueue;

/**
 * Runs around every attempt of every job, for what an application does around all its listeners:
 * set up a tenant's context from the job, time a kind, add to the log context, refuse a job. In a
 * Spring Boot application every bean of this type is one, in {@code @Order} order: the first is the
 * outermost.
 *
 * <p>Where it runs: on the worker's thread, inside the attempt's observation (its trace span) and
 * with the job in the MDC, under the attempt's time limit, and in a transactional queue inside the
 * batch's transaction, so that its database work commits or rolls back with the job's. It sees what
 * the listener throws, {@link JobSnoozedException} included, and decides what the attempt throws:
 *
 * <pre>{@code
 * @Bean
 * JobInterceptor tenantContext() {
 *     return (job, invocation) -> {
 *         Tenants.set(job.queue());
 *         try {
 *             invocation.proceed();
 *         }
 *         finally {
 *             Tenants.clear();
 *         }
 *     };
 * }
 * }</pre>
 *
 * An interceptor that returns without calling {@link Invocation#proceed()} skips the listener: the
 * attempt completes with nothing done. One that throws fails the attempt like a listener that throws.
 */
@FunctionalInterface
public interface JobInterceptor {

	/**
	 * Runs around one attempt of {@code job}.
	 * @param job the job, as its listener sees it
	 * @param invocation the rest of the chain: the interceptors after this one, then the listener;
	 * call {@link Invocation#proceed()} at most once
	 * @throws Throwable what the attempt fails with
	 */
	void intercept(Job job, Invocation invocation) throws Throwable;

	/** The rest of an attempt: the interceptors after the current one, then the listener. */
	interface Invocation {

		/**
		 * Runs the rest of the chain; throws what it throws.
		 * @throws IllegalStateException when called a second time
		 * @throws Throwable what an interceptor after this one, or the listener, threw
		 */
		void proceed() throws Throwable;

	}

}
