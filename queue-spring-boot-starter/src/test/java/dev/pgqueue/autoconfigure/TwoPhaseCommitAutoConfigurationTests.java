package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import dev.pgqueue.ExternalEffect;
import dev.pgqueue.InDoubtJobResolver;
import dev.pgqueue.Job;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobListener;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.TwoPhaseSettings;
import dev.pgqueue.engine.twophase.InDoubtResolver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for what {@link QueueAutoConfiguration} wires for queues with two-phase commit: the
 * listener's external effect, the in-doubt resolver service, its settings, metrics and health.
 */
class TwoPhaseCommitAutoConfigurationTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_two_phase");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class,
				QueueMetricsAutoConfiguration.class, QueueHealthAutoConfiguration.class))
		.withPropertyValues(SCHEMA.properties())
		.withPropertyValues("pgqueue.shutdown-timeout=5s", "pgqueue.queues.payments.two-phase-commit=true",
				"pgqueue.queues.payments.poll-interval=100ms");

	@AfterAll
	static void dropSchema() {
		SCHEMA.drop();
	}

	@Test
	void runsTheEffectAListenerReturnsWhileItsJobsTransactionIsPrepared() {
		this.contextRunner.withUserConfiguration(PaymentConfiguration.class, SimpleMeterRegistryConfiguration.class)
			.run((context) -> {
				UUID id = context.getBean(JobClient.class).enqueue("payment.capture", new Capture(42));
				PaymentListener listener = context.getBean(PaymentListener.class);
				await().atMost(TIMEOUT).until(() -> "completed".equals(SCHEMA.stateOf(jdbc(context), id)));
				assertThat(listener.sawPrepared).containsEntry(id, true);
				JobPoller poller = QueueAutoConfigurationTests.poller(context, "payments");
				assertThat(poller.settings().batchSize()).as("batch size of a two-phase queue by default").isEqualTo(1);
				assertThat(jdbc(context).queryForObject(
						"SELECT count(*) FROM pg_prepared_xacts WHERE starts_with(gid, ?)", Long.class,
						"pgqueue:" + SCHEMA.name() + ":")).isZero();
			});
	}

	@Test
	void startsTheInDoubtResolverWithItsSettingsAndReportsPreparedTransactions() {
		this.contextRunner.withUserConfiguration(PaymentConfiguration.class, SimpleMeterRegistryConfiguration.class)
			.withPropertyValues("pgqueue.two-phase-commit.resolve-interval=200ms",
					"pgqueue.two-phase-commit.in-doubt-after=5s", "pgqueue.two-phase-commit.roll-back-after=10m")
			.run((context) -> {
				InDoubtResolver resolver = EngineInternals.of(context.getBean(QueueEngine.class)).inDoubtResolver();
				assertThat(resolver).isNotNull();
				assertThat(resolver.isRunning()).isTrue();
				assertThat(resolver.settings()).isEqualTo(new TwoPhaseSettings(
						Duration.ofMillis(200), Duration.ofSeconds(5), Duration.ofMinutes(10)));
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				// The resolver's first round runs at start-up.
				await().atMost(TIMEOUT)
					.untilAsserted(() -> assertThat(registry.find("pgqueue.prepared.transactions").gauge()).isNotNull());
				assertThat(registry.find("pgqueue.prepared.transactions.oldest.age").timeGauge()).isNotNull();
				Health health = context.getBean("pgqueueHealthIndicator", HealthIndicator.class).health(true);
				assertThat(health.getDetails()).extractingByKey("preparedTransactions")
					.isEqualTo(Map.of("count", 0L, "oldestAge", "PT0S", "inDoubt", 0L));
			});
	}

	@Test
	void runsNoResolverAndReportsNoPreparedTransactionsWithoutATwoPhaseQueue() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
					JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class,
					QueueHealthAutoConfiguration.class))
			.withPropertyValues(SCHEMA.properties())
			.withUserConfiguration(PlainListener.class)
			.run((context) -> {
				assertThat(EngineInternals.of(context.getBean(QueueEngine.class)).inDoubtResolver()).isNull();
				Health health = context.getBean("pgqueueHealthIndicator", HealthIndicator.class).health(true);
				assertThat(health.getDetails()).doesNotContainKey("preparedTransactions");
			});
	}

	@Test
	void failsStartupWhenATwoPhaseQueueHasNoInDoubtJobResolver() {
		this.contextRunner.withUserConfiguration(PaymentListener.class)
			.run((context) -> assertThat(QueueAutoConfigurationTests.failureMessages(context))
				.contains("Queue 'payments' uses two-phase commit, but the application defines no InDoubtJobResolver"));
	}

	@Test
	void failsStartupOnATwoPhaseQueueWithABatchSizeAboveOne() {
		this.contextRunner.withUserConfiguration(PaymentConfiguration.class)
			.withPropertyValues("pgqueue.queues.payments.batch-size=10")
			.run((context) -> assertThat(QueueAutoConfigurationTests.failureMessages(context))
				.contains("pgqueue.queues.payments.batch-size must be 1 with two-phase-commit, was 10"));
	}

	@Test
	void failsStartupWhenAListenerReturnsAnEffectOnAQueueWithoutTwoPhaseCommit() {
		this.contextRunner.withUserConfiguration(PaymentConfiguration.class)
			.withPropertyValues("pgqueue.queues.payments.two-phase-commit=false")
			.run((context) -> assertThat(QueueAutoConfigurationTests.failureMessages(context))
				.contains("returns an ExternalEffect, but its queue 'payments' does not use two-phase commit"));
	}

	private static JdbcTemplate jdbc(org.springframework.context.ApplicationContext context) {
		return context.getBean(JdbcTemplate.class);
	}

	record Capture(int amount) {
	}

	@Configuration(proxyBeanMethods = false)
	static class PaymentConfiguration {

		@Bean
		PaymentListener paymentListener(JdbcTemplate jdbc) {
			return new PaymentListener(jdbc);
		}

		@Bean
		InDoubtJobResolver paymentsResolver(PaymentListener listener) {
			return (job) -> listener.sawPrepared.containsKey(job.id());
		}

	}

	static class PaymentListener {

		final Map<UUID, Boolean> sawPrepared = new ConcurrentHashMap<>();

		private final JdbcTemplate jdbc;

		PaymentListener(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		PaymentListener() {
			this(null);
		}

		@JobListener(kind = "payment.capture", queue = "payments")
		ExternalEffect capture(Capture capture, Job job) {
			return () -> this.sawPrepared.put(job.id(), this.jdbc.queryForObject(
					"SELECT count(*) = 1 FROM pg_prepared_xacts WHERE gid LIKE ?", Boolean.class, "%" + job.id()));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PlainListener {

		@JobListener(kind = "plain.two-phase-tests")
		void handle(String payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SimpleMeterRegistryConfiguration {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

}
