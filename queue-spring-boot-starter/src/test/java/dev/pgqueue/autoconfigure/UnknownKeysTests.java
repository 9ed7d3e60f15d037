package dev.pgqueue.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

import dev.pgqueue.JobListener;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A key under {@code pgqueue} that binds to nothing fails start-up with the key, its value, where it
 * was set and the key it is most likely a typo of, as Spring Boot reports a bad binding. Keys that
 * exist, in every form Spring Boot binds, start; so do environment variables and system properties
 * whose names start with {@code PGQUEUE}/{@code pgqueue}, which other tools use. The YAML files under
 * {@code keys/} are loaded as Spring Boot loads an {@code application.yml}, so that the reports name
 * their lines.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownKeysTests {

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_keys");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class))
		.withUserConfiguration(OrdersListener.class)
		.withPropertyValues(SCHEMA.properties())
		.withPropertyValues("pgqueue.shutdown-timeout=5s");

	@AfterAll
	static void dropSchema() {
		SCHEMA.drop();
	}

	@Test
	void aMisspeltQueueSettingFailsStartupNamingItsLineAndTheSettingItMeant() {
		this.contextRunner.withInitializer(yaml("misspelt-queue-setting.yml")).run((context) -> {
			FailureAnalysis analysis = analysisOf(context);
			assertThat(analysis.getDescription()).isEqualTo(lines("Unknown pgqueue key:", "",
					"    Property: pgqueue.queues.orders.concurency",
					"    Origin: class path resource [keys/misspelt-queue-setting.yml] - 5:19",
					"    Reason: pgqueue.queues.orders has no key 'concurency'; did you mean "
							+ "pgqueue.queues.orders.concurrency?"));
			assertThat(analysis.getAction())
				.isEqualTo("Rename pgqueue.queues.orders.concurency to pgqueue.queues.orders.concurrency.");
		});
	}

	@Test
	void theReportNeverShowsTheValueOfTheUnknownKeyWhichMayBeASecret() {
		this.contextRunner.withPropertyValues("pgqueue.schema.pasword=hunter2-secret").run((context) -> {
			FailureAnalysis analysis = analysisOf(context);
			assertThat(analysis.getDescription()).contains("pgqueue.schema.pasword").doesNotContain("hunter2");
			assertThat(analysis.getAction()).doesNotContain("hunter2");
		});
	}

	@Test
	void misspeltTopLevelAndGroupKeysAreReportedTogether() {
		this.contextRunner.withInitializer(yaml("misspelt-group-keys.yml")).run((context) -> {
			FailureAnalysis analysis = analysisOf(context);
			assertThat(analysis.getDescription()).isEqualTo(lines("Unknown pgqueue keys:", "",
					"    Property: pgqueue.maintenance.stats-intervall",
					"    Origin: class path resource [keys/misspelt-group-keys.yml] - 4:22",
					"    Reason: pgqueue.maintenance has no key 'stats-intervall'; did you mean "
							+ "pgqueue.maintenance.stats-interval?",
					"", "    Property: pgqueue.shutdown-timout",
					"    Origin: class path resource [keys/misspelt-group-keys.yml] - 2:20",
					"    Reason: pgqueue has no key 'shutdown-timout'; did you mean pgqueue.shutdown-timeout?"));
			assertThat(analysis.getAction()).isEqualTo(lines(
					"Rename pgqueue.maintenance.stats-intervall to pgqueue.maintenance.stats-interval.",
					"Rename pgqueue.shutdown-timout to pgqueue.shutdown-timeout."));
		});
	}

	@Test
	void aMisspeltSettingOfAKindIsReportedUnderItsKindInBrackets() {
		this.contextRunner.withInitializer(yaml("misspelt-kind-setting.yml")).run((context) -> {
			FailureAnalysis analysis = analysisOf(context);
			assertThat(analysis.getDescription()).contains("Property: pgqueue.kinds[report.render].max-runing",
					"Origin: class path resource [keys/misspelt-kind-setting.yml] - 4:19",
					"Reason: pgqueue.kinds[report.render] has no key 'max-runing'; did you mean "
							+ "pgqueue.kinds[report.render].max-running?");
			assertThat(analysis.getAction())
				.isEqualTo("Rename pgqueue.kinds[report.render].max-runing to pgqueue.kinds[report.render].max-running.");
		});
	}

	@Test
	void aKindWithDotsWrittenWithoutBracketsFailsStartupShowingTheBrackets() {
		this.contextRunner.withInitializer(yaml("kind-with-dots.yml")).run((context) -> {
			FailureAnalysis analysis = analysisOf(context);
			assertThat(analysis.getDescription()).contains("Property: pgqueue.kinds.report.render.timeout",
					"Origin: class path resource [keys/kind-with-dots.yml] - 4:16",
					"Reason: pgqueue.kinds.report has no key 'render'; a name with dots goes in brackets: did you "
							+ "mean pgqueue.kinds[report.render].timeout?");
			assertThat(analysis.getAction()).isEqualTo("Rename pgqueue.kinds.report.render.timeout to "
					+ "pgqueue.kinds[report.render].timeout (in YAML, \"[report.render]\" as the key under kinds).");
		});
	}

	@Test
	void aMisspeltDashboardKeyFailsStartupInAnApplicationThatServesNoDashboard() {
		this.contextRunner.withInitializer(yaml("misspelt-dashboard-key.yml")).run((context) -> {
			FailureAnalysis analysis = analysisOf(context);
			assertThat(analysis.getDescription()).contains("Property: pgqueue.dashboard.enabeld",
					"Origin: class path resource [keys/misspelt-dashboard-key.yml] - 3:14",
					"Reason: pgqueue.dashboard has no key 'enabeld'; did you mean pgqueue.dashboard.enabled?");
		});
	}

	@Test
	void aKeyLikeNoneOfItsLevelListsTheKeysOfItsLevelOrNamesTheLevelThatHasIt() {
		this.contextRunner.withInitializer(yaml("unlike-any-key.yml")).run((context) -> {
			FailureAnalysis analysis = analysisOf(context);
			assertThat(analysis.getDescription()).contains("Property: pgqueue.queues.orders.workers",
					"Reason: pgqueue.queues.orders has no key 'workers'; its keys are assignment, batch-size, buckets, "
							+ "claim-ahead, concurrency, fair-by-key, key-weights.*, lease-duration, max-attempts, "
							+ "max-batch-size, max-running, "
							+ "mode, non-retryable-exceptions, ordered-by-key, per-key-concurrency, per-key-rate-limit.*, "
							+ "poll-interval, rate-limit.*, retry.*, run-at-jitter, sla, timeout, two-phase-commit",
					"Property: pgqueue.concurrency",
					"Reason: pgqueue has no key 'concurrency'; did you mean pgqueue.queues.<name>.concurrency?");
			assertThat(analysis.getAction()).isEqualTo(lines(
					"Rename pgqueue.concurrency to pgqueue.queues.<name>.concurrency.",
					"Remove pgqueue.queues.orders.workers, or replace it with one of the keys of "
							+ "pgqueue.queues.orders."));
		});
	}

	@Test
	void everyKeyInEachFormSpringBootBindsStartsAndBinds() {
		this.contextRunner.withInitializer(yaml("every-key.yml")).run((context) -> {
			assertThat(context).hasNotFailed();
			QueueProperties properties = context.getBean(QueueProperties.class);
			assertThat(properties.getQueues().get("orders").getRetry().getMultiplier()).isEqualTo(3.0);
			assertThat(properties.getQueues().get("orders").getRateLimit().getStarts()).isEqualTo(100);
			assertThat(properties.getQueues().get("orders").getNonRetryableExceptions())
				.containsExactly(IllegalArgumentException.class);
			assertThat(properties.getQueues().get("mail").getBatchSize()).isEqualTo(20);
			assertThat(properties.getQueues().get("mail").getNonRetryableExceptions())
				.containsExactly(IllegalStateException.class, UnsupportedOperationException.class);
			assertThat(properties.getKinds().get("report.render").getMaxRunning()).isEqualTo(2);
			assertThat(properties.getKinds().get("invoice").getMaxRunning()).isEqualTo(3);
			assertThat(properties.getDashboard().getPath()).isEqualTo("/queues");
			assertThat(properties.getDashboard().getRefreshInterval()).hasSeconds(10);
		});
	}

	@Test
	void environmentVariablesAndSystemPropertiesAreNotChecked() {
		this.contextRunner
			.withInitializer(environment(Map.of("PGQUEUE_TEST_JDBC_URL", "jdbc:postgresql://elsewhere/test",
					"PGQUEUE_QUEUES_ORDERS_CONCURENCY", "8"), Map.of("pgqueue.test.chromium", "/usr/bin/chromium")))
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void anApplicationThatFailsToStartPrintsTheReportOfTheUnknownKey(CapturedOutput output) {
		SpringApplicationBuilder application = new SpringApplicationBuilder(KeysApplication.class)
			.web(WebApplicationType.NONE)
			.registerShutdownHook(false)
			.properties(SCHEMA.properties());
		assertThatException()
			.isThrownBy(() -> application.run("--spring.config.location=classpath:/keys/misspelt-queue-setting.yml"));
		assertThat(output).contains("APPLICATION FAILED TO START", lines("Description:", "", "Unknown pgqueue key:", "",
				"    Property: pgqueue.queues.orders.concurency",
				"    Origin: class path resource [keys/misspelt-queue-setting.yml] - 5:19",
				"    Reason: pgqueue.queues.orders has no key 'concurency'; did you mean "
						+ "pgqueue.queues.orders.concurrency?",
				"", "Action:", "", "Rename pgqueue.queues.orders.concurency to pgqueue.queues.orders.concurrency."));
	}

	/**
	 * The analysis Spring Boot would report: of the failure analyzers of the class path, in their order,
	 * the first that analyzes the failure. Analyzers that need the bean factory are left out.
	 */
	private static FailureAnalysis analysisOf(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		Throwable failure = context.getStartupFailure();
		return SpringFactoriesLoader.forDefaultResourceLocation(UnknownKeysTests.class.getClassLoader())
			.load(FailureAnalyzer.class, (factoryType, factoryImplementationName, ex) -> {
			})
			.stream()
			.map((analyzer) -> analyzer.analyze(failure))
			.filter(java.util.Objects::nonNull)
			.findFirst()
			.orElseThrow(() -> new AssertionError("No failure analyzer analyzed " + failure));
	}

	/** Adds a YAML file of {@code keys/} to the environment, as Spring Boot adds an application.yml. */
	private static ApplicationContextInitializer<ConfigurableApplicationContext> yaml(String file) {
		return (context) -> {
			try {
				for (PropertySource<?> source : new YamlPropertySourceLoader().load(file,
						new ClassPathResource("keys/" + file))) {
					context.getEnvironment().getPropertySources().addFirst(source);
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		};
	}

	/** Puts these in place of the environment variables and system properties of the JVM. */
	private static ApplicationContextInitializer<ConfigurableApplicationContext> environment(
			Map<String, Object> variables, Map<String, Object> systemProperties) {
		return (context) -> {
			MutablePropertySources sources = context.getEnvironment().getPropertySources();
			sources.replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
					new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
							variables));
			sources.replace(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME,
					new MapPropertySource(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME, systemProperties));
		};
	}

	private static String lines(String... lines) {
		return String.join(System.lineSeparator(), lines);
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class,
			QueueAutoConfiguration.class })
	@Import(OrdersListener.class)
	static class KeysApplication {

	}

	/** A listener of queue {@code orders}, so that configuring that queue is no mistake. */
	static class OrdersListener {

		@JobListener(kind = "keys.order", queue = "orders")
		void handle(String payload) {
		}

	}

}
