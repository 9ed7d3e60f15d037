package dev.pgqueue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.engine.NotificationConnections;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.QueueEngineBuilder;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.test.TestDatabase;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The listener holds a session of its own, outside the pool and named for operators, and gets its
 * hearing back after that session is killed or goes deaf: jobs enqueued by another application are
 * picked up within the wake-up figure again, not at the 30 s poll interval.
 */
class ListenerConnectionTests {

	/** Long enough that only a notification can explain a quick pickup. */
	private static final Duration POLL_INTERVAL = Duration.ofSeconds(30);

	/** A notification wakes the poller within this, where its interval would take 30 s. */
	private static final Duration WOKEN = Duration.ofSeconds(1);

	private static final Duration LIVENESS_TIMEOUT = Duration.ofSeconds(2);

	private static final WorkerSettings WORKERS = new WorkerSettings(Duration.ofSeconds(5), false, false);

	private static final Map<String, Long> handledAt = new ConcurrentHashMap<>();

	private static final AtomicInteger probes = new AtomicInteger();

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("listen");
		fixture.configure(QueueSettings.defaults("deaf").withPollInterval(POLL_INTERVAL));
		fixture.handle("deaf.job", "deaf", (job) -> handledAt.put(job.payload(), System.nanoTime()));
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void aTerminatedListenerSessionIsReplacedAndWakesPollersAgain() throws SQLException {
		HikariDataSource pool = fixture.schema().newPool(4);
		QueueEngine listening = listening(fixture.engineBuilder(pool));
		QueueEngine enqueuing = enqueuing();
		// Listeners of other engines on this database, if any, are not this test's to count or kill.
		Set<Integer> others = listenerSessions();
		listening.start();
		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> ours(others).size() == 1);
			// Outside the pool: the pool lends connections only for the moment of a poll or a heartbeat.
			await().atMost(Duration.ofSeconds(5))
				.until(() -> pool.getHikariPoolMXBean().getActiveConnections() == 0);
			int first = ours(others).iterator().next();
			assertThat(wokenWithin(enqueuing.client(), WOKEN)).as("woken before the session is killed").isTrue();

