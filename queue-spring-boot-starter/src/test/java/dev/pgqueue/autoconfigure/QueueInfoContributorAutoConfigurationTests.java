package dev.pgqueue.autoconfigure;

import java.io.IOException;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.pgqueue.Job;
import dev.pgqueue.JobListener;
import dev.pgqueue.schema.QueueMigrator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link QueueInfoContributorAutoConfiguration}: pgqueue's entry in the {@code info}
 * endpoint, read from a real schema and a running engine.
 */
class QueueInfoContributorAutoConfigurationTests {

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_info");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class,
				QueueInfoContributorAutoConfiguration.class))
		.withPropertyValues(SCHEMA.properties())
		.withPropertyValues("pgqueue.shutdown-timeout=5s", "pgqueue.queues.billing.mode=leased",
				"pgqueue.queues.billing.concurrency=3", "pgqueue.queues.billing.poll-interval=250ms")
		.withUserConfiguration(InvoiceListener.class);

	@AfterAll
	static void dropSchema() {
		SCHEMA.drop();
	}

	@Test
	void describesTheSchemaItsVersionAndTheQueues() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(QueueInfoContributor.class);
			JsonNode pgqueue = pgqueueEntry(context.getBean(InfoContributor.class));
			assertThat(pgqueue.path("schema").path("name").asString()).isEqualTo(SCHEMA.name());
			assertThat(pgqueue.path("schema").path("version").asString()).isEqualTo(newestMigration());
			assertThat(pgqueue.path("processing").asBoolean()).isTrue();
			JsonNode billing = pgqueue.path("queues").path("billing");
			assertThat(billing.path("mode").asString()).isEqualTo("leased");
			assertThat(billing.path("concurrency").asInt()).isEqualTo(3);
			assertThat(billing.path("pollInterval").asString()).isEqualTo("PT0.25S");
			// A queue a listener names without configuration runs with the defaults.
			JsonNode reports = pgqueue.path("queues").path("reports");
			assertThat(reports.path("mode").asString()).isEqualTo("transactional");
			assertThat(reports.path("concurrency").asInt()).isEqualTo(4);
		});
	}

	@Test
	void anApplicationThatOnlyEnqueuesListsTheConfiguredQueues() {
		this.contextRunner.withPropertyValues("pgqueue.enabled=false").run((context) -> {
			JsonNode pgqueue = pgqueueEntry(context.getBean(InfoContributor.class));
			assertThat(pgqueue.path("processing").asBoolean()).isFalse();
			assertThat(pgqueue.path("queues").propertyNames()).containsExactly("billing");
		});
	}

	@Test
	void noVersionWhereTheMigratorDidNotCreateTheSchema() {
		this.contextRunner.run((context) -> {
			QueueMigrator migrator = context.getBean(QueueMigrator.class);
			context.getBean(org.springframework.jdbc.core.JdbcTemplate.class)
				.execute("ALTER TABLE " + SCHEMA.name() + ".pgqueue_schema_history RENAME TO moved_history");
			try {
				assertThat(migrator.schemaVersion()).isNull();
				JsonNode pgqueue = pgqueueEntry(context.getBean(InfoContributor.class));
				assertThat(pgqueue.path("schema").has("version")).isFalse();
			}
			finally {
				context.getBean(org.springframework.jdbc.core.JdbcTemplate.class)
					.execute("ALTER TABLE " + SCHEMA.name() + ".moved_history RENAME TO pgqueue_schema_history");
			}
		});
	}

	@Test
	void backsOffWhenTheContributorIsDisabled() {
		this.contextRunner.withPropertyValues("management.info.pgqueue.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(QueueInfoContributor.class));
		this.contextRunner.withPropertyValues("management.info.defaults.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(QueueInfoContributor.class));
	}

	@Test
	void backsOffWithoutActuator() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(InfoContributor.class))
			.run((context) -> assertThat(context).doesNotHaveBean(QueueInfoContributor.class));
	}

	/** The entry as the info endpoint writes it: with Actuator's JSON mapper, nulls left out. */
	private static JsonNode pgqueueEntry(InfoContributor contributor) {
		Info.Builder builder = new Info.Builder();
		contributor.contribute(builder);
		Object entry = builder.build().getDetails().get("pgqueue");
		assertThat(entry).as("the pgqueue entry").isNotNull();
		JsonMapper mapper = JsonMapper.builder()
			.changeDefaultPropertyInclusion((value) -> value
				.withValueInclusion(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL))
			.build();
		return mapper.valueToTree(entry);
	}

	/** The version of the newest migration in queue-core's jar, such as {@code 14}. */
	private static String newestMigration() throws IOException {
		Pattern version = Pattern.compile("V(\\d+)__.*\\.sql");
		Resource[] migrations = new PathMatchingResourcePatternResolver()
			.getResources(QueueMigrator.LOCATION + "/V*__*.sql");
		return Arrays.stream(migrations)
			.map((resource) -> version.matcher(Objects.requireNonNull(resource.getFilename())))
			.filter(Matcher::matches)
			.map((matcher) -> Integer.parseInt(matcher.group(1)))
			.max(Comparator.naturalOrder())
			.map(String::valueOf)
			.orElseThrow();
	}

	static class InvoiceListener {

		@JobListener(kind = "invoice.send", queue = "billing")
		void send(Job job) {
		}

		@JobListener(kind = "report.build", queue = "reports")
		void build(Job job) {
		}

	}

}
