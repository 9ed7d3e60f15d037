package dev.pgqueue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.schema.NotifyTrigger;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With {@code pgqueue.notifications.trigger} on, a job inserted by plain SQL wakes a poller waiting
 * out a 30 s interval at once; with it off, it waits for the interval. A job enqueued through
 * {@link JobClient} is still announced once, not twice.
 */
class NotifyTriggerTests {

	private static final Duration POLL_INTERVAL = Duration.ofSeconds(30);

	private static final Duration WOKEN = Duration.ofSeconds(1);

	private static final Map<String, Long> handledAt = new ConcurrentHashMap<>();

	private static final AtomicInteger inserted = new AtomicInteger();

	private static QueueFixture fixture;

	private QueueEngine listening;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("trigger");
		fixture.configure(QueueSettings.defaults("plain").withPollInterval(POLL_INTERVAL));
		fixture.handle("plain.job", "plain", (job) -> handledAt.put(job.payload(), System.nanoTime()));
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@BeforeEach
	void listen() {
		this.listening = fixture.engineBuilder()
			.settings(fixture.engineSettings()
				.withWorkers(new WorkerSettings(Duration.ofSeconds(5), false, false))
				.withNotifications(true, EngineSettings.DEFAULT_NOTIFY_INTERVAL))
			.build();
		this.listening.start();
	}

	@AfterEach
	void stopListening() {
		this.listening.close();
	}

	@Test
	void withTheTriggerOnAPlainInsertWakesThePollerAtOnce() {
		migrator(true).afterPropertiesSet();
		assertThat(trigger().enabled()).isTrue();
		awaitPollsAtStart();
		String payload = insertPlain();
		long insertedAt = System.nanoTime();
		await().atMost(WOKEN).until(() -> handledAt.containsKey(payload));
		assertThat(Duration.ofNanos(handledAt.get(payload) - insertedAt)).isLessThan(WOKEN);
	}

	@Test
	void withTheTriggerOffAPlainInsertWaitsForThePollInterval() {
		migrator(true).afterPropertiesSet();
		awaitPollsAtStart();
		migrator(false).afterPropertiesSet();
		assertThat(trigger().enabled()).isFalse();
		String payload = insertPlain();
		await().during(WOKEN.multipliedBy(2)).atMost(WOKEN.multipliedBy(3)).until(() -> !handledAt.containsKey(payload));
	}

	@Test
	void aJobEnqueuedThroughTheClientIsAnnouncedOnceWithTheTriggerOn() throws SQLException {
		migrator(true).afterPropertiesSet();
		try (Connection con = fixture.dataSource().getConnection(); Statement statement = con.createStatement()) {
			con.setAutoCommit(true);
			statement.execute("LISTEN \"pgqueue:" + fixture.schema().name() + "\"");
			PGConnection pg = con.unwrap(PGConnection.class);
			AtomicInteger received = new AtomicInteger();
			try (QueueEngine enqueuing = fixture.engineBuilder()
				.settings(fixture.engineSettings().withNotifications(true, Duration.ZERO))
				.processing(false)
				.build()) {
				// Notifies in its own statement, and the trigger notifies too: one transaction, one notification.
				enqueuing.client().enqueue("plain.job", "through the client");
			}
			await().atMost(Duration.ofSeconds(5)).until(() -> count(pg, received) >= 1);
			await().during(Duration.ofMillis(700)).atMost(Duration.ofSeconds(2)).until(() -> count(pg, received) == 1);
		}
	}

	/**
	 * Waits until the poller has polled at start, the listener listens, and the poller, having found
	 * the queue empty, sleeps out its interval: from then on only a wake-up picks a job up before 30 s.
	 */
	private static void awaitPollsAtStart() {
		// Enqueued through the client of another application, which notifies itself, trigger or not.
		try (QueueEngine enqueuing = fixture.engineBuilder()
			.settings(fixture.engineSettings().withNotifications(true, Duration.ZERO))
			.processing(false)
			.build()) {
			enqueuing.client().enqueue("plain.job", "first");
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> handledAt.containsKey("\"first\""));
		// A poller that claimed polls again at once; let it find the queue empty.
		await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
			.until(() -> !fixture.countByState().containsKey("available") && !fixture.countByState().containsKey("running"));
	}

	private static int count(PGConnection pg, AtomicInteger received) throws SQLException {
		PGNotification[] notifications = pg.getNotifications(50);
		return received.addAndGet((notifications != null) ? notifications.length : 0);
	}

	/** Inserts a due job by plain SQL, as another program would; returns its payload as the handler sees it. */
	private static String insertPlain() {
		String payload = "\"plain-" + inserted.incrementAndGet() + "\"";
		fixture.jdbc()
			.update("INSERT INTO " + fixture.table() + " (public_id, kind, queue, payload, state, max_attempts) "
					+ "VALUES (gen_random_uuid(), 'plain.job', 'plain', ?::jsonb, 'available', 3)", payload);
		return payload;
	}

	private static QueueMigrator migrator(boolean trigger) {
		return new QueueMigrator(fixture.dataSource(), SchemaName.of(fixture.schema().name()), true, trigger);
	}

	private static NotifyTrigger trigger() {
		return new NotifyTrigger(fixture.dataSource(), SchemaName.of(fixture.schema().name()));
	}

}
