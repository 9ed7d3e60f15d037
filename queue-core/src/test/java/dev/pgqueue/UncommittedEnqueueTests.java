package dev.pgqueue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.engine.QueueEngine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job enqueued in a transaction exists once that transaction commits. What such an enqueue leaves
 * in the log, with real transactions on the real database: at debug, that the job waits for the
 * caller's commit; at info, when the transaction rolls back, the jobs it discarded.
 */
class UncommittedEnqueueTests {

	private static final String CLIENT = "dev.pgqueue.engine.JdbcJobClient";

	private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

	private QueueFixture fixture;

	private QueueEngine engine;

	private Level levelBefore;

	@BeforeEach
	void setUp() {
		this.fixture = QueueFixture.create("uncommitted");
		this.engine = this.fixture.engineBuilder().processing(false).build();
		Logger logger = (Logger) LoggerFactory.getLogger(CLIENT);
		this.levelBefore = logger.getLevel();
		logger.setLevel(Level.DEBUG);
		this.logs.start();
		logger.addAppender(this.logs);
	}

	@AfterEach
	void tearDown() {
		Logger logger = (Logger) LoggerFactory.getLogger(CLIENT);
		logger.detachAppender(this.logs);
		logger.setLevel(this.levelBefore);
		this.engine.close();
		this.fixture.close();
	}

	@Test
	void aRolledBackTransactionLogsTheJobsItDiscardedInOneLine() throws Exception {
		JobClient client = this.engine.client();
		TransactionTemplate transaction = this.fixture.transactionTemplate();
		List<UUID> ids = new ArrayList<>();
		try (HikariDataSource elsewhere = this.fixture.schema().newPool(1)) {
			transaction.executeWithoutResult((status) -> {
				int before = TransactionSynchronizationManager.getSynchronizations().size();
				ids.add(client.enqueue("report.monthly", Map.of("month", "2026-10")));
				ids.add(client.enqueue(JobRequest.of("email.welcome", Map.of("to", "ada@example.com")).queue("mail")));
				ids.addAll(client.enqueueAll(List.of(JobRequest.of("report.monthly", Map.of("month", "2026-11")),
						JobRequest.of("report.monthly", Map.of("month", "2026-12")))));
				assertThat(TransactionSynchronizationManager.getSynchronizations())
					.as("one synchronization for the transaction, not one per job")
					.hasSize(before + 1);
				assertThat(countOf(new JdbcTemplate(elsewhere), ids)).as("invisible until the transaction commits")
					.isZero();
				status.setRollbackOnly();
			});
		}

		assertThat(countOf(this.fixture.jdbc(), ids)).isZero();
		assertThat(messagesAt(Level.INFO)).singleElement().satisfies((message) -> {
			assertThat(message).startsWith("A transaction rolled back, discarding 4 jobs it had enqueued, which will "
					+ "not run: " + ids.get(0) + " (kind 'report.monthly', queue 'default'), " + ids.get(1)
					+ " (kind 'email.welcome', queue 'mail'), ");
			assertThat(message).contains(ids.get(2).toString(), ids.get(3).toString(),
					"a test whose transaction rolls back or never commits (a @Transactional test) never sees its jobs "
							+ "run");
		});
	}

	@Test
	void anEnqueueThatJoinsATransactionSaysAtDebugThatItsJobWaitsForTheCommit() {
		JobClient client = this.engine.client();
		UUID id = this.fixture.transactionTemplate()
			.execute((status) -> client.enqueue(JobRequest.of("email.welcome", Map.of("to", "ada@example.com"))
				.queue("mail")));

		assertThat(messagesAt(Level.DEBUG)).singleElement()
			.isEqualTo("1 job joined the caller's transaction and becomes visible to workers once it commits (never if it "
					+ "rolls back or stays open): " + id + " (kind 'email.welcome', queue 'mail')");
		assertThat(messagesAt(Level.INFO)).as("a commit discards nothing").isEmpty();
		assertThat(this.fixture.row(id)).containsEntry("state", "available");
	}

	@Test
	void aTransactionThatSuspendsAnotherLogsOnlyTheJobsItDiscardedItself() {
		JobClient client = this.engine.client();
		TransactionTemplate inner = this.fixture.transactionTemplate();
		inner.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		List<UUID> outerIds = new ArrayList<>();
		List<UUID> innerIds = new ArrayList<>();
		this.fixture.transactionTemplate().executeWithoutResult((outer) -> {
			outerIds.add(client.enqueue(JobRequest.of("email.welcome", 1).queue("mail")));
			inner.executeWithoutResult((status) -> {
				innerIds.add(client.enqueue(JobRequest.of("report.monthly", 2).queue("reports")));
				status.setRollbackOnly();
			});
		});

		assertThat(countOf(this.fixture.jdbc(), outerIds)).isOne();
		assertThat(countOf(this.fixture.jdbc(), innerIds)).isZero();
		assertThat(messagesAt(Level.INFO)).singleElement()
			.satisfies((message) -> assertThat(message).contains("discarding 1 job it had enqueued, which will not run: "
					+ innerIds.get(0) + " (kind 'report.monthly', queue 'reports').")
				.doesNotContain(outerIds.get(0).toString()));
	}

	@Test
	void anEnqueueOutsideATransactionSaysNothingAboutOne() {
		UUID id = this.engine.client().enqueue("email.welcome", Map.of("to", "ada@example.com"));

		assertThat(this.logs.list).isEmpty();
		assertThat(this.fixture.row(id)).containsEntry("state", "available");
	}

	@Test
	void aTransactionThatEnqueuedNothingLogsNothingWhenItRollsBack() {
		this.fixture.transactionTemplate().executeWithoutResult((status) -> {
			this.fixture.jdbc().queryForObject("SELECT 1", Integer.class);
			status.setRollbackOnly();
		});

		assertThat(this.logs.list).isEmpty();
	}

	private List<String> messagesAt(Level level) {
		return this.logs.list.stream()
			.filter((event) -> event.getLevel() == level)
			.map(ILoggingEvent::getFormattedMessage)
			.toList();
	}

	private long countOf(JdbcTemplate jdbc, List<UUID> ids) {
		long count = 0;
		for (UUID id : ids) {
			Long found = jdbc.queryForObject("SELECT count(*) FROM " + this.fixture.allJobs() + " WHERE public_id = ?",
					Long.class, id);
			count += (found != null) ? found : 0;
		}
		return count;
	}

}
