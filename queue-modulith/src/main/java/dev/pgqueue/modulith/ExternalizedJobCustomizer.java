package dev.pgqueue.modulith;

import dev.pgqueue.JobRequest;

/**
 * Adjusts the job that an externalized event becomes, before it is enqueued: its queue when no
 * {@code @JobListener} of this application names one, a unique key, a priority, a delay, tags. Every
 * bean of this type is applied, in their {@code @Order}, to every externalized event.
 *
 * <pre>{@code
 * @Bean
 * ExternalizedJobCustomizer ordersToTheirQueue() {
 *     return (event, job) -> {
 *         if (event instanceof OrderPlaced placed) {
 *             job.queue("orders").uniqueKey("order-placed-" + placed.orderId());
 *         }
 *     };
 * }
 * }</pre>
 */
@FunctionalInterface
public interface ExternalizedJobCustomizer {

	/**
	 * Adjusts the request in place. Called on the publishing thread, inside its transaction.
	 * @param event the event as published (before the externalization configuration's mapping)
	 * @param job the request for the event's job: its kind, payload and concurrency key are set
	 */
	void customize(Object event, JobRequest job);

}
