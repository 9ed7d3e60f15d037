package dev.pgqueue;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.listener.JobListenerMethodAdapter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Failures that no retry can cure fail their job on the first attempt, and only that job: the rest
 * of its batch completes.
 */
class NonRetryableFailureTests {

	private static final String QUEUE = "strict";

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() throws Exception {
		fixture = QueueFixture.create("non_retryable");
		fixture.jdbc()
			.execute("CREATE TABLE ledger (job_id uuid PRIMARY KEY, note text, txid bigint NOT NULL DEFAULT txid_current())");
		// Retries wait an hour, so a retried job shows as 'scheduled' rather than running again.
		fixture.configure(QueueSettings.defaults(QUEUE)
			.withConcurrency(1)
			.withBatchSize(10)
			.withPollInterval(Duration.ofMillis(50))
			.withMaxAttempts(5)
			.withRetry(new RetryPolicy(Duration.ofHours(1), Duration.ofHours(1), 2.0, 0.0))
			.withNonRetryable(List.of(IllegalArgumentException.class)));
		Method issue = InvoiceListener.class.getMethod("issue", Invoice.class, Job.class);
		fixture.handlers()
			.register(new JobListenerMethodAdapter(new InvoiceListener(), issue, issue.getAnnotation(JobListener.class),
					fixture.jsonMapper()));
		fixture.handle("invoice.void", QUEUE, (job) -> {
			throw new NonRetryableJobException("Invoice of job " + job.id() + " no longer exists");
		});
		fixture.handle("invoice.parse", QUEUE, (job) -> {
			// A subclass of the configured IllegalArgumentException.
			throw new NumberFormatException("For input string: \"twelve\"");
		});
		fixture.handle("invoice.flaky", QUEUE, (job) -> {
			throw new IllegalStateException("mail server busy");
		});
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void unmappablePayloadFailsAtOnceWhileTheRestOfTheBatchCompletes() {
		List<UUID> ids = runBatch(List.of(JobRequest.of("invoice.issue", new Invoice("acme", 120)),
				JobRequest.of("invoice.issue", Map.of("customer", "acme", "amount", "lots")),
				JobRequest.of("invoice.issue", new Invoice("globex", 80)),
				JobRequest.of("invoice.issue", "not an invoice at all"),
				JobRequest.of("invoice.issue", new Invoice("initech", 5))));

		for (UUID bad : List.of(ids.get(1), ids.get(3))) {
			Map<String, Object> row = fixture.row(bad);
			assertThat(row).containsEntry("state", "failed").containsEntry("attempt", 1);
			assertThat(row.get("finished_at")).isNotNull();
			assertThat((String) row.get("last_error")).contains("Payload of job " + bad)
				.contains("kind 'invoice.issue'")
				.contains("queue '" + QUEUE + "'")
				.contains(Invoice.class.getName())
				.contains("retrying cannot help");
			assertThat(ledgerNote(bad)).isNull();
		}
		assertCompletedInOneTransaction(ids.get(0), ids.get(2), ids.get(4));
		assertThat(ledgerNote(ids.get(0))).isEqualTo("acme:120");
	}

	@Test
	void nonRetryableExceptionsFailAtOnceWhileRetryableOnesAreScheduledAgain() {
		List<UUID> ids = runBatch(List.of(JobRequest.of("invoice.void", null), JobRequest.of("invoice.parse", null),
				JobRequest.of("invoice.flaky", null), JobRequest.of("invoice.issue", new Invoice("acme", 1))));

		Map<String, Object> voided = fixture.row(ids.get(0));
		assertThat(voided).containsEntry("state", "failed").containsEntry("attempt", 1);
		assertThat((String) voided.get("last_error"))
			.contains("NonRetryableJobException: Invoice of job " + ids.get(0) + " no longer exists");

		Map<String, Object> unparsable = fixture.row(ids.get(1));
		assertThat(unparsable).as("configured as non-retryable, through its superclass")
			.containsEntry("state", "failed")
			.containsEntry("attempt", 1);
		assertThat((String) unparsable.get("last_error")).contains("NumberFormatException");

		Map<String, Object> flaky = fixture.row(ids.get(2));
		assertThat(flaky).containsEntry("state", "scheduled").containsEntry("attempt", 1);
		assertThat((String) flaky.get("last_error")).contains("mail server busy");
		assertThat(flaky.get("finished_at")).isNull();

		assertCompletedInOneTransaction(ids.get(3));
	}

	/** Enqueues the requests, runs them as one batch of one poller and waits until none is available. */
	private static List<UUID> runBatch(List<JobRequest> requests) {
		List<UUID> ids = fixture.client().enqueueAll(requests);
		JobPoller poller = fixture.poller(QUEUE);
		poller.start();
		try {
			await().atMost(Duration.ofSeconds(30))
				.untilAsserted(() -> assertThat(ids)
					.allSatisfy((id) -> assertThat(fixture.row(id).get("state")).isNotEqualTo("available")));
		}
		finally {
			poller.stop();
		}
		return ids;
	}

	private static void assertCompletedInOneTransaction(UUID... ids) {
		for (UUID id : ids) {
			assertThat(fixture.row(id)).containsEntry("state", "completed").containsEntry("attempt", 1);
		}
		assertThat(fixture.jdbc()
			.queryForList("SELECT DISTINCT txid FROM ledger WHERE job_id = ANY(?::uuid[])", Long.class,
					java.util.Arrays.stream(ids)
						.map(UUID::toString)
						.collect(java.util.stream.Collectors.joining(",", "{", "}"))))
			.hasSize(1);
	}

	private static String ledgerNote(UUID id) {
		List<String> notes = fixture.jdbc().queryForList("SELECT note FROM ledger WHERE job_id = ?", String.class, id);
		return notes.isEmpty() ? null : notes.get(0);
	}

	public record Invoice(String customer, int amount) {
	}

	public static class InvoiceListener {

		@JobListener(kind = "invoice.issue", queue = QUEUE)
		public void issue(Invoice invoice, Job job) {
			fixture.jdbc()
				.update("INSERT INTO ledger (job_id, note) VALUES (?, ?)", job.id(),
						invoice.customer() + ":" + invoice.amount());
		}

	}

}
