package dev.pgqueue.listener;

import java.lang.reflect.Method;
import java.time.Instant;
import java.util.UUID;

import dev.pgqueue.ExternalEffect;
import dev.pgqueue.Job;
import dev.pgqueue.JobListener;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** What a listener method returns reaches the engine only when it is an {@link ExternalEffect}. */
class JobListenerMethodAdapterEffectTests {

	private static final Job JOB = new Job(UUID.randomUUID(), "k", "q", 1, 3, 0, "\"hello\"", Instant.now(),
			Instant.now());

	private final Listeners listeners = new Listeners();

	@Test
	void handsOnTheEffectAMethodReturnsWithoutRunningIt() throws Throwable {
		JobListenerMethodAdapter adapter = adapter("pay");
		ExternalEffect effect = adapter.handleForEffect(JOB);
		assertThat(adapter.hasExternalEffect()).isTrue();
		assertThat(this.listeners.ran).isZero();
		effect.run();
		assertThat(this.listeners.ran).isOne();
	}

	@Test
	void ignoresWhatOtherMethodsReturnAsBefore() throws Throwable {
		for (String name : new String[] { "plain", "describe" }) {
			JobListenerMethodAdapter adapter = adapter(name);
			assertThat(adapter.hasExternalEffect()).as(name).isFalse();
			assertThat(adapter.handleForEffect(JOB)).as(name).isNull();
		}
		assertThat(this.listeners.payloads).containsExactly("hello", "hello");
	}

	private JobListenerMethodAdapter adapter(String name) throws NoSuchMethodException {
		Method method = Listeners.class.getDeclaredMethod(name, String.class);
		return new JobListenerMethodAdapter(this.listeners, method, method.getAnnotation(JobListener.class),
				JsonMapper.builder().build());
	}

	static class Listeners {

		int ran;

		final java.util.List<String> payloads = new java.util.ArrayList<>();

		@JobListener(kind = "pay")
		ExternalEffect pay(String payload) {
			return () -> this.ran++;
		}

		@JobListener(kind = "plain")
		void plain(String payload) {
			this.payloads.add(payload);
		}

		@JobListener(kind = "describe")
		String describe(String payload) {
			this.payloads.add(payload);
			return "not an effect";
		}

	}

}
