package dev.pgqueue.autoconfigure.dashboard;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.pgqueue.engine.QueueEngine;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link QueueSummaries}: the rate from counts of the finished jobs, and counts shared
 * by pages that ask close together.
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
	void hasNoRateUntilASecondReading() {
		this.admin.counts = RecordingJobAdmin.finished("mail", 10, 0);

		assertThat(this.summaries.read()).singleElement().satisfies((queue) -> {
			assertThat(queue.finishedPerSecond()).isNull();
			assertThat(queue.failed()).isZero();
			assertThat(queue.mode()).isNull();
		});
	}

	@Test
	void ratesJobsCompletedOrFailedSinceTheOldestReadingOfTheLastMinute() {
		this.admin.counts = RecordingJobAdmin.finished("mail", 10, 0);
		this.summaries.read();
		advance(Duration.ofSeconds(5));
		this.admin.counts = RecordingJobAdmin.finished("mail", 20, 5);
		assertThat(this.summaries.read().get(0).finishedPerSecond()).isEqualTo(3.0);

		advance(Duration.ofSeconds(5));
		this.admin.counts = RecordingJobAdmin.finished("mail", 30, 5);
		assertThat(this.summaries.read().get(0).finishedPerSecond()).isEqualTo(2.5);
	}

	@Test
	void forgetsReadingsOlderThanAMinute() {
		this.admin.counts = RecordingJobAdmin.finished("mail", 0, 0);
		this.summaries.read();
		advance(Duration.ofSeconds(50));
		this.admin.counts = RecordingJobAdmin.finished("mail", 1000, 0);
		this.summaries.read();
		advance(Duration.ofSeconds(20));
		this.admin.counts = RecordingJobAdmin.finished("mail", 1040, 0);

		assertThat(this.summaries.read().get(0).finishedPerSecond()).isEqualTo(2.0);
	}

	@Test
	void sharesACountAmongPagesThatAskWithinTheGap() {
		this.admin.counts = RecordingJobAdmin.finished("mail", 1, 0);
		this.summaries.read();
		advance(Duration.ofMillis(1500));
		this.admin.counts = RecordingJobAdmin.finished("mail", 9, 0);

		assertThat(this.summaries.read().get(0).finishedPerSecond()).isNull();
		assertThat(this.admin.countCalls).hasValue(1);
		advance(Duration.ofMillis(500));
		assertThat(this.summaries.read().get(0).finishedPerSecond()).isEqualTo(4.0);
		assertThat(this.admin.countCalls).hasValue(2);
	}

	@Test
	void showsNoRateWhilePruningMadeTheCountShrink() {
		this.admin.counts = RecordingJobAdmin.finished("mail", 500, 0);
		this.summaries.read();
		advance(Duration.ofSeconds(5));
		this.admin.counts = RecordingJobAdmin.finished("mail", 20, 0);

		assertThat(this.summaries.read().get(0).finishedPerSecond()).isNull();
	}

	private void advance(Duration duration) {
		this.nanos.addAndGet(duration.toNanos());
	}

}
