package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobListener;
import dev.pgqueue.JobRequest;
import dev.pgqueue.metrics.QueueMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link QueueMetricsAutoConfiguration}: the meters a running queue publishes.
 */
class QueueMetricsAutoConfigurationTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_metrics");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class,
				QueueMetricsAutoConfiguration.class))
		.withPropertyValues(SCHEMA.properties())
		.withPropertyValues("pgqueue.shutdown-timeout=5s", "pgqueue.queues.metered.poll-interval=100ms",
				"pgqueue.maintenance.stats-interval=100ms", "pgqueue.maintenance.promote-interval=100ms");

	@AfterAll
	static void dropSchema() {
		SCHEMA.drop();
	}

	@Test
	void backsOffWithoutAMeterRegistry() {
		this.contextRunner.withUserConfiguration(ReportListener.class)
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(QueueMetrics.class)
				.doesNotHaveBean(DatabaseMetrics.class));
	}

	@Test
	void publishesToTheMeterRegistryOfSpringBootsMetricsAutoConfiguration() {
		this.contextRunner.withUserConfiguration(ReportListener.class)
			.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasSingleBean(DatabaseMetrics.class);
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				// Configured queues have their meters before any work happens.
				assertThat(registry.find("pgqueue.poll.cycle").tag("queue", "metered").timer()).isNotNull();
				assertThat(registry.find("pgqueue.queue.depth").tag("queue", "metered").gauge()).isNotNull();
				assertThat(registry.find("pgqueue.poll.cycle.assessment").tag("queue", "metered").gauge()).isNotNull();
				assertThat(registry.find("pgqueue.jobs.claimed").tag("queue", "metered").counter()).isNotNull();
				assertThat(registry.find("pgqueue.claims.unproductive").tag("queue", "metered").counter()).isNotNull();
				assertThat(registry.find("pgqueue.jobs.sla.missed").tag("queue", "metered").counter()).isNotNull();
				assertThat(registry.find("pgqueue.handlers.abandoned").tag("queue", "metered").gauge()).isNotNull();
				assertThat(registry.find("pgqueue.queue.paused").tag("queue", "metered").gauge()).isNotNull();
				assertThat(registry.find("pgqueue.queue.unpolled.jobs").tag("queue", "metered").gauge()).isNotNull();
				assertThat(registry.find("pgqueue.database.lock.waits").gauge()).isNotNull();
			});
	}

	@Test
	void userDefinedQueueMetricsMakesTheMicrometerOneBackOff() {
		this.contextRunner.withUserConfiguration(SimpleMeterRegistryConfiguration.class, ReportListener.class)
			.withBean("customQueueMetrics", QueueMetrics.class, () -> new QueueMetrics() {
			})
			.run((context) -> assertThat(context).hasSingleBean(QueueMetrics.class)
				.doesNotHaveBean(DatabaseMetrics.class));
	}

	@Test
	void timesPollCyclesAndCountsCompletedJobsByQueueAndKind() {
		this.contextRunner.withUserConfiguration(SimpleMeterRegistryConfiguration.class, ReportListener.class)
			.run((context) -> {
				context.getBean(JobClient.class).enqueue("report.render", "monthly");
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				await().atMost(TIMEOUT).untilAsserted(() -> {
					Counter completed = registry.find("pgqueue.jobs.completed")
						.tags("queue", "metered", "kind", "report.render")
						.counter();
					assertThat(completed).isNotNull();
					assertThat(completed.count()).isGreaterThanOrEqualTo(1.0);
				});
				Timer pollCycle = registry.get("pgqueue.poll.cycle").tag("queue", "metered").timer();
				assertThat(pollCycle.count()).isPositive();
				DistributionSummary batchSize = registry.get("pgqueue.claim.batch.size")
					.tag("queue", "metered")
					.summary();
				assertThat(batchSize.count()).isPositive();
				assertThat(batchSize.max()).isGreaterThanOrEqualTo(1.0);
				assertThat(registry.get("pgqueue.jobs.claimed").tag("queue", "metered").counter().count())
					.isGreaterThanOrEqualTo(1.0);
				Timer handler = registry.get("pgqueue.handler.duration")
					.tags("queue", "metered", "kind", "report.render", "outcome", "completed")
					.timer();
				assertThat(handler.count()).isGreaterThanOrEqualTo(1);
			});
	}

	@Test
	void gaugesWhetherAnOperatorPausedTheQueue() {
		this.contextRunner.withUserConfiguration(SimpleMeterRegistryConfiguration.class, ReportListener.class)
			.run((context) -> {
				JobAdmin admin = context.getBean(JobAdmin.class);
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				admin.pause("metered");
				try {
					await().atMost(TIMEOUT)
						.untilAsserted(() -> assertThat(
								registry.get("pgqueue.queue.paused").tag("queue", "metered").gauge().value())
							.isEqualTo(1.0));
				}
				finally {
					admin.resume("metered");
				}
				await().atMost(TIMEOUT)
					.untilAsserted(() -> assertThat(
							registry.get("pgqueue.queue.paused").tag("queue", "metered").gauge().value())
						.isZero());
			});
	}

	@Test
	void gaugesTheDepthAndOldestAgeOfEachQueue() {
		this.contextRunner.withUserConfiguration(SimpleMeterRegistryConfiguration.class, ReportListener.class)
			.run((context) -> {
			JobClient jobClient = context.getBean(JobClient.class);
			jobClient.enqueue(JobRequest.of("backlog.item", 1).queue("backlog"));
			jobClient.enqueue(JobRequest.of("backlog.item", 2).queue("backlog"));
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			await().atMost(TIMEOUT).untilAsserted(() -> {
				Gauge depth = registry.find("pgqueue.queue.depth").tag("queue", "backlog").gauge();
				assertThat(depth).isNotNull();
				assertThat(depth.value()).isEqualTo(2.0);
				TimeGauge oldestAge = registry.find("pgqueue.queue.oldest.age").tag("queue", "backlog").timeGauge();
				assertThat(oldestAge).isNotNull();
				assertThat(oldestAge.value(TimeUnit.MILLISECONDS)).isPositive();
			});
		});
	}

	@Test
	void gaugesHowLongTheOldestSnapshotInTheDatabaseHasBeenHeld() {
		this.contextRunner.withUserConfiguration(SimpleMeterRegistryConfiguration.class, ReportListener.class)
			.run((context) -> {
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				try (java.sql.Connection holder = context.getBean(javax.sql.DataSource.class).getConnection()) {
					holder.setAutoCommit(false);
					holder.setTransactionIsolation(java.sql.Connection.TRANSACTION_REPEATABLE_READ);
					try (java.sql.Statement statement = holder.createStatement()) {
						statement.executeQuery("SELECT count(*) FROM pg_class").close();
					}
					await().atMost(TIMEOUT).untilAsserted(() -> assertThat(
							registry.get("pgqueue.database.oldest.transaction.age").timeGauge().value(TimeUnit.MILLISECONDS))
						.isGreaterThan(200.0));
					holder.rollback();
				}
			});
	}

	@Test
	void countsRetriedAndFailedJobs() {
		this.contextRunner.withUserConfiguration(SimpleMeterRegistryConfiguration.class, FailingListener.class)
			.withPropertyValues("pgqueue.queues.metered.max-attempts=2",
					"pgqueue.queues.metered.retry.initial-delay=50ms", "pgqueue.queues.metered.retry.max-delay=50ms",
					"pgqueue.queues.metered.retry.jitter=0")
			.run((context) -> {
				UUID id = context.getBean(JobClient.class).enqueue("report.broken", "always fails");
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				// The counters and the handler's timer of the last attempt are recorded one after the
				// other, by the worker: wait for all of them, not just the first.
				await().atMost(TIMEOUT).untilAsserted(() -> {
					Counter failed = registry.find("pgqueue.jobs.failed")
						.tags("queue", "metered", "kind", "report.broken")
						.counter();
					assertThat(failed).isNotNull();
					assertThat(failed.count()).isEqualTo(1.0);
					assertThat(registry.get("pgqueue.jobs.retried")
						.tags("queue", "metered", "kind", "report.broken")
						.counter()
						.count()).isEqualTo(1.0);
					assertThat(registry.get("pgqueue.handler.duration")
						.tags("queue", "metered", "kind", "report.broken", "outcome", "retried")
						.timer()
						.count()).isEqualTo(1);
					assertThat(registry.get("pgqueue.handler.duration")
						.tags("queue", "metered", "kind", "report.broken", "outcome", "failed")
						.timer()
						.count()).isEqualTo(1);
				});
				assertThat(registry.find("pgqueue.jobs.completed").tag("kind", "report.broken").counter()).isNull();
				assertThat(SCHEMA.stateOf(context.getBean(JdbcTemplate.class), id))
					.isEqualTo("failed");
			});
	}

	@Test
	void countsJobsThatRanPastTheirTimeLimit() {
		this.contextRunner.withUserConfiguration(SimpleMeterRegistryConfiguration.class, SlowListener.class)
			.withPropertyValues("pgqueue.queues.metered.mode=leased", "pgqueue.kinds[report.slow].timeout=200ms",
					"pgqueue.queues.metered.retry.initial-delay=1h", "pgqueue.queues.metered.retry.max-delay=1h")
			.run((context) -> {
				UUID id = context.getBean(JobClient.class).enqueue("report.slow", "never in time");
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				await().atMost(TIMEOUT).untilAsserted(() -> {
					Counter timedOut = registry.find("pgqueue.jobs.timed.out")
						.tags("queue", "metered", "kind", "report.slow")
						.counter();
					assertThat(timedOut).isNotNull();
					assertThat(timedOut.count()).isEqualTo(1.0);
				});
				assertThat(registry.get("pgqueue.jobs.retried")
					.tags("queue", "metered", "kind", "report.slow")
					.counter()
					.count()).isEqualTo(1.0);
				// The interrupted listener gives its thread back.
				await().atMost(TIMEOUT)
					.untilAsserted(() -> assertThat(
							registry.get("pgqueue.handlers.abandoned").tag("queue", "metered").gauge().value())
						.isZero());
				assertThat(SCHEMA.stateOf(context.getBean(JdbcTemplate.class), id)).isEqualTo("scheduled");
			});
	}

	@Test
	void publishesThePollCycleAsAPrometheusHistogram() {
		this.contextRunner.withUserConfiguration(PrometheusMeterRegistryConfiguration.class, ReportListener.class)
			.run((context) -> {
				PrometheusMeterRegistry registry = context.getBean(PrometheusMeterRegistry.class);
				await().atMost(TIMEOUT)
					.untilAsserted(() -> assertThat(registry.scrape())
						.containsPattern("pgqueue_poll_cycle_seconds_bucket\\{[^}]*queue=\"metered\"[^}]*} [1-9]"));
				assertThat(registry.scrape()).contains("pgqueue_poll_cycle_seconds_count{queue=\"metered\"}");
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class SimpleMeterRegistryConfiguration {

		@Bean
		SimpleMeterRegistry simpleMeterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PrometheusMeterRegistryConfiguration {

		@Bean
		PrometheusMeterRegistry prometheusMeterRegistry() {
			return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
		}

	}

	static class ReportListener {

		@JobListener(kind = "report.render", queue = "metered")
		void render(String report) {
		}

	}

	static class SlowListener {

		@JobListener(kind = "report.slow", queue = "metered", timeout = "1h")
		void render(String report) throws InterruptedException {
			Thread.sleep(Duration.ofMinutes(1).toMillis());
		}

	}

	static class FailingListener {

		@JobListener(kind = "report.broken", queue = "metered")
		void render(String report) {
			throw new IllegalStateException("the renderer is broken");
		}

	}

}