			assertThat(terminate(first)).as("the listener's own session, named for operators").isTrue();
			await().atMost(LIVENESS_TIMEOUT.plusSeconds(3))
				.until(() -> ours(others).size() == 1 && !ours(others).contains(first));
			await().atMost(LIVENESS_TIMEOUT.plusSeconds(3)).until(() -> wokenWithin(enqueuing.client(), WOKEN));
		}
		finally {
			listening.close();
			enqueuing.close();
			pool.close();
		}
		await().atMost(Duration.ofSeconds(5)).until(() -> ours(others).isEmpty());
	}

	@Test
	void aListenerSessionThatGoesDeafIsReplacedWithinTheLivenessTimeout() throws Exception {
		Matcher address = Pattern.compile("^jdbc:postgresql://([^/:?]+)(?::(\\d+))?(/.*)$")
			.matcher(TestDatabase.get().jdbcUrl());
		assertThat(address.matches()).as("a jdbc:postgresql://host[:port]/… URL: %s", TestDatabase.get().jdbcUrl())
			.isTrue();
		int port = (address.group(2) != null) ? Integer.parseInt(address.group(2)) : 5432;
		try (FreezingProxy proxy = new FreezingProxy(address.group(1), port)) {
			String url = "jdbc:postgresql://127.0.0.1:" + proxy.port() + address.group(3);
			QueueEngine listening = listening(fixture.engineBuilder()
				.notificationConnections(NotificationConnections.direct(url, credentials())));
			QueueEngine enqueuing = enqueuing();
			listening.start();
			try {
				await().atMost(Duration.ofSeconds(10)).until(() -> proxy.accepted() == 1);
				assertThat(wokenWithin(enqueuing.client(), WOKEN)).as("woken through the proxy").isTrue();

				proxy.freeze();
				long frozenAt = System.nanoTime();
				// Deaf now: no notification arrives and nothing fails. Enqueue probe after probe until one
				// is picked up within the wake-up figure again.
				try {
					await().atMost(LIVENESS_TIMEOUT.plus(WOKEN).plusSeconds(2))
						.until(() -> wokenWithin(enqueuing.client(), WOKEN));
				}
				catch (ConditionTimeoutException ex) {
					throw new AssertionError("No probe was picked up within " + WOKEN + " in the "
							+ Duration.ofNanos(System.nanoTime() - frozenAt).toMillis() + " ms after the listener's session "
							+ "went deaf (liveness timeout " + LIVENESS_TIMEOUT + ", poll interval " + POLL_INTERVAL + ")", ex);
				}
				assertThat(proxy.accepted()).as("a new session through the proxy").isGreaterThanOrEqualTo(2);
			}
			finally {
				listening.close();
				enqueuing.close();
			}
		}
	}

	@Test
	void aLivenessTimeoutTooShortIsRejectedNamingTheSetting() {
		assertThatThrownBy(() -> fixture.engineSettings().withLivenessTimeout(Duration.ofMillis(1)))
			.isInstanceOf(InvalidQueueConfigurationException.class)
			.hasMessageContaining("pgqueue.notifications.liveness-timeout")
			.hasMessageContaining("PT0.001S");
	}

	/**
	 * Enqueues one job from {@code client} and waits for it to be handled: true if it was within
	 * {@code limit}.
	 */
	private static boolean wokenWithin(JobClient client, Duration limit) {
		String payload = "probe-" + probes.incrementAndGet();
		long enqueuedAt = System.nanoTime();
		client.enqueue("deaf.job", payload);
		try {
			await().atMost(limit).until(() -> handledAt.containsKey("\"" + payload + "\""));
		}
		catch (ConditionTimeoutException ex) {
			return false;
		}
		return Duration.ofNanos(handledAt.get("\"" + payload + "\"") - enqueuedAt).compareTo(limit) < 0;
	}

	/** The application whose poller of the queue waits out its interval unless notified. */
	private static QueueEngine listening(QueueEngineBuilder builder) {
		return builder
			.settings(fixture.engineSettings()
				.withWorkers(WORKERS)
				.withNotifications(true, EngineSettings.DEFAULT_NOTIFY_INTERVAL)
				.withLivenessTimeout(LIVENESS_TIMEOUT))
			.build();
	}

	/** Another application, which only enqueues, notifying on every enqueue. */
	private static QueueEngine enqueuing() {
		return fixture.engineBuilder()
			.settings(fixture.engineSettings().withNotifications(true, Duration.ZERO))
			.processing(false)
			.build();
	}

	private static Properties credentials() {
		Properties properties = new Properties();
		if (TestDatabase.get().username() != null) {
			properties.setProperty("user", TestDatabase.get().username());
		}
		if (TestDatabase.get().password() != null) {
			properties.setProperty("password", TestDatabase.get().password());
		}
		return properties;
	}

	/** The pids of listener sessions on this test's database (other tests share the server, not the database). */
	/** The sessions named as pgqueue's listener on the test database. */
	private static Set<Integer> listenerSessions() throws SQLException {
		try (Connection con = TestDatabase.get().connect(); Statement statement = con.createStatement();
				ResultSet rows = statement.executeQuery("SELECT pid FROM pg_stat_activity WHERE application_name = '"
						+ NotificationConnections.APPLICATION_NAME + "' AND datname = current_database()")) {
			Set<Integer> pids = new HashSet<>();
			while (rows.next()) {
				pids.add(rows.getInt(1));
			}
			return pids;
		}
	}

	/** The listener sessions opened since {@code others} were seen: this test's engine's. */
	private static Set<Integer> ours(Set<Integer> others) throws SQLException {
		Set<Integer> ours = listenerSessions();
		ours.removeAll(others);
		return ours;
	}

	private static boolean terminate(int pid) throws SQLException {
		try (Connection con = TestDatabase.get().connect(); Statement statement = con.createStatement();
				ResultSet rows = statement.executeQuery("SELECT pg_terminate_backend(" + pid + ")")) {
			rows.next();
			return rows.getBoolean(1);
		}
	}

}
