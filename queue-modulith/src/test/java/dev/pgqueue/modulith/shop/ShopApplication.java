package dev.pgqueue.modulith.shop;

import dev.pgqueue.modulith.ExternalizedJobCustomizer;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.modulith.events.Externalized;

/**
 * The Spring Modulith application that the externalization tests run: orders are placed in a
 * transaction that writes a row to {@code orders} and publishes {@link OrderPlaced}, externalized to
 * pgqueue kind {@code orders.placed} with the customer as key; {@link Shipping} handles those jobs.
 * {@link OrderViewed} is published as well, but not externalized.
 */
@SpringBootApplication
public class ShopApplication {

	/** The orders table, in the test class's schema. */
	public static final String CREATE_ORDERS = "CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY, customer text NOT NULL)";

	/** Published when an order is placed; externalized. */
	@Externalized("orders.placed::#{customer()}")
	public record OrderPlaced(String orderId, String customer) {
	}

	/** Published when an order is looked at; stays inside the application. */
	public record OrderViewed(String orderId) {
	}

	/** Orders of the customer {@code vip} jump the queue. */
	@Bean
	ExternalizedJobCustomizer vipOrdersFirst() {
		return (event, job) -> {
			if (event instanceof OrderPlaced placed && placed.customer().equals("vip")) {
				job.priority(10);
			}
		};
	}

}
