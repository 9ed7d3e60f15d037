package dev.pgqueue.listener;

import java.lang.reflect.Method;
import java.time.Duration;

import dev.pgqueue.InvalidJobListenerException;
import dev.pgqueue.JobListener;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @JobListener(maxRunning, timeout)} reach the registry, and {@code pgqueue.kinds.<kind>.*}
 * overrides beat them.
 */
class JobListenerMethodAdapterLimitsTests {

	private final Listeners listeners = new Listeners();

	@Test
	void theAnnotationsLimitsReachTheRegistry() throws Exception {
		JobHandlerRegistry registry = new JobHandlerRegistry();
		registry.register(adapter("resize"));
		registry.register(adapter("plain"));

		assertThat(registry.maxRunningOf("image.resize")).isEqualTo(10);
		assertThat(registry.timeoutOf("image.resize")).isEqualTo(Duration.ofSeconds(30));
		assertThat(registry.maxRunningOf("plain")).isZero();
		assertThat(registry.timeoutOf("plain")).isNull();
	}

	@Test
	void aKindsSettingsBeatItsAnnotation() throws Exception {
		JobHandlerRegistry registry = new JobHandlerRegistry();
		registry.register(adapter("resize"));
		registry.override("image.resize", 3, Duration.ofMinutes(2));

		assertThat(registry.maxRunningOf("image.resize")).isEqualTo(3);
		assertThat(registry.timeoutOf("image.resize")).isEqualTo(Duration.ofMinutes(2));
	}

	@Test
	void aNegativeMaxRunningFailsNamingTheMethod() {
		assertThatExceptionOfType(InvalidJobListenerException.class).isThrownBy(() -> adapter("negative"))
			.withMessageContaining("Listeners.negative")
			.withMessageContaining("maxRunning -1");
	}

	private JobListenerMethodAdapter adapter(String name) throws NoSuchMethodException {
		Method method = Listeners.class.getDeclaredMethod(name, String.class);
		return new JobListenerMethodAdapter(this.listeners, method, method.getAnnotation(JobListener.class),
				JsonMapper.builder().build());
	}

	static class Listeners {

		@JobListener(kind = "image.resize", maxRunning = 10, timeout = "30s")
		void resize(String payload) {
		}

		@JobListener(kind = "plain")
		void plain(String payload) {
		}

		@JobListener(kind = "negative", maxRunning = -1)
		void negative(String payload) {
		}

	}

}
