package dev.pgqueue.autoconfigure;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobListener;
import dev.pgqueue.JobRequest;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link QueueHealthIndicator} as {@link QueueHealthAutoConfiguration} contributes it.
 */
class QueueHealthIndicatorTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_health");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class,
				QueueHealthAutoConfiguration.class))
		.withPropertyValues(SCHEMA.properties())
		.withPropertyValues("pgqueue.shutdown-timeout=5s", "pgqueue.maintenance.stats-interval=100ms",
				"pgqueue.queues.billing.mode=leased", "pgqueue.queues.billing.concurrency=2",
				"pgqueue.queues.billing.poll-interval=100ms")
		.withUserConfiguration(InvoiceListener.class);

	@AfterAll
	static void dropSchema() {
		SCHEMA.drop();
	}

	@Test
	void listsTheSchedulesAndMarksOneWhoseTickDidNotFireAsOverdue() {
		// An application that only enqueues runs no ticker: a due tick stays due, as when no instance that
		// processes jobs runs. Its health component is made here from its engine.
		this.contextRunner
			.withPropertyValues("pgqueue.enabled=false", "pgqueue.scheduling.grace=2h",
					"pgqueue.schedules.invoices.cron=0 0 * * * *",
					"pgqueue.schedules.invoices.kind=invoice.send", "pgqueue.schedules.elsewhere.cron=@daily",
					"pgqueue.schedules.elsewhere.kind=ledger.close")
			.run((context) -> {
				JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
				jdbc.update("UPDATE " + SCHEMA.name() + ".pgqueue_schedules SET next_tick = now() - interval '3 hours' "
						+ "WHERE name = 'invoices'");
				HealthIndicator indicator = new QueueHealthIndicator(context.getBean(QueueEngine.class));
				Health health = indicator.health(true);

				Map<?, ?> schedules = (Map<?, ?>) health.getDetails().get("schedules");
				Map<?, ?> invoices = (Map<?, ?>) schedules.get("invoices");
				assertThat(invoices.get("overdue")).isEqualTo(true);
				assertThat((String) invoices.get("warning")).contains("has not fired");
				assertThat(invoices.get("listenedHere")).isEqualTo(true);
				assertThat(invoices.get("queue")).isEqualTo("billing");
				Map<?, ?> elsewhere = (Map<?, ?>) schedules.get("elsewhere");
				assertThat(elsewhere.get("overdue")).isEqualTo(false);
				assertThat(elsewhere.get("listenedHere")).as("another service may run it").isEqualTo(false);
				jdbc.update("DELETE FROM " + SCHEMA.name() + ".pgqueue_schedules");
			});
	}

	@Test
	void isDownNamingAServiceWhoseThreadEndedAndWhatEndedIt() {
		this.contextRunner.withUserConfiguration(PoisonsThePoller.class).run((context) -> {
			HealthIndicator indicator = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
			await().atMost(TIMEOUT).untilAsserted(() -> {
				Health health = indicator.health(true);
				assertThat(health.getStatus()).isEqualTo(Status.DOWN);
				assertThat(health.getDetails()).extractingByKey("stoppedServices")
					.asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
					.containsOnlyKeys("billing poller")
					.extractingByKey("billing poller")
					.asString()
					.contains("StackOverflowError");
			});
		});
	}

	/**
	 * Hands the poller of queue 'billing' a failure whose message cannot be read, once: handling it
	 * ends the poller's thread, the one way a service can still stop.
	 */
	@Configuration(proxyBeanMethods = false)
	static class PoisonsThePoller {

		@Bean
		static BeanPostProcessor poisonsThePollersConnection() {
			AtomicBoolean poisoned = new AtomicBoolean();
			return new BeanPostProcessor() {

				@Override
				public Object postProcessAfterInitialization(Object bean, String name) {
					if (!(bean instanceof DataSource dataSource)) {
						return bean;
					}
					return new DelegatingDataSource(dataSource) {

						@Override
						public Connection getConnection() throws SQLException {
							if (Thread.currentThread().getName().startsWith("pgqueue-billing-poller")
									&& poisoned.compareAndSet(false, true)) {
								throw new RuntimeException() {

									@Override
									public String getMessage() {
										throw new StackOverflowError("poisoned message");
									}

									@Override
									public String toString() {
										throw new StackOverflowError("poisoned message");
									}

								};
							}
							return super.getConnection();
						}

					};
				}

			};
		}

	}

	@Test
	void isUpWithTheDetailsOfEachPolledQueue() {
		this.contextRunner.run((context) -> {
			// A kind that no listener here handles stays in the queue and makes its depth.
			context.getBean(JobClient.class).enqueue(JobRequest.of("invoice.archive", 1).queue("billing"));
			HealthIndicator indicator = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
			await().atMost(TIMEOUT).untilAsserted(() -> {
				Health health = indicator.health(true);
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(queueDetails(health, "billing")).containsEntry("depth", 1L)
					.containsEntry("polling", true)
					.containsEntry("mode", "leased")
					.containsEntry("concurrency", 2)
					.containsEntry("busyWorkers", 0)
					.containsEntry("assignment", "shared")
					.containsKeys("oldestAge", "scheduled", "running", "pollCycleP99")
					.doesNotContainKeys("sla", "slaMissed", "buckets", "leadsCoordinator");
				assertThat(queueDetails(health, "billing").get("pollCycle")).isIn("healthy", "degrading", "trouble",
						"broken");
				assertThat(health.getDetails()).extractingByKey("lockWaits")
					.asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
					.containsKeys("waiting", "applicationName");
			});
		});
	}

	@Test
	void showsHowManyBucketsThisInstanceClaimsFromAndWhetherItLeads() {
		this.contextRunner
			.withPropertyValues("pgqueue.queues.billing.assignment=buckets", "pgqueue.queues.billing.buckets=16",
					"pgqueue.buckets.heartbeat-interval=200ms")
			.run((context) -> {
				HealthIndicator indicator = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(queueDetails(indicator.health(true), "billing"))
					.containsEntry("assignment", "buckets")
					.containsEntry("buckets", 16)
					.containsEntry("bucketsOfQueue", 16)
					.containsEntry("leadsCoordinator", true));
			});
	}

	@Test
	@SuppressWarnings("unchecked")
	void showsHowLongTheQueuesRateLimitHasHeldItsClaims() {
		this.contextRunner
			.withPropertyValues("pgqueue.queues.billing.rate-limit.starts=2", "pgqueue.queues.billing.rate-limit.period=1m")
			.run((context) -> {
				HealthIndicator indicator = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
				Map<String, Object> idle = (Map<String, Object>) queueDetails(indicator.health(true), "billing")
					.get("rateLimit");
				assertThat(idle).containsEntry("starts", 2).containsEntry("period", "PT1M")
					.containsEntry("heldFor", "PT0S").containsEntry("holdingBack", false);
				for (int i = 0; i < 5; i++) {
					context.getBean(JobClient.class).enqueue(JobRequest.of("invoice.send", "metered " + i).queue("billing"));
				}
				// Two start; the third waits for the window, and the claims are held from then on.
				await().atMost(TIMEOUT).untilAsserted(() -> {
					Map<String, Object> held = (Map<String, Object>) queueDetails(indicator.health(true), "billing")
						.get("rateLimit");
					assertThat((String) held.get("heldFor")).isNotEqualTo("PT0S");
					assertThat(held).containsEntry("holdingBack", false).doesNotContainKey("warning");
					assertThat(queueDetails(indicator.health(true), "billing")).containsEntry("depth", 3L);
				});
			});
	}

	@Test
	@SuppressWarnings("unchecked")
	void showsEachKindsRateLimitWithItsUseAndTheKeysHeldByTheLimitPerKey() {
		this.contextRunner
			.withPropertyValues("pgqueue.kinds[invoice.send].rate-limit.starts=2",
					"pgqueue.kinds[invoice.send].rate-limit.period=1m", "pgqueue.queues.billing.per-key-rate-limit.starts=1",
					"pgqueue.queues.billing.per-key-rate-limit.period=1m")
			.run((context) -> {
				HealthIndicator indicator = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
				for (int i = 0; i < 3; i++) {
					context.getBean(JobClient.class)
						.enqueue(JobRequest.of("invoice.send", "metered " + i).queue("billing").concurrencyKey("tenant-a"));
				}
				for (int i = 0; i < 3; i++) {
					context.getBean(JobClient.class)
						.enqueue(JobRequest.of("invoice.send", "other " + i).queue("billing").concurrencyKey("tenant-" + i));
				}
				// The key limit lets one job of tenant-a start, the kind's limit two jobs in all.
				await().atMost(TIMEOUT).untilAsserted(() -> {
					Map<String, Object> details = queueDetails(indicator.health(true), "billing");
					Map<String, Object> kind = (Map<String, Object>) ((Map<String, Object>) details.get("kindRateLimits"))
						.get("invoice.send");
					assertThat(kind).containsEntry("starts", 2).containsEntry("period", "PT1M").containsEntry("used", 2)
						.containsEntry("holdingBack", false);
					assertThat((String) kind.get("heldFor")).isNotEqualTo("PT0S");
					Map<String, Object> perKey = (Map<String, Object>) details.get("perKeyRateLimit");
					assertThat(perKey).containsEntry("starts", 1).containsEntry("period", "PT1M");
					assertThat(details).containsEntry("depth", 4L);
				});
				// The jobs left waiting would count in the depth the other tests read.
				context.getBean(JdbcTemplate.class).update("DELETE FROM " + SCHEMA.name() + ".pgqueue_jobs");
			});
	}

	@Test
	void saysWhenAQueueTakesItsKeysInTurn() {
		this.contextRunner.withPropertyValues("pgqueue.queues.billing.fair-by-key=true").run((context) -> {
			HealthIndicator indicator = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
			assertThat(queueDetails(indicator.health(true), "billing")).containsEntry("fairByKey", true);
		});
		this.contextRunner.run((context) -> {
			HealthIndicator indicator = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
			assertThat(queueDetails(indicator.health(true), "billing")).doesNotContainKey("fairByKey");
		});
	}

	@Test
	void isDegradedWhileJobsAreClaimedLaterThanTheQueuesSla() {
		this.contextRunner.withPropertyValues("pgqueue.queues.billing.sla=1m").run((context) -> {
			HealthIndicator indicator = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
			assertThat(indicator.health(true).getStatus()).isEqualTo(Status.UP);
			assertThat(queueDetails(indicator.health(true), "billing")).containsEntry("sla", "met")
				.containsEntry("slaMissed", 0L);
			context.getBean(JobClient.class)
				.enqueue(JobRequest.of("invoice.send", "late").queue("billing").runAt(Instant.now().minusSeconds(3600)));
			await().atMost(TIMEOUT).untilAsserted(() -> {
				Health health = indicator.health(true);
				assertThat(health.getStatus()).isEqualTo(QueueHealthIndicator.DEGRADED);
				assertThat(health.getStatus().getCode()).isEqualTo("DEGRADED");
				assertThat(queueDetails(health, "billing")).containsEntry("sla", "slipping")
					.containsEntry("slaMissed", 1L);
			});
			// Two stats intervals (100 ms each) without another late job: back to UP, the count kept.
			await().atMost(TIMEOUT).untilAsserted(() -> {
				Health health = indicator.health(true);
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(queueDetails(health, "billing")).containsEntry("sla", "met").containsEntry("slaMissed", 1L);
			});
		});
	}

	@Test
	void namesTheTransactionThatHoldsBackCleanupWhileOneDoes() throws Exception {
		this.contextRunner.run((context) -> {
			HealthIndicator indicator = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
			try (Connection holder = context.getBean(DataSource.class).getConnection()) {
				holder.setAutoCommit(false);
				holder.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
				try (Statement statement = holder.createStatement()) {
					statement.execute("SET application_name = 'monthly-report'");
					statement.executeQuery("SELECT count(*) FROM pg_class").close();
				}
				int pid = holder.unwrap(org.postgresql.PGConnection.class).getBackendPID();
				await().atMost(TIMEOUT).untilAsserted(() -> {
					Health health = indicator.health(true);
					assertThat(health.getStatus()).isEqualTo(Status.UP);
					assertThat(health.getDetails()).containsKey("oldestTransaction");
					@SuppressWarnings("unchecked")
					Map<String, Object> oldest = (Map<String, Object>) health.getDetails().get("oldestTransaction");
					assertThat(oldest).containsEntry("pid", pid)
						.containsEntry("holder", "monthly-report")
						.containsEntry("state", "idle in transaction")
						.containsEntry("ageEstimated", false)
						.containsKeys("age", "transactionsSince", "holdsBackCleanup");
				});
				holder.rollback();
			}
			await().atMost(TIMEOUT).untilAsserted(() -> assertThat(indicator.health(true).getDetails())
				.extractingByKey("oldestTransaction")
				.asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
				.doesNotContainEntry("holder", "monthly-report"));
		});
	}

	@Test
	void showsWhetherTheJobsTableGetsVacuumedAndStaysUpWhenItIsNot() {
		this.contextRunner.withPropertyValues("pgqueue.maintenance.dead-rows-warning=5000").run((context) -> {
			assertThat(EngineInternals.of(context.getBean(QueueEngine.class)).settings().maintenance().deadRowsWarning())
				.isEqualTo(5000);
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			String table = SCHEMA.name() + ".pgqueue_jobs";
			boolean serverAutovacuum = "on".equals(jdbc.queryForObject("SHOW autovacuum", String.class));
			boolean trackCounts = "on".equals(jdbc.queryForObject("SHOW track_counts", String.class));
			HealthIndicator indicator = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
			jdbc.execute("ALTER TABLE " + table + " SET (autovacuum_enabled = false)");
			try {
				await().atMost(TIMEOUT).untilAsserted(() -> {
					Health health = indicator.health(true);
					assertThat(health.getStatus()).isEqualTo(Status.UP);
					assertThat(vacuumDetails(health)).containsEntry("tableAutovacuum", false)
						.containsEntry("serverAutovacuum", serverAutovacuum)
						.containsEntry("trackCounts", trackCounts)
						.containsEntry("verdict", (serverAutovacuum && trackCounts) ? "table-autovacuum-off"
								: "server-autovacuum-off")
						.containsKeys("deadRows", "liveRows", "lastVacuum");
					assertThat((String) vacuumDetails(health).get("message"))
						.contains("ALTER TABLE " + table + " RESET (autovacuum_enabled);");
				});
			}
			finally {
				jdbc.execute("ALTER TABLE " + table + " RESET (autovacuum_enabled)");
			}
			await().atMost(TIMEOUT).untilAsserted(() -> {
				Map<String, Object> vacuum = vacuumDetails(indicator.health(true));
				assertThat(vacuum).containsEntry("tableAutovacuum", true)
					.containsEntry("verdict", (serverAutovacuum && trackCounts) ? "fine" : "server-autovacuum-off");
				assertThat((String) vacuum.get("message")).doesNotContain("RESET (autovacuum_enabled)");
			});
		});
	}

	@Test
	void isDownWhenAQueueWithListenersIsNoLongerPolledEvenWhileItsSlaSlips() {
		this.contextRunner.withPropertyValues("pgqueue.queues.billing.sla=1m").run((context) -> {
			HealthIndicator indicator = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
			assertThat(indicator.health(true).getStatus()).isEqualTo(Status.UP);
			context.getBean(JobClient.class)
				.enqueue(JobRequest.of("invoice.send", "late").queue("billing").runAt(Instant.now().minusSeconds(3600)));
			await().atMost(TIMEOUT)
				.untilAsserted(() -> assertThat(indicator.health(true).getStatus()).isEqualTo(QueueHealthIndicator.DEGRADED));
			QueueAutoConfigurationTests.poller(context, "billing").stop();
			Health health = indicator.health(true);
			assertThat(health.getStatus()).isEqualTo(Status.DOWN);
			assertThat(queueDetails(health, "billing")).containsEntry("polling", false);
		});
	}

	@Test
	void listsQueuesWithWaitingJobsThatNoInstancePollsAndStaysUp() {
		this.contextRunner.run((context) -> {
			JobClient client = context.getBean(JobClient.class);
			client.enqueue(JobRequest.of("report.slwo", 1).queue("unpolled"));
			client.enqueue(JobRequest.of("report.slwo", 2).queue("unpolled").delay(Duration.ofHours(1)));
			// A kind nobody handles in a queue this instance polls waits too, but the queue is polled.
			client.enqueue(JobRequest.of("report.slwo", 3).queue("billing"));
			HealthIndicator indicator = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
			await().atMost(TIMEOUT).untilAsserted(() -> {
				Health health = indicator.health(true);
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(unpolledQueues(health)).containsOnlyKeys("unpolled");
				assertThat(unpolledQueues(health).get("unpolled"))
					.asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
					.containsEntry("depth", 1L)
					.containsEntry("scheduled", 1L)
					.containsKey("oldestAge");
			});
		});
	}

	@Test
	void isNotContributedWhenItsHealthIndicatorIsDisabled() {
		this.contextRunner.withPropertyValues("management.health.pgqueue.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(QueueHealthIndicator.class));
	}

	@Test
	void isNotContributedWithoutSpringBootsHealthSupport() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(QueueHealthIndicator.class));
	}

	@Test
	void userDefinedPgqueueHealthIndicatorMakesTheAutoConfiguredOneBackOff() {
		HealthIndicator custom = () -> Health.up().build();
		this.contextRunner.withBean("pgqueueHealthIndicator", HealthIndicator.class, () -> custom)
			.run((context) -> {
				assertThat(context).doesNotHaveBean(QueueHealthIndicator.class);
				assertThat(context.getBean("pgqueueHealthIndicator")).isSameAs(custom);
			});
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> unpolledQueues(Health health) {
		assertThat(health.getDetails()).containsKey("unpolledQueues");
		return (Map<String, Object>) health.getDetails().get("unpolledQueues");
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> vacuumDetails(Health health) {
		assertThat(health.getDetails()).containsKey("vacuum");
		return (Map<String, Object>) health.getDetails().get("vacuum");
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> queueDetails(Health health, String queue) {
		Map<String, Object> queues = (Map<String, Object>) health.getDetails().get("queues");
		assertThat(queues).containsKey(queue);
		return (Map<String, Object>) queues.get(queue);
	}

	static class InvoiceListener {

		@JobListener(kind = "invoice.send", queue = "billing")
		void send(String invoice) {
		}

	}

}
