package dev.pgqueue.modulith.shop;

import dev.pgqueue.modulith.shop.ShopApplication.OrderPlaced;
import dev.pgqueue.modulith.shop.ShopApplication.OrderViewed;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Places orders, publishing their events in the same transaction as their rows. */
@Service
public class Orders {

	private final JdbcTemplate jdbc;

	private final ApplicationEventPublisher events;

	Orders(JdbcTemplate jdbc, ApplicationEventPublisher events) {
		this.jdbc = jdbc;
		this.events = events;
	}

	/** Saves the order and publishes {@link OrderPlaced}. */
	@Transactional
	public void place(String orderId, String customer) {
		this.jdbc.update("INSERT INTO orders (id, customer) VALUES (?, ?)", orderId, customer);
		this.events.publishEvent(new OrderPlaced(orderId, customer));
	}

	/** As {@link #place}, then fails, after the event is published: everything rolls back. */
	@Transactional
	public void placeButPaymentFails(String orderId, String customer) {
		place(orderId, customer);
		throw new IllegalStateException("Payment for order " + orderId + " was declined");
	}

	/** Publishes {@link OrderViewed}. */
	@Transactional
	public void view(String orderId) {
		this.events.publishEvent(new OrderViewed(orderId));
	}

}
