package dev.pgqueue;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.listener.JobListenerMethodAdapter;
import dev.pgqueue.listener.JobListenerMethodAdapter.PayloadMappingException;
import org.jspecify.annotations.NullMarked;
import org.jspecify.annotations.NullUnmarked;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A job whose payload was written for another type, or lacks a property its type requires, fails at
 * once saying what to fix, while the jobs next to it that fit complete: those of the same version, of a
 * producer a version ahead and for a consumer a version ahead.
 */
class WrongPayloadTypeTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final Instant SHIPPED_AT = Instant.parse("2026-11-25T10:15:30Z");

	private static final Map<UUID, Object> received = new ConcurrentHashMap<>();

	private static final ListAppender<ILoggingEvent> logs = new ListAppender<>();

	private static QueueFixture fixture;

	/** What the producer of the wrong job meant to send, under another kind. */
	record OrderPlaced(long orderId, double total) {
	}

	/** Declared as most applications declare their payloads, without nullness annotations. */
	@NullUnmarked
	record OrderShipped(String trackingNumber, Instant shippedAt) {
	}

	/** {@link OrderShipped} as a consumer a version ahead reads it: the new component may be absent. */
	@NullMarked
	record OrderShippedWithCarrier(String trackingNumber, Instant shippedAt, @Nullable String carrier) {
	}

	static class ShippingListener {

		@JobListener(kind = "order.shipped", queue = "orders")
		void shipped(OrderShipped shipped, Job job) {
			received.put(job.id(), shipped);
		}

		@JobListener(kind = "order.shipped.carrier", queue = "orders")
		void shippedWithCarrier(OrderShippedWithCarrier shipped, Job job) {
			received.put(job.id(), shipped);
		}

	}

	@BeforeAll
	static void setUp() throws Exception {
		fixture = QueueFixture.create("wrong_payload");
		fixture.configure(QueueSettings.defaults("orders")
			.withPollInterval(Duration.ofMillis(50))
			.withMaxAttempts(3)
			.withRetry(new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(10), 1.0, 0.0)));
		ShippingListener listener = new ShippingListener();
		for (Method method : List.of(ShippingListener.class.getDeclaredMethod("shipped", OrderShipped.class, Job.class),
				ShippingListener.class.getDeclaredMethod("shippedWithCarrier", OrderShippedWithCarrier.class,
						Job.class))) {
			fixture.handlers()
				.register(new JobListenerMethodAdapter(listener, method, method.getAnnotation(JobListener.class),
						fixture.jsonMapper()));
		}
		logs.start();
		((Logger) LoggerFactory.getLogger("dev.pgqueue")).addAppender(logs);
		fixture.poller("orders").start();
	}

	@AfterAll
	static void tearDown() {
		((Logger) LoggerFactory.getLogger("dev.pgqueue")).detachAppender(logs);
		fixture.close();
	}

	@Test
	void aPayloadOfAnotherTypeOrLackingARequiredPropertyFailsAtOnceWhileTheJobsThatFitNextToItComplete() {
		List<UUID> ids = fixture.client()
			.enqueueAll(List.of(JobRequest.of("order.shipped", new OrderPlaced(42, 9.5)),
					JobRequest.of("order.shipped.carrier", Map.of("trackingNumber", "1Z996")),
					JobRequest.of("order.shipped", new OrderShipped("1Z999", SHIPPED_AT)),
					JobRequest.of("order.shipped",
							Map.of("trackingNumber", "1Z998", "shippedAt", SHIPPED_AT, "carrier", "ups")),
					JobRequest.of("order.shipped.carrier", new OrderShipped("1Z997", SHIPPED_AT))));
		UUID otherType = ids.get(0);
		UUID lacking = ids.get(1);

		await().atMost(WAIT)
			.until(() -> "failed".equals(state(otherType)) && "failed".equals(state(lacking))
					&& ids.subList(2, 5).stream().allMatch((id) -> "completed".equals(state(id))));

		// jsonb keeps an object's shorter keys first, so the payload's names come in that order.
		String otherTypeError = PayloadMappingException.class.getName() + ": Payload of job " + otherType
				+ " (kind 'order.shipped', queue 'orders') does not map to " + OrderShipped.class.getName()
				+ " taken by " + ShippingListener.class.getName() + ".shipped(OrderShipped, Job): it shares no "
				+ "property with the type. The payload has [total, orderId]; the type reads [trackingNumber, "
				+ "shippedAt]. Fix the producer or the payload type; retrying cannot help.";
		assertThat(fixture.row(otherType)).containsEntry("attempt", 1);
		assertThat((String) fixture.row(otherType).get("last_error")).startsWith(otherTypeError);
		assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage)
			.contains("Job " + otherType + " of kind 'order.shipped' in queue 'orders' failed for good on attempt 1 "
					+ "of 3: " + otherTypeError);
		assertThat(fixture.row(lacking)).containsEntry("attempt", 1);
		assertThat((String) fixture.row(lacking).get("last_error"))
			.contains("Payload of job " + lacking + " (kind 'order.shipped.carrier', queue 'orders') does not map to "
					+ OrderShippedWithCarrier.class.getName())
			.contains("it has no value for [shippedAt], which the type requires. The payload has [trackingNumber]; "
					+ "the type reads [trackingNumber, shippedAt, carrier] and requires [trackingNumber, shippedAt].");
		assertThat(received).doesNotContainKeys(otherType, lacking);
		assertThat(received.get(ids.get(2))).isEqualTo(new OrderShipped("1Z999", SHIPPED_AT));
		assertThat(received.get(ids.get(3))).isEqualTo(new OrderShipped("1Z998", SHIPPED_AT));
		assertThat(received.get(ids.get(4))).isEqualTo(new OrderShippedWithCarrier("1Z997", SHIPPED_AT, null));
	}

	private static @Nullable Object state(UUID id) {
		return fixture.row(id).get("state");
	}

}
