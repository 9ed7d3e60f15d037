package dev.pgqueue.modulith.shop;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.pgqueue.JobListener;
import dev.pgqueue.modulith.shop.ShopApplication.OrderPlaced;

import org.springframework.stereotype.Component;

/** Ships placed orders: the pgqueue listener of the externalized {@link OrderPlaced} events. */
@Component
public class Shipping {

	private final List<OrderPlaced> shipped = new CopyOnWriteArrayList<>();

	@JobListener(kind = "orders.placed", queue = "orders")
	void ship(OrderPlaced order) {
		this.shipped.add(order);
	}

	/** The orders shipped so far. */
	public List<OrderPlaced> shipped() {
		return this.shipped;
	}

	/** Forgets the orders shipped so far. */
	public void reset() {
		this.shipped.clear();
	}

}
