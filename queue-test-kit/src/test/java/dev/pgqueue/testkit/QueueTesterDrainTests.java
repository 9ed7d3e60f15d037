package dev.pgqueue.testkit;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobOutcome;
import dev.pgqueue.JobRequest;
import dev.pgqueue.JobState;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.testkit.KitTestApplication.Greeting;
import dev.pgqueue.testkit.KitTestApplication.Listeners;
import dev.pgqueue.testkit.KitTestApplication.ReportRequest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Without pollers ({@code pgqueue.enabled=false}) nothing runs until the test says so: drain runs a
 * queue's due jobs on the test thread, run(id) one chosen job, each through the path a poller's
 * workers take, outcomes committed.
 */
@SpringBootTest(classes = KitTestApplication.class, properties = "pgqueue.enabled=false")
@QueueTestDatabase
@AutoConfigureQueueTester
@IsolatedQueueSchema(applicationTables = true)
class QueueTesterDrainTests {

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
		this.jdbc.update("DELETE FROM " + this.engine.database().settings().schema().qualify("pgqueue_jobs"));
		this.jdbc.update("DELETE FROM " + this.engine.database().settings().schema().qualify("pgqueue_finished_jobs"));
		this.listeners.greetingThreads.clear();
		this.listeners.reportThreads.clear();
	}

	@Test
	void drainRunsEveryDueJobOfTheQueueOnTheTestThread() {
		this.jobs.enqueue("greeting.send", new Greeting("ada"));
		this.jobs.enqueue("greeting.send", new Greeting("grace"));

		JobRuns runs = this.queue.drain("mail");

		assertThat(runs.completed()).as("%s", runs).isEqualTo(2);
		assertThat(this.listeners.greetingThreads).containsEntry("ada", Thread.currentThread())
			.containsEntry("grace", Thread.currentThread());
		this.queue.assertThatJobs().ofKind("greeting.send").hasSize(2).allCompleted();
	}

	@Test
	void drainCommitsEachListenersWorkWithItsCompletionAndUndoesAFailedOnes() {
		this.jobs.enqueue("greeting.send", new Greeting("ada"));
		UUID failing = this.jobs.enqueue("greeting.send", new Greeting("fail"));

		JobRuns runs = this.queue.drain("mail");

		assertThat(runs.completed()).as("%s", runs).isOne();
		assertThat(runs.failed()).as("%s", runs).isOne();
		assertThat(runs.ofKind("greeting.send")).filteredOn((run) -> run.id().equals(failing))
			.singleElement()
			.satisfies((run) -> assertThat(run.error()).contains("boom"));
		// Read on a connection of its own, outside any transaction: only committed work shows.
		assertThat(this.jdbc.queryForList("SELECT name FROM greetings", String.class)).containsExactly("ada");
		assertThat(this.admin.find(failing)).hasValueSatisfying((job) -> assertThat(job.state()).isEqualTo(JobState.FAILED));
	}

	@Test
	void drainRunsTheJobsThatListenersEnqueueMeanwhile() {
		this.jobs.enqueue("greeting.send", new Greeting("chain"));

		JobRuns runs = this.queue.drain("mail");

		assertThat(runs.completed()).as("%s", runs).isEqualTo(2);
		assertThat(this.jdbc.queryForList("SELECT name FROM greetings ORDER BY name", String.class))
			.containsExactly("chain", "chained");
	}

	@Test
	void drainReportsARetriedJobAndLeavesItForLater() {
		UUID flaky = this.jobs.enqueue("greeting.send", new Greeting("flaky"));

		JobRuns runs = this.queue.drain("mail");

		assertThat(runs.runs()).singleElement().satisfies((run) -> {
			assertThat(run.id()).isEqualTo(flaky);
			assertThat(run.outcome()).isEqualTo(JobOutcome.RETRIED);
			assertThat(run.attempt()).isOne();
			assertThat(run.error()).contains("flaky: the mail server did not answer");
		});
		this.queue.assertThatJobs().ofKind("greeting.send").inState(JobState.SCHEDULED).singleJob();
	}

	@Test
	void drainRunsALeasedQueueOnTheTestThread() {
		this.jobs.enqueue("report.render", new ReportRequest(1));
		this.jobs.enqueue("report.render", new ReportRequest(2));

		JobRuns runs = this.queue.drain("reports");

		assertThat(runs.completed()).as("%s", runs).isEqualTo(2);
		assertThat(this.listeners.reportThreads).containsOnly(Thread.currentThread());
		this.queue.assertThatJobs().ofKind("report.render").hasSize(2).allCompleted();
	}

	@Test
	void drainMakesScheduledJobsThatFellDueAvailableFirst() {
		UUID delayed = this.jobs.enqueue(JobRequest.of("greeting.send", new Greeting("later")).delay(Duration.ofMillis(100)));
		Instant runAt = this.admin.find(delayed).orElseThrow().runAt();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.jdbc.queryForObject("SELECT now() > ?", Boolean.class, java.sql.Timestamp.from(runAt)));

		assertThat(this.queue.drain("mail").completed()).isOne();
	}

	@Test
	void drainOfEveryQueueRunsEachQueueThatHasListeners() {
		this.jobs.enqueue("greeting.send", new Greeting("ada"));
		this.jobs.enqueue("report.render", new ReportRequest(3));

		JobRuns runs = this.queue.drain();

		assertThat(runs.completed()).as("%s", runs).isEqualTo(2);
	}

	@Test
	void runRunsOnlyTheJobItIsGiven() {
		UUID first = this.jobs.enqueue("greeting.send", new Greeting("first"));
		UUID second = this.jobs.enqueue("greeting.send", new Greeting("second"));

		JobRun run = this.queue.run(second);

		assertThat(run.id()).isEqualTo(second);
		assertThat(run.completed()).as("%s", run).isTrue();
		assertThat(this.listeners.greetingThreads).containsOnlyKeys("second")
			.containsEntry("second", Thread.currentThread());
		assertThat(this.admin.find(first).orElseThrow().state()).isEqualTo(JobState.AVAILABLE);
	}

	@Test
	void runRunsAJobScheduledForLaterNow() {
		UUID later = this.jobs.enqueue(JobRequest.of("report.render", new ReportRequest(4)).delay(Duration.ofHours(1)));

		assertThat(this.queue.run(later).outcome()).isEqualTo(JobOutcome.COMPLETED);
		assertThat(this.admin.find(later).orElseThrow().state()).isEqualTo(JobState.COMPLETED);
	}

	@Test
	void runFailsForAJobThatNoLongerWaits() {
		UUID done = this.jobs.enqueue("greeting.send", new Greeting("once"));
		this.queue.run(done);

		assertThatThrownBy(() -> this.queue.run(done)).isInstanceOf(AssertionError.class)
			.hasMessageContaining(done.toString())
			.hasMessageContaining("does not wait to run: it is completed");
	}

	@Test
	void runFailsForAJobOfAKindNoListenerHandles() {
		UUID typo = this.jobs.enqueue("greeting.sned", new Greeting("typo"));

		assertThatThrownBy(() -> this.queue.run(typo)).isInstanceOf(AssertionError.class)
			.hasMessageContaining(typo.toString())
			.hasMessageContaining("no @JobListener of this application handles its kind");
	}

	@Test
	void awaitIdleFailsAtOnceWhenNoPollerRunsHere() {
		UUID waiting = this.jobs.enqueue("greeting.send", new Greeting("waiting"));
		long started = System.nanoTime();

		assertThatThrownBy(() -> this.queue.awaitIdle("mail")).isInstanceOf(AssertionError.class)
			.hasMessageContaining("Queue 'mail' is not idle, and this application runs no job")
			.hasMessageContaining(waiting.toString())
			.hasMessageContaining("pgqueue.enabled=false");
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(QueueTester.DEFAULT_TIMEOUT);
	}

	@Test
	void drainRefusesToRunInsideATransaction() {
		this.transactions.executeWithoutResult((status) -> assertThatIllegalStateException()
			.isThrownBy(() -> this.queue.drain("mail"))
			.withMessageContaining("@Transactional"));
	}

	@Test
	void drainOfAQueueThatNoListenerHandlesFailsNamingTheQueuesThatHaveOne() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.queue.drain("mial"))
			.withMessageContaining("queue 'mial'")
			.withMessageContaining("'mail', 'reports', 'slow'");
	}

}
