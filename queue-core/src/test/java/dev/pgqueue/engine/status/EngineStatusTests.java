package dev.pgqueue.engine.status;

import java.io.IOException;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.QueueFixture;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.status.DatabaseStatus.ServiceStatus;
import dev.pgqueue.engine.status.QueueStatus.PollerStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine's status says what its running parts know: a real engine, a poller running jobs that
 * hold their workers, the stats reader's counts, a pause; over shards, a shard that is down is not
 * asked.
 */
class EngineStatusTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private final CountDownLatch release = new CountDownLatch(1);

	private QueueFixture fixture;

	private QueueFixture second;

	private QueueEngine engine;

	@AfterEach
	void close() {
		this.release.countDown();
		if (this.engine != null) {
			this.engine.close();
		}
		this.fixture.close();
		if (this.second != null) {
			this.second.close();
		}
	}

	@Test
	void aQueuesStatusCountsItsJobsItsBusyWorkersItsRateUseAndItsPause() {
		this.fixture = QueueFixture.create("status");
		// Leased, so that the running jobs are counted running by any session, not only inside their batch.
		this.fixture.configure(QueueSettings.defaults("reports")
			.withMode(QueueMode.LEASED)
			.withConcurrency(2)
			.withPollInterval(Duration.ofMillis(50))
			.withRateLimit(RateLimit.of("reports", 1000, Duration.ofMinutes(1), Duration.ofMillis(50))));
		this.fixture.handle("report.build", "reports", (job) -> this.release.await(WAIT.toSeconds(), TimeUnit.SECONDS));
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			requests.add(JobRequest.of("report.build", i));
		}
		this.fixture.client().enqueueAll(requests);
		this.engine = this.fixture.engine();
		this.engine.start();

		await().atMost(WAIT).until(() -> busy(this.engine.status()) == 2);
		EngineInternals.of(this.engine).statsReader().readStats();
		EngineStatus status = this.engine.status();

		assertThat(status.sharded()).isFalse();
		assertThat(status.processing()).isTrue();
		QueueStatus reports = status.database().queues().get("reports");
		assertThat(reports.paused()).isFalse();
		assertThat(reports.stats()).isNotNull();
		assertThat(reports.stats().running()).as("running jobs as counted").isEqualTo(2);
		assertThat(reports.stats().available()).as("jobs waiting as counted").isEqualTo(3);
		PollerStatus poller = reports.poller();
		assertThat(poller.running()).isTrue();
		assertThat(poller.kinds()).containsExactly("report.build");
		assertThat(poller.settings().concurrency()).isEqualTo(2);
		assertThat(poller.rate()).isNotNull();
		assertThat(poller.rate().limit().starts()).isEqualTo(1000);
		assertThat(poller.rate().used()).as("units the rate limit granted").isGreaterThanOrEqualTo(2);
		assertThat(reports.claims()).as("the claims' signals").isNotNull();
		assertThat(reports.claims().jobsClaimed()).isGreaterThanOrEqualTo(2);
		assertThat(status.database().services()).extracting(ServiceStatus::name).contains("promoter", "stats reader");
		assertThat(status.database().services()).allMatch(ServiceStatus::running);
		assertThat(status.stats()).containsKey("reports");

		this.engine.admin().pause("reports");
		await().atMost(WAIT).until(() -> this.engine.status().database().queues().get("reports").paused());
	}

	@Test
	void aShardTheWatchReportsDownIsNotAskedForItsRateUse() throws Exception {
		this.fixture = QueueFixture.create("status_one");
		this.second = QueueFixture.create("status_two");
		QueueSettings limited = QueueSettings.defaults("reports")
			.withPollInterval(Duration.ofMillis(50))
			.withRateLimit(RateLimit.of("reports", 1000, Duration.ofMinutes(1), Duration.ofMillis(50)));
		this.fixture.configure(limited).handle("report.build", "reports", (job) -> {
		});
		this.second.configure(limited);
		// The status reader's own asks, apart from the pollers' and the watch's on their threads.
		Thread reader = Thread.currentThread();
		AtomicInteger asked = new AtomicInteger();
		List<Connection> handedOut = new CopyOnWriteArrayList<>();
		DelegatingDataSource two = new DelegatingDataSource(this.second.dataSource()) {

			@Override
			public Connection getConnection() throws SQLException {
				if (Thread.currentThread() == reader) {
					asked.incrementAndGet();
				}
				Connection connection = super.getConnection();
				handedOut.add(connection);
				return connection;
			}

		};
		Map<String, QueueFixture> shards = new LinkedHashMap<>();
		shards.put("one", this.fixture);
		shards.put("two", this.second);
		this.engine = QueueFixture.shardsBuilder(shards, (shard) -> shard.equals("two") ? two : this.fixture.dataSource())
			.shardWatch(Duration.ofMillis(50), Duration.ofMillis(500))
			.build();
		this.engine.start();

		EngineStatus answering = this.engine.status();
		assertThat(asked.get()).as("a shard that answers is asked for its rate use").isPositive();
		assertThat(answering.databases()).allSatisfy((database) -> assertThat(
				database.queues().get("reports").poller().rate()).isNotNull());

		// The shard goes away: its connections close and no new one can be had.
		two.setTargetDataSource(refusing());
		for (Connection connection : handedOut) {
			try {
				connection.close();
			}
			catch (SQLException ex) {
				// In use on a poller's thread, which closed it at the same moment: closed either way.
			}
		}
		await().atMost(WAIT).until(() -> this.engine.shards().whyDown("two") != null);
		asked.set(0);
		EngineStatus status = this.engine.status();

		assertThat(asked.get()).as("connections the status asked of the shard that is down").isZero();
		DatabaseStatus down = status.databases().stream().filter((database) -> "two".equals(database.shard()))
			.findFirst().orElseThrow();
		assertThat(down.whyDown()).isNotNull();
		assertThat(down.queues().get("reports").poller().rate()).as("rate use of a shard not asked").isNull();
		DatabaseStatus up = status.databases().stream().filter((database) -> "one".equals(database.shard()))
			.findFirst().orElseThrow();
		assertThat(up.whyDown()).isNull();
		assertThat(up.queues().get("reports").poller().rate()).isNotNull();
	}

	/** A DataSource on a port nothing listens on: every connection is refused at once. */
	private static DataSource refusing() throws IOException {
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		return new DriverManagerDataSource("jdbc:postgresql://127.0.0.1:" + port + "/test");
	}

	private static int busy(EngineStatus status) {
		QueueStatus queue = status.database().queues().get("reports");
		return (queue != null && queue.poller() != null) ? queue.poller().busyWorkers() : 0;
	}

}
