package dev.pgqueue.engine.shards;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import javax.sql.DataSource;

import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link ShardWatch} against real servers: the test database, a port that refuses
 * connections, and a socket that accepts one and never answers, as a server cut off by the network
 * does.
 */
class ShardWatchTests {

	private static final Duration INTERVAL = Duration.ofMillis(50);

	private static final Duration TIMEOUT = Duration.ofSeconds(1);

	@Test
	void aShardThatRefusesConnectionsIsDownWithinTheTimeoutAndUpAgainOnceItAnswers() throws IOException {
		DelegatingDataSource s2 = new DelegatingDataSource(refusing());
		Map<String, DataSource> shards = new LinkedHashMap<>();
		shards.put("s1", database());
		shards.put("s2", s2);
		try (ShardWatch watch = new ShardWatch(shards, INTERVAL, TIMEOUT)) {
			// Before it starts, the watch knows nothing against a shard, however long it has been silent.
			await().during(TIMEOUT.plusMillis(200))
				.atMost(TIMEOUT.plusSeconds(2))
				.until(() -> watch.up().equals(Set.of("s1", "s2")));
			watch.start();
			long started = System.nanoTime();
			await().atMost(Duration.ofSeconds(5)).until(() -> watch.whyDown("s2") != null);
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(TIMEOUT);
			// Shown in the endpoint, the dashboard, info and health: never the driver's words, which name the
			// server's host and port (and, for a refused password, the user).
			assertThat(watch.whyDown("s2")).startsWith("its last probe failed: no connection (PSQLException, SQLState 08001")
				.doesNotContain("127.0.0.1")
				.doesNotContain("refused");
			assertThat(watch.up()).containsExactly("s1");
			s2.setTargetDataSource(database());
			await().atMost(Duration.ofSeconds(5)).until(() -> watch.whyDown("s2") == null);
			assertThat(watch.up()).containsExactly("s1", "s2");
		}
	}

	@Test
	void aShardHeldDownStaysDownWhileItAnswersUntilReleased() {
		Map<String, DataSource> shards = new LinkedHashMap<>();
		shards.put("s1", database());
		shards.put("s2", database());
		try (ShardWatch watch = new ShardWatch(shards, INTERVAL, TIMEOUT)) {
			watch.holdDown("s2", "its tables are not migrated yet");
			assertThat(watch.whyDown("s2")).as("held before the watch starts").isEqualTo("its tables are not migrated yet");
			watch.start();
			await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
				.until(() -> watch.up().equals(Set.of("s1")));
			watch.release("s2");
			await().atMost(Duration.ofSeconds(5)).until(() -> watch.whyDown("s2") == null);
		}
	}

	@Test
	void aShardThatNeverAnswersIsDownOnceItHasBeenSilentForTheTimeout() throws IOException {
		try (ServerSocket silent = new ServerSocket(0)) {
			List<Socket> accepted = new ArrayList<>();
			Thread acceptor = new Thread(() -> {
				try {
					while (true) {
						accepted.add(silent.accept());
					}
				}
				catch (IOException ex) {
					// closed at the end of the test
				}
			});
			acceptor.setDaemon(true);
			acceptor.start();
			Map<String, DataSource> shards = new LinkedHashMap<>();
			shards.put("s1", database());
			shards.put("s3", new DriverManagerDataSource("jdbc:postgresql://127.0.0.1:" + silent.getLocalPort() + "/test"));
			try (ShardWatch watch = new ShardWatch(shards, INTERVAL, TIMEOUT)) {
				watch.start();
				assertThat(watch.up()).as("up until the timeout has passed").containsExactly("s1", "s3");
				long started = System.nanoTime();
				await().atMost(Duration.ofSeconds(5)).until(() -> watch.whyDown("s3") != null);
				Duration took = Duration.ofNanos(System.nanoTime() - started);
				assertThat(took).isGreaterThanOrEqualTo(TIMEOUT.minusMillis(100)).isLessThan(TIMEOUT.plusSeconds(1));
				assertThat(watch.whyDown("s3")).startsWith("it has not answered for");
				assertThat(watch.up()).containsExactly("s1");
			}
			finally {
				for (Socket socket : accepted) {
					socket.close();
				}
			}
		}
	}

	private static DataSource database() {
		TestDatabase database = TestDatabase.get();
		return new DriverManagerDataSource(database.jdbcUrl(), database.username(), database.password());
	}

	/** A DataSource on a port nothing listens on: every connection is refused at once. */
	private static DataSource refusing() throws IOException {
		int port;
		try (ServerSocket free = new ServerSocket(0)) {
			port = free.getLocalPort();
		}
		return new DriverManagerDataSource("jdbc:postgresql://127.0.0.1:" + port + "/test");
	}

}
