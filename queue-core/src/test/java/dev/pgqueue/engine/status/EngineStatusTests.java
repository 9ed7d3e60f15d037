package dev.pgqueue.engine.status;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.QueueFixture;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.status.DatabaseStatus.ServiceStatus;
import dev.pgqueue.engine.status.QueueStatus.PollerStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine's status says what its running parts know: a real engine, a poller running jobs that
 * hold their workers, the stats reader's counts, a pause.
 */
class EngineStatusTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private final CountDownLatch release = new CountDownLatch(1);

	private QueueFixture fixture;

	private QueueEngine engine;

	@AfterEach
	void close() {
		this.release.countDown();
		if (this.engine != null) {
			this.engine.close();
		}
		this.fixture.close();
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
		this.engine.database().statsReader().readStats();
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

	private static int busy(EngineStatus status) {
		QueueStatus queue = status.database().queues().get("reports");
		return (queue != null && queue.poller() != null) ? queue.poller().busyWorkers() : 0;
	}

}
