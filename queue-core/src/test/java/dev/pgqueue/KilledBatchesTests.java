package dev.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.MicrometerQueueMetrics;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A sweep that terminates every open batch of a transactional queue at once (an administrator, a
 * failover, a connection-killing proxy) is one failure, not one per batch: the queue claims again at
 * once, on fresh connections, instead of pausing as if the database had failed eight times in a row.
 */
class KilledBatchesTests {

	private static final String QUEUE = "swept";

	private static final int CONCURRENCY = 8;

	private static final int BATCH_SIZE = 3;

	private static final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private static final CountDownLatch release = new CountDownLatch(1);

	private static final AtomicInteger blocked = new AtomicInteger();

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("swept");
		fixture.metrics(new MicrometerQueueMetrics(registry, List.of(QUEUE)));
		fixture.configure(QueueSettings.defaults(QUEUE)
			.withConcurrency(CONCURRENCY)
			.withBatchSize(BATCH_SIZE)
			.withMaxBatchSize(BATCH_SIZE)
			.withPollInterval(Duration.ofMillis(50)));
		fixture.handle("swept.wait", QUEUE, (job) -> {
			if (Integer.parseInt(job.payload()) < CONCURRENCY * BATCH_SIZE && release.getCount() > 0) {
				blocked.incrementAndGet();
				release.await(30, TimeUnit.SECONDS);
			}
		});
	}

	@AfterAll
	static void tearDown() {
		release.countDown();
		fixture.close();
	}

	@Test
	void everyOpenBatchTerminatedAtOnceCountsAsOneLostConnectionAndClaimsGoOnAtOnce() throws Exception {
		enqueue(0, CONCURRENCY * BATCH_SIZE);
		JobPoller poller = fixture.poller(QUEUE);
		poller.start();
		try {
			await().atMost(Duration.ofSeconds(30)).until(() -> blocked.get() == CONCURRENCY);
			int terminated = fixture.terminateBackendsLockingJobs();
			assertThat(terminated).as("backends of the open batches").isEqualTo(CONCURRENCY);
			release.countDown();
			long swept = System.nanoTime();

			// Jobs enqueued after the sweep must not wait out a pause: claims go on at once.
			List<UUID> later = enqueue(CONCURRENCY * BATCH_SIZE, BATCH_SIZE);
			await().atMost(Duration.ofSeconds(30)).until(() -> completed() == CONCURRENCY * BATCH_SIZE + BATCH_SIZE);
			Duration drained = Duration.ofNanos(System.nanoTime() - swept);

			Timer connection = registry.find("pgqueue.claims.paused").tags("queue", QUEUE, "cause", "connection").timer();
			assertThat(connection).as("the lost connections were reported").isNotNull();
			assertThat(connection.count()).as("failures that counted: the sweep is one").isEqualTo(1);
			assertThat(connection.totalTime(TimeUnit.MILLISECONDS)).as("claims paused for").isZero();
			assertThat(registry.find("pgqueue.claims.paused").tags("cause", "error").timer()).isNull();
			assertThat(drained).as("every job, the killed batches' and the later ones, done after the sweep")
				.isLessThan(Duration.ofSeconds(5));
			assertThat(later).hasSize(BATCH_SIZE);
		}
		finally {
			release.countDown();
			poller.stop();
		}
	}

	private static List<UUID> enqueue(int from, int count) {
		return fixture.client()
			.enqueueAll(IntStream.range(from, from + count).mapToObj((i) -> JobRequest.of("swept.wait", i)).toList());
	}

	private static long completed() {
		return fixture.jdbc()
			.queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE state = 'completed'", Long.class);
	}

}
