package dev.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.JdbcJobClient;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.JobPollerFactory;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.NotificationListener;
import dev.pgqueue.engine.poll.PollerWakeUps;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.SchemaName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A poller waiting out a long poll interval is woken by the notification of a committed enqueue.
 */
class NotificationTests {

	private static final Duration LONG_POLL_INTERVAL = Duration.ofMinutes(5);

	private static QueueFixture fixture;

	private static JobRepository notifyingRepository;

	private static final Map<String, Long> handledAt = new ConcurrentHashMap<>();

	private static final AtomicInteger polls = new AtomicInteger();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("notify");
		notifyingRepository = new JobRepository(new JdbcTemplate(fixture.dataSource()),
				SchemaName.of(fixture.schema().name()), true);
		fixture.configure(QueueSettings.defaults("wake").withPollInterval(LONG_POLL_INTERVAL));
		fixture.handle("wake.me", "wake", (job) -> handledAt.put(job.payload(), System.nanoTime()));
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void committedEnqueueWakesAnIdlePollerLongBeforeItsPollInterval() {
		QueueMetrics countingPolls = new QueueMetrics() {
			@Override
			public void pollCycle(String queue, long nanos, int claimed) {
				polls.incrementAndGet();
			}
		};
		JobPoller poller = new JobPollerFactory(fixture.catalog(), notifyingRepository,
				new JobRunner(fixture.handlers(), QueueMetrics.NONE), fixture.transactionTemplate(), countingPolls,
				new WorkerSettings(Duration.ofSeconds(5), false, false))
			.create("wake", fixture.handlers().kindsOf("wake"));
		NotificationListener listener = new NotificationListener(fixture.dataSource(), notifyingRepository.channel());
		listener.register(poller);
		listener.start();
		poller.start();
		try {
			// The first, empty poll happens at start; after it the poller would sleep for minutes.
			await().atMost(Duration.ofSeconds(10)).until(() -> polls.get() >= 1);
			int pollsBefore = polls.get();
			JdbcJobClient client = new JdbcJobClient(notifyingRepository, fixture.jsonMapper(), fixture.catalog(),
					fixture.handlers());
			long enqueuedAt = System.nanoTime();
			fixture.transactionTemplate().executeWithoutResult((status) -> client.enqueue("wake.me", "first"));
			await().atMost(Duration.ofSeconds(10)).until(() -> handledAt.containsKey("\"first\""));
			assertThat(Duration.ofNanos(handledAt.get("\"first\"") - enqueuedAt)).isLessThan(Duration.ofSeconds(5));
			assertThat(polls.get()).isGreaterThan(pollsBefore);

			// Many jobs in one call: one notification for the queue, every job handled.
			client.enqueueAll(List.of(JobRequest.of("wake.me", "a"), JobRequest.of("wake.me", "b")));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> handledAt.containsKey("\"a\"") && handledAt.containsKey("\"b\""));
		}
		finally {
			poller.stop();
			listener.stop();
		}
	}

	@Test
	void promotedScheduledJobWakesItsQueue() {
		JobPoller poller = new JobPollerFactory(fixture.catalog(), notifyingRepository,
				new JobRunner(fixture.handlers(), QueueMetrics.NONE), fixture.transactionTemplate(), QueueMetrics.NONE,
				new WorkerSettings(Duration.ofSeconds(5), false, false))
			.create("wake", fixture.handlers().kindsOf("wake"));
		NotificationListener listener = new NotificationListener(fixture.dataSource(), notifyingRepository.channel());
		listener.register(poller);
		listener.start();
		poller.start();
		try {
			JdbcJobClient client = new JdbcJobClient(notifyingRepository, fixture.jsonMapper(), fixture.catalog(),
					fixture.handlers());
			client.enqueue(JobRequest.of("wake.me", "later").delay(Duration.ofMillis(300)));
			await().atMost(Duration.ofSeconds(10)).until(() -> {
				new MaintenanceRepository(new JdbcTemplate(fixture.dataSource()),
						SchemaName.of(fixture.schema().name()), true).promoteDue(100);
				return handledAt.containsKey("\"later\"");
			});
			assertThat(fixture.countByState()).doesNotContainKeys("scheduled", "available");
		}
		finally {
			poller.stop();
			listener.stop();
		}
	}

	@Test
	void enqueueInThisApplicationWakesItsPollerAfterCommitWithoutNotifications() {
		AtomicInteger wakePolls = new AtomicInteger();
		QueueMetrics countingPolls = new QueueMetrics() {
			@Override
			public void pollCycle(String queue, long nanos, int claimed) {
				wakePolls.incrementAndGet();
			}
		};
		// No notifications at all: only the client's in-process wake-up can beat the 5-minute interval.
		JobPoller poller = new JobPollerFactory(fixture.catalog(), fixture.repository(),
				new JobRunner(fixture.handlers(), QueueMetrics.NONE), fixture.transactionTemplate(), countingPolls,
				new WorkerSettings(Duration.ofSeconds(5), false, false))
			.create("wake", fixture.handlers().kindsOf("wake"));
		PollerWakeUps wakeUps = new PollerWakeUps();
		wakeUps.register(poller);
		JdbcJobClient client = new JdbcJobClient(fixture.repository(), fixture.jsonMapper(), fixture.catalog(),
				fixture.handlers(), JdbcJobClient.DEFAULT_MAX_PAYLOAD_BYTES, wakeUps, null);
		poller.start();
		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> wakePolls.get() >= 1);
			int pollsBefore = wakePolls.get();
			// Rolled back: no wake-up, so no poll, however long we wait (here half a second).
			fixture.transactionTemplate().executeWithoutResult((status) -> {
				client.enqueue("wake.me", "rolled back");
				status.setRollbackOnly();
			});
			await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
				.until(() -> wakePolls.get() == pollsBefore);

			// Committed: woken once the transaction commits, not before (the job is invisible until then).
			fixture.transactionTemplate().executeWithoutResult((status) -> {
				client.enqueue("wake.me", "local one");
				client.enqueueAll(List.of(JobRequest.of("wake.me", "local two")));
				assertThat(wakePolls.get()).isEqualTo(pollsBefore);
			});
			await().atMost(Duration.ofSeconds(10))
				.until(() -> handledAt.containsKey("\"local one\"") && handledAt.containsKey("\"local two\""));

			// Outside a transaction the insert has committed when enqueue returns.
			client.enqueue("wake.me", "autocommit");
			await().atMost(Duration.ofSeconds(10)).until(() -> handledAt.containsKey("\"autocommit\""));
			assertThat(handledAt).doesNotContainKey("\"rolled back\"");
		}
		finally {
			poller.stop();
		}
	}

}
