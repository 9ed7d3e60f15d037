package dev.pgqueue;

import java.time.Duration;
import java.util.List;
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
 * A sweep that terminates every open batch while their listeners are about to write: each listener's
 * own statement meets the terminated backend, the pool closes the connection, and the rollback to the
 * batch's savepoint then fails with nothing but "Connection is closed". That is still one lost
 * connection, retried at once, not an error that pauses claims (which, under a sweep twice a second
 * on a busy machine, cost a fifth of the offered rate).
 */
class KilledListenerStatementsTests {

	private static final String QUEUE = "swept_writes";

	private static final int CONCURRENCY = 4;

	private static final int BATCH_SIZE = 2;

	private static final int FIRST = CONCURRENCY * BATCH_SIZE;

	private static final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private static final CountDownLatch release = new CountDownLatch(1);

	private static final AtomicInteger blocked = new AtomicInteger();

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("swept_writes");
		fixture.metrics(new MicrometerQueueMetrics(registry, List.of(QUEUE)));
		fixture.configure(QueueSettings.defaults(QUEUE)
			.withConcurrency(CONCURRENCY)
			.withBatchSize(BATCH_SIZE)
			.withMaxBatchSize(BATCH_SIZE)
			.withPollInterval(Duration.ofMillis(50)));
		fixture.jdbc().execute("CREATE TABLE swept_ledger (n int PRIMARY KEY)");
		fixture.handle("swept.write", QUEUE, (job) -> {
			int n = Integer.parseInt(job.payload());
			if (n < FIRST && release.getCount() > 0) {
				blocked.incrementAndGet();
				release.await(30, TimeUnit.SECONDS);
			}
			// On the batch's connection: after the sweep, this is the statement that finds it gone.
			fixture.jdbc().update("INSERT INTO swept_ledger (n) VALUES (?)", n);
		});
	}

	@AfterAll
	static void tearDown() {
		release.countDown();
		fixture.close();
	}

	@Test
	void aListenerStatementOnATerminatedBackendCountsAsALostConnection() throws Exception {
		enqueue(0, FIRST);
		JobPoller poller = fixture.poller(QUEUE);
		poller.start();
		try {
			await().atMost(Duration.ofSeconds(30)).until(() -> blocked.get() == CONCURRENCY);
			assertThat(fixture.terminateBackendsLockingJobs()).as("backends of the open batches").isEqualTo(CONCURRENCY);
			release.countDown();
			enqueue(FIRST, BATCH_SIZE);
			await().atMost(Duration.ofSeconds(30)).until(() -> ledger() == FIRST + BATCH_SIZE);

			Timer connection = registry.find("pgqueue.claims.paused").tags("queue", QUEUE, "cause", "connection").timer();
			assertThat(connection).as("the lost connections were reported as such").isNotNull();
			assertThat(connection.count()).as("failures that counted: the sweep is one").isEqualTo(1);
			assertThat(connection.totalTime(TimeUnit.MILLISECONDS)).as("claims paused for").isZero();
			assertThat(registry.find("pgqueue.claims.paused").tags("cause", "error").timer())
				.as("a failed rollback on the closed connection taken for an error").isNull();
			assertThat(fixture.jdbc().queryForObject("SELECT max(attempt) FROM " + fixture.allJobs(), Integer.class))
				.as("no attempt used by the lost batches").isEqualTo(1);
		}
		finally {
			release.countDown();
			poller.stop();
		}
	}

	private static void enqueue(int from, int count) {
		fixture.client()
			.enqueueAll(IntStream.range(from, from + count).mapToObj((i) -> JobRequest.of("swept.write", i)).toList());
	}

	private static long ledger() {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM swept_ledger", Long.class);
	}

}
