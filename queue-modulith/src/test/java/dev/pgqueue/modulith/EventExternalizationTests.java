package dev.pgqueue.modulith;

import java.util.List;

import dev.pgqueue.JobState;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.modulith.shop.Orders;
import dev.pgqueue.modulith.shop.ShopApplication;
import dev.pgqueue.modulith.shop.ShopApplication.OrderPlaced;
import dev.pgqueue.modulith.shop.Shipping;
import dev.pgqueue.testkit.AutoConfigureQueueTester;
import dev.pgqueue.testkit.EnqueuedJob;
import dev.pgqueue.testkit.IsolatedQueueSchema;
import dev.pgqueue.testkit.QueueTestDatabase;
import dev.pgqueue.testkit.QueueTester;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * A Spring Modulith application (JDBC event publication registry) whose {@code @Externalized} events
 * become pgqueue jobs in the transaction that publishes them. The pollers are off: the test drains
 * the queue on its own thread, through the application's {@code @JobListener}.
 */
@SpringBootTest(classes = ShopApplication.class, properties = { "pgqueue.enabled=false",
		"spring.modulith.events.jdbc.schema-initialization.enabled=true",
		// The registry's table goes in the class's schema too; Modulith creates the schema if it runs first.
		"spring.modulith.events.jdbc.schema=${pgqueue.schema.name}" })
@QueueTestDatabase
@AutoConfigureQueueTester
@IsolatedQueueSchema(applicationTables = true)
class EventExternalizationTests {

	@Autowired
	private Orders orders;

	@Autowired
	private Shipping shipping;

	@Autowired
	private QueueTester queue;

	@Autowired
	private JdbcTemplate jdbc;

	@Autowired
	private QueueEngine engine;

	@BeforeEach
	void startEmpty() {
		this.jdbc.execute(ShopApplication.CREATE_ORDERS);
		this.jdbc.update("DELETE FROM orders");
		this.jdbc.update("DELETE FROM " + table("pgqueue_jobs"));
		this.jdbc.update("DELETE FROM " + table("pgqueue_finished_jobs"));
		this.shipping.reset();
	}

	@Test
	void aCommittedOrderBecomesOneJobThatItsListenerHandles() {
		this.orders.place("o-1", "ada");

		EnqueuedJob job = this.queue.assertThatJobs()
			.hasSize(1)
			.ofKind("orders.placed")
			.inQueue("orders")
			.withPayload(new OrderPlaced("o-1", "ada"))
			.withPriority(0)
			.singleJob();
		assertThat(concurrencyKeyOf(job)).isEqualTo("ada");

		this.queue.drain("orders");

		assertThat(this.shipping.shipped()).containsExactly(new OrderPlaced("o-1", "ada"));
		this.queue.assertThatJobs().ofKind("orders.placed").hasSize(1).allInState(JobState.COMPLETED);
	}

	@Test
	void aRolledBackOrderLeavesNoJob() {
		assertThatIllegalStateException().isThrownBy(() -> this.orders.placeButPaymentFails("o-2", "bob"))
			.withMessageContaining("declined");

		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM orders", Integer.class)).isZero();
		this.queue.assertThatJobs().isEmpty();
		this.queue.drain("orders");
		assertThat(this.shipping.shipped()).isEmpty();
	}

	@Test
	void anEventThatIsNotExternalizedLeavesNoJob() {
		this.orders.view("o-3");

		this.queue.assertThatJobs().isEmpty();
	}

	@Test
	void eachCommittedOrderGetsItsOwnJobAdjustedByTheCustomizers() {
		this.orders.place("o-4", "ada");
		this.orders.place("o-5", "vip");

		this.queue.assertThatJobs().ofKind("orders.placed").hasSize(2);
		this.queue.assertThatJobs().withPayload(new OrderPlaced("o-5", "vip")).withPriority(10).hasSize(1);
		this.queue.drain("orders");
		assertThat(this.shipping.shipped()).containsExactlyInAnyOrder(new OrderPlaced("o-4", "ada"),
				new OrderPlaced("o-5", "vip"));
	}

	private String concurrencyKeyOf(EnqueuedJob job) {
		List<String> keys = this.jdbc.queryForList(
				"SELECT concurrency_key FROM " + table("pgqueue_all_jobs") + " WHERE public_id = ?", String.class, job.id());
		return keys.get(0);
	}

	private String table(String name) {
		return this.engine.database().settings().schema().qualify(name);
	}

}
