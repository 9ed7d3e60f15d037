package dev.pgqueue.testkit;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.JobState;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.testkit.KitTestApplication.Greeting;
import dev.pgqueue.testkit.KitTestApplication.Listeners;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * With pollers, as in production: awaitIdle waits until they have run every job that is due, or
 * falls due within the timeout, and otherwise fails naming what still waits, runs or failed.
 */
@SpringBootTest(classes = KitTestApplication.class)
@QueueTestDatabase
@AutoConfigureQueueTester
@IsolatedQueueSchema(applicationTables = true)
class QueueTesterAwaitIdleTests {

	@Autowired
	private QueueTester queue;

	@Autowired
	private JobClient jobs;

	@Autowired
	private JobAdmin admin;

	@Autowired
	private JdbcTemplate jdbc;

	@Autowired
	private TransactionTemplate transactions;

	@Autowired
	private Listeners listeners;

	@Autowired
	private QueueEngine engine;

	@BeforeEach
	void startEmpty() {
		this.jdbc.execute(KitTestApplication.CREATE_GREETINGS);
		this.jdbc.update("DELETE FROM greetings");
		this.listeners.slowRelease = new CountDownLatch(1);
	}

	@AfterEach
	void releaseAndForgetTheJobs() {
		this.listeners.releaseSlowJobs();
		// Waits for the row locks of batches still running, so that no job outlives its test.
		this.jdbc.update("DELETE FROM " + this.engine.database().settings().schema().qualify("pgqueue_jobs"));
		this.jdbc.update("DELETE FROM " + this.engine.database().settings().schema().qualify("pgqueue_finished_jobs"));
	}

	@Test
	void returnsOnceThePollersHaveRunEveryJob() {
		for (int i = 0; i < 5; i++) {
			this.jobs.enqueue("greeting.send", new Greeting("guest " + i));
		}

		this.queue.awaitIdle();

		this.queue.assertThatJobs().ofKind("greeting.send").hasSize(5).allCompleted();
		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM greetings", Integer.class)).isEqualTo(5);
	}

	@Test
	void failsNamingTheJobThatIsStillRunning() {
		UUID stuck = this.jobs.enqueue("stuck.job", Map.of("n", 1));

		assertThatThrownBy(() -> this.queue.withTimeout(Duration.ofMillis(500)).awaitIdle("slow"))
			.isInstanceOf(AssertionError.class)
			.hasMessageContaining("Queue 'slow' is not idle after 500ms: 1 job still waits or runs")
			.hasMessageContaining(stuck + " kind 'stuck.job', queue 'slow'")
			.hasMessageContaining("withTimeout(Duration)");
	}

	@Test
	void failsNamingAKindThatNoListenerHandlesAndTheJobsThatFailed() {
		UUID failing = this.jobs.enqueue("greeting.send", new Greeting("fail"));
		UUID typo = this.jobs.enqueue("greeting.sned", new Greeting("typo"));

		assertThatThrownBy(() -> this.queue.withTimeout(Duration.ofSeconds(2)).awaitIdle())
			.isInstanceOf(AssertionError.class)
			.hasMessageContaining("The queues are not idle after 2s")
			.hasMessageContaining(typo + " kind 'greeting.sned', queue 'default', available")
			.hasMessageContaining("No @JobListener of this application handles kind 'greeting.sned'")
			.hasMessageContaining("Failed jobs (newest 1):\n  - " + failing)
			.hasMessageContaining("last error: dev.pgqueue.NonRetryableJobException: boom");
	}

	@Test
	void waitsForAJobScheduledToFallDueBeforeTheTimeout() {
		UUID soon = this.jobs.enqueue(JobRequest.of("greeting.send", new Greeting("soon")).delay(Duration.ofSeconds(1)));

		this.queue.awaitIdle();

		assertThat(this.admin.find(soon).orElseThrow().state()).isEqualTo(JobState.COMPLETED);
	}

	@Test
	void doesNotWaitForAJobScheduledAfterTheTimeout() {
		UUID later = this.jobs.enqueue(JobRequest.of("greeting.send", new Greeting("later")).delay(Duration.ofHours(1)));

		this.queue.withTimeout(Duration.ofSeconds(5)).awaitIdle();

		assertThat(this.admin.find(later).orElseThrow().state()).isEqualTo(JobState.SCHEDULED);
	}

	@Test
	void refusesToWaitInsideATransaction() {
		this.transactions.executeWithoutResult((status) -> assertThatIllegalStateException()
			.isThrownBy(() -> this.queue.awaitIdle())
			.withMessageContaining("inside a transaction"));
	}

}
