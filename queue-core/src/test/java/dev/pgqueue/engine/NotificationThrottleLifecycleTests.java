package dev.pgqueue.engine;

import java.time.Duration;
import java.util.List;

import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.schema.SchemaName;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The notification throttle as an engine service: ready once made, stopped by {@code stop()} (every
 * enqueue then notifies on its own), and throttling again after {@code start()}.
 */
class NotificationThrottleLifecycleTests {

	/** Never reached: nothing here sends a notification. */
	private final JobRepository repository = new JobRepository(new JdbcTemplate(), SchemaName.of("unused"));

	@Test
	void throttlesOnceMadeNotWhileStoppedAndAgainOnceStarted() {
		NotificationThrottle throttle = new NotificationThrottle(this.repository, Duration.ofMinutes(5));
		assertThat(throttle.isRunning()).isTrue();
		assertThat(throttle.tryNotifyNow(List.of("orders"))).isTrue();
		assertThat(throttle.tryNotifyNow(List.of("orders"))).as("within the interval").isFalse();
		throttle.stop();
		assertThat(throttle.isRunning()).isFalse();
		assertThat(throttle.tryNotifyNow(List.of("orders"))).as("stopped: every enqueue notifies").isTrue();
		throttle.start();
		assertThat(throttle.isRunning()).isTrue();
		assertThat(throttle.tryNotifyNow(List.of("orders"))).as("started again, within the interval").isFalse();
		throttle.stop();
	}

}
