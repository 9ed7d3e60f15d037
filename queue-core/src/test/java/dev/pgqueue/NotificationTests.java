package dev.pgqueue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.metrics.QueueMetrics;
import org.junit.jupiter.api.AfterAll;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A poller waiting out a long poll interval is woken by the notification of a committed enqueue.
 */
class NotificationTests {

	private static final Duration LONG_POLL_INTERVAL = Duration.ofMinutes(5);

	private static final WorkerSettings WORKERS = new WorkerSettings(Duration.ofSeconds(5), false, false);

	private static QueueFixture fixture;

	private static final Map<String, Long> handledAt = new ConcurrentHashMap<>();

	private static final AtomicInteger polls = new AtomicInteger();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("notify");
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
		// The poller's application listens; another application enqueues, so only its notification
		// can wake the poller.
		QueueEngine listening = listening(countingPolls);
		QueueEngine enqueuing = enqueuing();
		listening.start();
		try {
			// The first, empty poll happens at start; after it the poller would sleep for minutes.
			await().atMost(Duration.ofSeconds(10)).until(() -> polls.get() >= 1);
			int pollsBefore = polls.get();
			JobClient client = enqueuing.client();
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
			listening.close();
			enqueuing.close();
		}
	}

	@Test
	void promotedScheduledJobWakesItsQueue() {
		QueueEngine listening = listening(QueueMetrics.NONE);
		QueueEngine enqueuing = enqueuing();
		listening.start();
		try {
			JobClient client = enqueuing.client();
			client.enqueue(JobRequest.of("wake.me", "later").delay(Duration.ofMillis(300)));
			await().atMost(Duration.ofSeconds(10)).until(() -> {
				QueueFixture.Maintenance.of(listening).promote();
				return handledAt.containsKey("\"later\"");
			});
			assertThat(fixture.countByState()).doesNotContainKeys("scheduled", "available");
		}
		finally {
			listening.close();
			enqueuing.close();
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
		QueueEngine engine = fixture.engineBuilder()
			.settings(fixture.engineSettings().withWorkers(WORKERS))
			.metrics(countingPolls)
			.build();
		JobPoller poller = EngineInternals.of(engine).newPoller("wake", null);
		JobClient client = engine.client();
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
			engine.close();
		}
	}

	@Test
	void anEnqueueNotifiesExactlyTheQueuesThatReceivedJobsDueNow() throws Exception {
		QueueEngine enqueuing = enqueuing();
		String channel = fixture.repository().channel();
		try (Connection listener = fixture.dataSource().getConnection()) {
			listener.setAutoCommit(true);
			try (Statement statement = listener.createStatement()) {
				statement.execute("LISTEN \"" + channel + "\"");
			}
			JobClient client = enqueuing.client();
			// Jobs that use every column, and plain ones, which go in through the narrower insert; a
			// scheduled job's queue is not notified, wherever it sits in the call.
			client.enqueueAll(List.of(JobRequest.of("wake.later", "1").queue("n-scheduled").delay(Duration.ofHours(1)),
					JobRequest.of("wake.tagged", "2").queue("n-tagged").tags("t"),
					JobRequest.of("wake.runat", "3").queue("n-past").runAt(Instant.now().minusSeconds(60))));
			assertThat(notifiedQueues(listener)).containsExactlyInAnyOrder("n-tagged", "n-past");
			client.enqueueAll(List.of(JobRequest.of("wake.plain", "4").queue("n-plain-a"),
					JobRequest.of("wake.plain", "5").queue("n-plain-b"), JobRequest.of("wake.plain", "6").queue("n-plain-a")));
			assertThat(notifiedQueues(listener)).containsExactlyInAnyOrder("n-plain-a", "n-plain-b");
			client.enqueueAll(List.of(JobRequest.of("wake.later", "7").queue("n-scheduled").delay(Duration.ofHours(1))));
			client.enqueue(JobRequest.of("wake.later", "8").queue("n-scheduled").delay(Duration.ofHours(1)));
			client.enqueue(JobRequest.of("wake.one", "9").queue("n-one"));
			assertThat(notifiedQueues(listener)).containsExactly("n-one");
			// Rolled back: the notifications go with it.
			fixture.transactionTemplate().executeWithoutResult((status) -> {
				client.enqueueAll(List.of(JobRequest.of("wake.plain", "10").queue("n-rolled-back")));
				status.setRollbackOnly();
			});
			assertThat(notifiedQueues(listener)).isEmpty();
			assertThat(fixture.jdbc()
				.queryForList("SELECT queue || ':' || state FROM " + fixture.table() + " WHERE queue LIKE 'n-%' ORDER BY id",
						String.class)).containsExactly("n-scheduled:scheduled", "n-tagged:available", "n-past:available",
								"n-plain-a:available", "n-plain-b:available", "n-plain-a:available",
								"n-scheduled:scheduled", "n-scheduled:scheduled", "n-one:available");
		}
		finally {
			enqueuing.close();
		}
	}

	/** The queues notified on the listener's connection since the last call, waiting half a second for them. */
	private static List<String> notifiedQueues(Connection listener) throws SQLException {
		PGConnection pg = listener.unwrap(PGConnection.class);
		List<String> queues = new ArrayList<>();
		long until = System.nanoTime() + Duration.ofMillis(500).toNanos();
		while (System.nanoTime() < until) {
			PGNotification[] notifications = pg.getNotifications(50);
			if (notifications != null) {
				for (PGNotification notification : notifications) {
					queues.add(notification.getParameter());
				}
			}
		}
		return queues;
	}

	/** The application whose poller of the queue waits out its interval unless notified. */
	private static QueueEngine listening(QueueMetrics metrics) {
		return fixture.engineBuilder()
			.settings(fixture.engineSettings()
				.withWorkers(WORKERS)
				.withNotifications(true, EngineSettings.DEFAULT_NOTIFY_INTERVAL))
			.metrics(metrics)
			.build();
	}

	/** Another application, which only enqueues, notifying on every enqueue. */
	private static QueueEngine enqueuing() {
		return fixture.engineBuilder()
			.settings(fixture.engineSettings().withNotifications(true, Duration.ZERO))
			.processing(false)
			.build();
	}

}
