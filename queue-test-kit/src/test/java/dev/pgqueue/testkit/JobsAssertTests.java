package dev.pgqueue.testkit;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.JobState;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.testkit.KitTestApplication.Greeting;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Assertions on the jobs in the table pass when the jobs are there and fail, listing every job read
 * and why it did not match, when they are not.
 */
@SpringBootTest(classes = KitTestApplication.class, properties = "pgqueue.enabled=false")
@QueueTestDatabase
@AutoConfigureQueueTester
@IsolatedQueueSchema(applicationTables = true)
class JobsAssertTests {

	@Autowired
	private QueueTester queue;

	@Autowired
	private JobClient jobs;

	@Autowired
	private JdbcTemplate jdbc;

	@Autowired
	private TransactionTemplate transactions;

	@Autowired
	private QueueEngine engine;

	@BeforeEach
	void startEmpty() {
		this.jdbc.execute(KitTestApplication.CREATE_GREETINGS);
		this.jdbc.update("DELETE FROM " + this.engine.database().settings().schema().qualify("pgqueue_jobs"));
		this.jdbc.update("DELETE FROM " + this.engine.database().settings().schema().qualify("pgqueue_finished_jobs"));
	}

	@Test
	void passesForAJobOfTheKindEnqueuedWithThatPayloadAndOptions() {
		UUID id = this.jobs.enqueue(JobRequest.of("greeting.send", new Greeting("ada")).priority(5).uniqueKey("ada"));

		EnqueuedJob job = this.queue.assertThatJobs()
			.ofKind("greeting.send")
			.inQueue("mail")
			.inState(JobState.AVAILABLE)
			.withPayload(new Greeting("ada"))
			.withPayload(Greeting.class, (greeting) -> greeting.name().startsWith("a"))
			.withPriority(5)
			.withUniqueKey("ada")
			.isNotEmpty()
			.singleJob();

		assertThat(job.id()).isEqualTo(id);
		assertThat(job.payload()).isEqualTo("{\"name\": \"ada\"}");
	}

	@Test
	void failsListingWhatWasEnqueuedWhenNoJobOfTheKindWas() {
		UUID id = this.jobs.enqueue("greeting.send", new Greeting("ada"));

		assertThatThrownBy(() -> this.queue.assertThatJobs().ofKind("email.welcome").isNotEmpty())
			.isInstanceOf(AssertionError.class)
			.hasMessageContaining("Expected a job of kind 'email.welcome', but there is none.")
			.hasMessageContaining("(1):\n  - " + id + " kind 'greeting.send', queue 'mail', available")
			.hasMessageContaining("payload {\"name\": \"ada\"}")
			.hasMessageContaining("not matched: not of kind 'email.welcome'");
	}

	@Test
	void failsShowingHowThePayloadDiffers() {
		this.jobs.enqueue("greeting.send", new Greeting("ada"));

		assertThatThrownBy(() -> this.queue.assertThatJobs().ofKind("greeting.send")
			.withPayload(new Greeting("bob"))
			.hasSize(1))
			.isInstanceOf(AssertionError.class)
			.hasMessageContaining("Expected 1 job of kind 'greeting.send' with payload equal to Greeting[name=bob]")
			.hasMessageContaining("but found 0.")
			.hasMessageContaining("not matched: its payload reads as Greeting[name=ada]");
	}

	@Test
	void isEmptyFailsListingTheJobsThatWereEnqueued() {
		UUID id = this.jobs.enqueue(JobRequest.of("greeting.send", new Greeting("grace")).queue("mail"));

		this.queue.assertThatJobs().ofKind("report.render").isEmpty();
		assertThatThrownBy(() -> this.queue.assertThatJobs().ofKind("greeting.send").isEmpty())
			.isInstanceOf(AssertionError.class)
			.hasMessageContaining("Expected no job of kind 'greeting.send', but found 1:")
			.hasMessageContaining(id.toString());
	}

	@Test
	void allCompletedFailsNamingTheJobsThatDidNotWithTheirErrors() {
		this.jobs.enqueue("greeting.send", new Greeting("ada"));
		UUID failing = this.jobs.enqueue("greeting.send", new Greeting("fail"));
		this.queue.drain("mail");

		this.queue.assertThatJobs().ofKind("greeting.send").withPayload(new Greeting("ada")).allCompleted();
		this.queue.assertThatJobs().ofKind("greeting.send").withPayload(new Greeting("fail")).allFailed();
		assertThatThrownBy(() -> this.queue.assertThatJobs().ofKind("greeting.send").allCompleted())
			.isInstanceOf(AssertionError.class)
			.hasMessageContaining("Expected every job of kind 'greeting.send' to be completed, but 1 of 2 are not:")
			.hasMessageContaining(failing + " kind 'greeting.send', queue 'mail', failed, attempt 1/10")
			.hasMessageContaining("last error: dev.pgqueue.NonRetryableJobException: boom");
	}

	@Test
	void allCompletedFailsWhenNoJobMatches() {
		assertThatThrownBy(() -> this.queue.assertThatJobs().ofKind("greeting.send").allCompleted())
			.isInstanceOf(AssertionError.class)
			.hasMessageContaining("but there is no such job")
			.hasMessageContaining("(0): none");
	}

	@Test
	void dueAfterKeepsTheJobsDelayedPastTheInstant() {
		this.jobs.enqueue(JobRequest.of("greeting.send", new Greeting("now")));
		UUID later = this.jobs.enqueue(JobRequest.of("greeting.send", new Greeting("later")).delay(Duration.ofHours(1)));

		assertThat(this.queue.assertThatJobs().dueAfter(Instant.now().plus(Duration.ofMinutes(50))).singleJob().id())
			.isEqualTo(later);
	}

	@Test
	void seesTheJobsThatTheCallersOpenTransactionEnqueued() {
		this.transactions.executeWithoutResult((status) -> {
			this.jobs.enqueue("greeting.send", new Greeting("uncommitted"));
			this.queue.assertThatJobs().ofKind("greeting.send").withPayload(new Greeting("uncommitted")).hasSize(1);
			status.setRollbackOnly();
		});

		this.queue.assertThatJobs().ofKind("greeting.send").isEmpty();
	}

	@Test
	void keepsTheDescriptionGivenWithAs() {
		assertThatThrownBy(() -> this.queue.assertThatJobs().as("welcome emails").ofKind("email.welcome").hasSize(1))
			.isInstanceOf(AssertionError.class)
			.hasMessageStartingWith("[welcome emails]");
	}

}
