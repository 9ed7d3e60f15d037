package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The p99 of {@link PollCycleWindow}, on a clock the test sets.
 */
class PollCycleWindowTests {

	private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

	private static final long NOW = 1_000 * SECOND;

	private final PollCycleWindow window = new PollCycleWindow();

	@Test
	void isZeroBeforeAnyClaim() {
		assertThat(this.window.p99(NOW)).isEqualTo(Duration.ZERO);
	}

	@Test
	void isTheSmallestDurationThatNinetyNinePercentOfRecentClaimsDidNotExceed() {
		for (int millis = 1; millis <= 1_000; millis++) {
			this.window.record(NOW - SECOND, TimeUnit.MILLISECONDS.toNanos(millis));
		}
		assertThat(this.window.p99(NOW)).isEqualTo(Duration.ofMillis(990));
	}

	@Test
	void isTheSlowestClaimWhenThereAreFewerThanAHundred() {
		for (int i = 0; i < 20; i++) {
			this.window.record(NOW, TimeUnit.MILLISECONDS.toNanos(2));
		}
		this.window.record(NOW, TimeUnit.MILLISECONDS.toNanos(700));
		assertThat(this.window.p99(NOW)).isEqualTo(Duration.ofMillis(700));
	}

	@Test
	void leavesOutClaimsThatEndedOverAMinuteAgo() {
		this.window.record(NOW - PollCycleWindow.MAX_AGE.toNanos() - 1, TimeUnit.MILLISECONDS.toNanos(900));
		this.window.record(NOW - SECOND, TimeUnit.MILLISECONDS.toNanos(3));
		assertThat(this.window.p99(NOW)).isEqualTo(Duration.ofMillis(3));
	}

	@Test
	void keepsOnlyTheLatestClaims() {
		for (int i = 0; i < PollCycleWindow.CAPACITY; i++) {
			this.window.record(NOW, TimeUnit.MILLISECONDS.toNanos(800));
		}
		for (int i = 0; i < PollCycleWindow.CAPACITY; i++) {
			this.window.record(NOW, TimeUnit.MILLISECONDS.toNanos(1));
		}
		assertThat(this.window.p99(NOW)).isEqualTo(Duration.ofMillis(1));
	}

	@Test
	void takesRecordingsFromManyThreadsAtOnce() throws InterruptedException {
		int threads = 4;
		CountDownLatch done = new CountDownLatch(threads);
		for (int t = 0; t < threads; t++) {
			new Thread(() -> {
				for (int i = 0; i < 10_000; i++) {
					this.window.record(NOW, TimeUnit.MILLISECONDS.toNanos(5));
				}
				done.countDown();
			}).start();
		}
		assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
		assertThat(this.window.p99(NOW)).isEqualTo(Duration.ofMillis(5));
	}

}
