package dev.pgqueue.autoconfigure;

import java.util.List;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.schema.BucketClaimIndex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bucket claim index as an application gets it from its configuration: created at start-up when a
 * queue claims by buckets, absent otherwise, and, where pgqueue does not migrate the schema, a start-up
 * that fails naming the queue and the statement to run.
 */
class BucketClaimIndexAutoConfigurationTests {

	private final FreshSchema schema = FreshSchema.named("pgqueue_bucket_index");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class))
		.withPropertyValues(this.schema.properties())
		.withUserConfiguration(QueueAutoConfigurationTests.ReportListenerConfiguration.class)
		.withPropertyValues("pgqueue.shutdown-timeout=5s");

	@AfterEach
	void dropSchema() {
		this.schema.drop();
	}

	@Test
	void anApplicationWithoutBucketQueuesGetsNoBucketClaimIndex() {
		this.contextRunner.withPropertyValues("pgqueue.queues.reports.concurrency=2").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(indexes(context.getBean(JdbcTemplate.class))).contains("pgqueue_jobs_claim_idx")
				.doesNotContain(BucketClaimIndex.NAME);
		});
	}

	@Test
	void aQueueWithBucketAssignmentGetsTheIndexItsClaimsRead() {
		this.contextRunner.withPropertyValues("pgqueue.queues.reports.assignment=buckets").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(indexes(context.getBean(JdbcTemplate.class))).contains(BucketClaimIndex.NAME);
		});
	}

	@Test
	void withoutMigrationStartUpFailsNamingTheQueueAndTheStatementToRun() {
		this.contextRunner.run((context) -> assertThat(context).hasNotFailed());
		this.contextRunner
			.withPropertyValues("pgqueue.schema.migrate=false", "pgqueue.queues.reports.assignment=buckets")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.isInstanceOf(InvalidQueueConfigurationException.class)
					.hasMessageContaining("[reports]")
					.hasMessageContaining(BucketClaimIndex.NAME);
				InvalidQueueConfigurationException refusal = (InvalidQueueConfigurationException) rootCause(
						context.getStartupFailure());
				assertThat(refusal.key()).isEqualTo("pgqueue.queues.reports.assignment");
				assertThat(refusal.action()).contains("CREATE INDEX CONCURRENTLY IF NOT EXISTS " + BucketClaimIndex.NAME);
			});
	}

	private static Throwable rootCause(Throwable failure) {
		Throwable cause = failure;
		while (cause.getCause() != null && cause.getCause() != cause) {
			cause = cause.getCause();
		}
		return cause;
	}

	private List<String> indexes(JdbcTemplate jdbc) {
		return jdbc.queryForList("SELECT indexname FROM pg_indexes WHERE schemaname = ? AND tablename = 'pgqueue_jobs'",
				String.class, this.schema.name());
	}

}
