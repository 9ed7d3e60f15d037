package dev.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class TransactionalModeTests {

	private static QueueFixture fixture;

	private static final AtomicInteger flakyCalls = new AtomicInteger();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("tx_mode");
		fixture.jdbc().execute("CREATE TABLE ledger (job_id uuid PRIMARY KEY, note text)");
		fixture.configure(QueueSettings.defaults("tx").withPollInterval(Duration.ofMillis(50)).withBatchSize(5)
			.withRetry(new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(20), 2.0, 0.0)));
		fixture.handle("ledger.write", "tx", (job) -> fixture.jdbc()
			.update("INSERT INTO ledger (job_id, note) VALUES (?, ?)", job.id(), job.payload()));
		fixture.handle("ledger.write-then-fail", "tx", (job) -> {
			fixture.jdbc().update("INSERT INTO ledger (job_id, note) VALUES (?, 'should roll back')", job.id());
			throw new IllegalStateException("boom after writing");
		});
		fixture.handle("flaky", "tx", (job) -> {
			flakyCalls.incrementAndGet();
			throw new IllegalStateException("always fails");
		});
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void runsJobAndCommitsHandlerWorkWithCompletion() {
		JobPoller poller = fixture.poller("tx");
		poller.start();
		try {
			UUID id = fixture.client().enqueue("ledger.write", Map.of("hello", "world"));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> "completed".equals(fixture.row(id).get("state")));
			assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM ledger WHERE job_id = ?", Long.class, id))
				.isEqualTo(1);
			assertThat(fixture.row(id)).containsEntry("attempt", 1);
		}
		finally {
			poller.stop();
		}
	}

	@Test
	void failingHandlerRollsBackItsOwnWorkAndRetriesUntilFailed() {
		fixture.configure(QueueSettings.defaults("tx").withPollInterval(Duration.ofMillis(50)).withBatchSize(5)
			.withMaxAttempts(3).withRetry(new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(20), 2.0, 0.0)));
		JobPoller poller = fixture.poller("tx");
		var maintenance = fixture.maintenance((m) -> new dev.pgqueue.engine.settings.MaintenanceSettings(
				Duration.ofMillis(50), m.rescueInterval(), m.cleanupInterval(), m.statsInterval(),
				m.completedRetention(), m.failedRetention(), m.cleanupBatchSize(), m.deadRowsWarning()));
		poller.start();
		maintenance.start();
		try {
			List<UUID> ids = fixture.client().enqueueAll(List.of(JobRequest.of("ledger.write-then-fail", 1),
					JobRequest.of("ledger.write", "neighbour")));
			await().atMost(Duration.ofSeconds(20)).until(() -> "failed".equals(fixture.row(ids.get(0)).get("state")));
			Map<String, Object> failed = fixture.row(ids.get(0));
			assertThat(failed.get("attempt")).isEqualTo(3);
			assertThat((String) failed.get("last_error")).contains("boom after writing");
			assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM ledger WHERE job_id = ?", Long.class,
					ids.get(0))).isZero();
			await().atMost(Duration.ofSeconds(10))
				.until(() -> "completed".equals(fixture.row(ids.get(1)).get("state")));
		}
		finally {
			poller.stop();
			maintenance.stop();
		}
	}

}
