package dev.pgqueue.autoconfigure.dashboard;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.pgqueue.engine.QueueEngine;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link QueueSummaries}: the jobs finished in the last minute as the admin counts them,
 * from the first page on, and counts shared by pages that ask close together. The count itself, on
 * the database, is {@code JobAdminTests}'.
 */
class QueueSummariesTests {

	private final RecordingJobAdmin admin = new RecordingJobAdmin();

	private final AtomicLong nanos = new AtomicLong();

	private final QueueSummaries summaries;

	QueueSummariesTests() {
		DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
		ObjectProvider<QueueEngine> engine = beans.getBeanProvider(QueueEngine.class);
		this.summaries = new QueueSummaries(this.admin, engine, Duration.ofSeconds(2), this.nanos::get);
	}

	@Test
	void showsTheJobsFinishedInTheLastMinuteOnTheFirstPage() {
		this.admin.counts = RecordingJobAdmin.finished("mail", 6, 0);
		this.admin.finishedLastMinute = Map.of("mail", 6L);

		assertThat(this.summaries.read()).singleElement().satisfies((queue) -> {
			assertThat(queue.finishedLastMinute()).isEqualTo(6);
			assertThat(queue.failed()).isZero();
			assertThat(queue.mode()).isNull();
		});
	}

	@Test
	void showsZeroForAQueueWithNothingFinishedInTheLastMinute() {
		this.admin.counts = RecordingJobAdmin.finished("mail", 500, 0);

		assertThat(this.summaries.read().get(0).finishedLastMinute()).isZero();
	}

	@Test
	void sharesACountAmongPagesThatAskWithinTheGap() {
		this.admin.counts = RecordingJobAdmin.finished("mail", 1, 0);
		this.admin.finishedLastMinute = Map.of("mail", 1L);
		this.summaries.read();
		advance(Duration.ofMillis(1500));
		this.admin.finishedLastMinute = Map.of("mail", 9L);

		assertThat(this.summaries.read().get(0).finishedLastMinute()).isEqualTo(1);
		assertThat(this.admin.countCalls).hasValue(1);
		advance(Duration.ofMillis(500));
		assertThat(this.summaries.read().get(0).finishedLastMinute()).isEqualTo(9);
		assertThat(this.admin.countCalls).hasValue(2);
	}

	private void advance(Duration duration) {
		this.nanos.addAndGet(duration.toNanos());
	}

}
