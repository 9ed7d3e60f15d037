package dev.pgqueue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.schema.SchemaName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * An application notifies a queue at most once per interval however fast it enqueues, and every
 * committed job is still announced by a notification sent after its commit.
 */
class NotificationThrottleTests {

	private static final Duration INTERVAL = Duration.ofSeconds(1);

	private static QueueFixture fixture;

	private Listening listening;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("throttle");
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@BeforeEach
	void listen() throws SQLException {
		this.listening = new Listening(fixture.dataSource().getConnection(), fixture.repository().channel());
	}

	@AfterEach
	void stopListening() throws Exception {
		this.listening.close();
	}

	@Test
	void aBurstOfCommitsIsAnnouncedOnceAtOnceAndOnceAfterTheInterval() {
		try (QueueEngine engine = notifying(INTERVAL)) {
			JobClient client = engine.client();
			long firstAt = System.nanoTime();
			for (int i = 0; i < 20; i++) {
				int n = i;
				fixture.transactionTemplate().executeWithoutResult((status) -> client.enqueue("burst.job", n));
			}
			long lastCommitAt = System.nanoTime();
			assertThat(Duration.ofNanos(lastCommitAt - firstAt)).as("the burst must fit in one interval")
				.isLessThan(INTERVAL);

			// The first insert notified at its commit; the other 19 left it to the throttle.
			await().atMost(Duration.ofSeconds(5)).until(() -> this.listening.received().size() >= 1);
			assertThat(this.listening.received()).hasSize(1);

			await().atMost(Duration.ofSeconds(5)).until(() -> this.listening.received().size() >= 2);
			Arrival trailing = this.listening.received().get(1);
			assertThat(trailing.queue()).isEqualTo(JobRequest.DEFAULT_QUEUE);
			assertThat(trailing.at()).as("sent after the last commit").isGreaterThan(lastCommitAt);
			assertThat(Duration.ofNanos(trailing.at() - firstAt)).isGreaterThanOrEqualTo(INTERVAL.minusMillis(50));
			await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(3))
				.until(() -> this.listening.received().size() == 2);
		}
	}

	@Test
	void aLateNotificationGoesInATransactionOfItsOwnThatLeavesTheSessionAsItWas() throws SQLException {
		// Its commit need not wait for the WAL to reach disk: a setting of that transaction alone,
		// refused inside a caller's transaction, whose commit it would change too.
		assertThatThrownBy(() -> fixture.transactionTemplate()
			.executeWithoutResult((status) -> fixture.repository().notifyQueuesAlone(List.of("alone"))))
			.isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("outside any transaction");
		try (Connection connection = fixture.dataSource().getConnection()) {
			SingleConnectionDataSource one = new SingleConnectionDataSource(connection, true);
			JdbcTemplate jdbc = new JdbcTemplate(one);
			JobRepository repository = new JobRepository(jdbc, SchemaName.of(fixture.schema().name()), true);
			repository.notifyQueuesAlone(List.of("alone-a", "alone-b"));
			await().atMost(Duration.ofSeconds(5))
				.until(() -> this.listening.received().stream().map(Arrival::queue).toList(),
						(queues) -> queues.containsAll(List.of("alone-a", "alone-b")));
			assertThat(jdbc.queryForObject("SHOW synchronous_commit", String.class)).isEqualTo("on");
		}
	}

	@Test
	void aRolledBackEnqueueIsNeverAnnounced() {
		try (QueueEngine engine = notifying(INTERVAL)) {
			JobClient client = engine.client();
			fixture.transactionTemplate().executeWithoutResult((status) -> {
				// The first notifies within the transaction, the second leaves it to the throttle.
				client.enqueue("rollback.job", 1);
				client.enqueue("rollback.job", 2);
				status.setRollbackOnly();
			});
			await().during(INTERVAL.plusMillis(500)).atMost(INTERVAL.plusSeconds(2))
				.until(() -> this.listening.received().isEmpty());
		}
	}

	@Test
	void aTransactionWhoseFirstInsertNotifiedNeedsNoLateNotification() {
		try (QueueEngine engine = notifying(INTERVAL)) {
			JobClient client = engine.client();
			fixture.transactionTemplate().executeWithoutResult((status) -> {
				client.enqueue("covered.job", 1);
				client.enqueue("covered.job", 2);
				client.enqueueAll(List.of(JobRequest.of("covered.job", 3)));
			});
			await().atMost(Duration.ofSeconds(5)).until(() -> this.listening.received().size() >= 1);
			await().during(INTERVAL.plusMillis(500)).atMost(INTERVAL.plusSeconds(2))
				.until(() -> this.listening.received().size() == 1);
		}
	}

	@Test
	void jobsScheduledForLaterAreNotAnnounced() {
		try (QueueEngine engine = notifying(INTERVAL)) {
			JobClient client = engine.client();
			client.enqueue(JobRequest.of("later.job", 1).delay(Duration.ofHours(1)));
			await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
				.until(() -> this.listening.received().isEmpty());
		}
	}

	@Test
	void closingSendsTheWaitingNotificationAtOnce() {
		Duration longInterval = Duration.ofMinutes(5);
		QueueEngine engine = notifying(longInterval);
		JobClient client = engine.client();
		client.enqueue("close.job", 1);
		client.enqueue("close.job", 2);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.listening.received().size() >= 1);
		long closedAt = System.nanoTime();
		engine.close();
		await().atMost(Duration.ofSeconds(5)).until(() -> this.listening.received().size() >= 2);
		assertThat(this.listening.received().get(1).at()).isGreaterThan(closedAt);
		// After closing, every enqueue is announced on its own.
		client.enqueue("close.job", 3);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.listening.received().size() >= 3);
	}

	@Test
	void zeroIntervalNotifiesEveryCommit() {
		try (QueueEngine engine = notifying(Duration.ZERO)) {
			JobClient client = engine.client();
			for (int i = 0; i < 5; i++) {
				client.enqueue("each.job", i);
			}
			await().atMost(Duration.ofSeconds(5)).until(() -> this.listening.received().size() >= 5);
			await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
				.until(() -> this.listening.received().size() == 5);
		}
	}

	@Test
	void aNegativeIntervalIsRejectedNamingTheSetting() {
		assertThatThrownBy(() -> fixture.engineSettings().withNotifications(true, Duration.ofMillis(-1)))
			.isInstanceOf(InvalidQueueConfigurationException.class)
			.hasMessageContaining("pgqueue.notifications.min-interval")
			.hasMessageContaining("PT-0.001S");
	}

	/** An application that only enqueues, notifying each queue at most once per {@code interval}. */
	private static QueueEngine notifying(Duration interval) {
		return fixture.engineBuilder()
			.settings(fixture.engineSettings().withNotifications(true, interval))
			.processing(false)
			.build();
	}

	private record Arrival(String queue, long at) {
	}

	/** A connection listening on the channel, recording each notification as it arrives. */
	private static final class Listening implements AutoCloseable {

		private final Connection connection;

		private final List<Arrival> received = new CopyOnWriteArrayList<>();

		private final Thread thread;

		private volatile boolean running = true;

		Listening(Connection connection, String channel) throws SQLException {
			this.connection = connection;
			connection.setAutoCommit(true);
			try (Statement statement = connection.createStatement()) {
				statement.execute("LISTEN \"" + channel + "\"");
			}
			PGConnection pg = connection.unwrap(PGConnection.class);
			this.thread = new Thread(() -> {
				try {
					while (this.running) {
						PGNotification[] notifications = pg.getNotifications(50);
						long now = System.nanoTime();
						if (notifications != null) {
							for (PGNotification notification : notifications) {
								this.received.add(new Arrival(notification.getParameter(), now));
							}
						}
					}
				}
				catch (SQLException ex) {
					if (this.running) {
						throw new IllegalStateException(ex);
					}
				}
			}, "test-listener");
			this.thread.start();
		}

		List<Arrival> received() {
			return this.received;
		}

		@Override
		public void close() throws Exception {
			this.running = false;
			this.thread.join(5_000);
			this.connection.close();
		}

	}

}
