package dev.pgqueue.listener;

import java.lang.reflect.Method;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import dev.pgqueue.Job;
import dev.pgqueue.JobListener;
import org.jspecify.annotations.NullMarked;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A listener is not run with a payload written for another type, and is run with one written by a
 * producer a version ahead.
 */
class JobListenerMethodAdapterPayloadTests {

	private final Listeners listeners = new Listeners();

	@Test
	void aPayloadOfAnotherTypeFailsTheJobBeforeTheListenerRunsNamingWhatToFix() throws Exception {
		JobListenerMethodAdapter adapter = adapter();
		Job job = job("{\"orderId\":42,\"total\":9.5}");

		assertThatExceptionOfType(JobListenerMethodAdapter.PayloadMappingException.class)
			.isThrownBy(() -> adapter.handle(job))
			.withMessage("Payload of job " + job.id() + " (kind 'order.shipped', queue 'orders') does not map to "
					+ OrderShipped.class.getName() + " taken by " + Listeners.class.getName()
					+ ".shipped(OrderShipped, Job): it shares no property with the type and has no value for "
					+ "[trackingNumber, shippedAt], which the type requires. The payload has [orderId, total]; the "
					+ "type reads [trackingNumber, shippedAt] and requires [trackingNumber, shippedAt]. Fix the "
					+ "producer or the payload type; retrying cannot help.");
		assertThat(this.listeners.shipped).isEmpty();
	}

	@Test
	void aPayloadFromAProducerAVersionAheadReachesTheListener() throws Throwable {
		adapter().handle(
				job("{\"trackingNumber\":\"1Z999\",\"shippedAt\":\"2026-11-25T10:15:30Z\",\"carrier\":\"ups\"}"));

		assertThat(this.listeners.shipped)
			.containsExactly(new OrderShipped("1Z999", Instant.parse("2026-11-25T10:15:30Z")));
	}

	private JobListenerMethodAdapter adapter() throws NoSuchMethodException {
		Method method = Listeners.class.getDeclaredMethod("shipped", OrderShipped.class, Job.class);
		return new JobListenerMethodAdapter(this.listeners, method, method.getAnnotation(JobListener.class),
				JsonMapper.builder().build());
	}

	private static Job job(String payload) {
		return new Job(UUID.randomUUID(), "order.shipped", "orders", 1, 3, 0, payload, Instant.now(), Instant.now());
	}

	@NullMarked
	record OrderShipped(String trackingNumber, Instant shippedAt) {
	}

	static class Listeners {

		final List<OrderShipped> shipped = new ArrayList<>();

		@JobListener(kind = "order.shipped", queue = "orders")
		void shipped(OrderShipped shipped, Job job) {
			this.shipped.add(shipped);
		}

	}

}
