package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.concurrent.atomic.AtomicReference;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;

import javax.sql.DataSource;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.MissedTicks;
import dev.pgqueue.Overlap;
import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.Job;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobInterceptor;
import dev.pgqueue.JobEvent;
import dev.pgqueue.JobListener;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueAssignment;
import dev.pgqueue.QueueMode;
import dev.pgqueue.RetryPolicy;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.buckets.BucketScope;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.settings.ConcurrencyLimits;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.KeyFairness;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.NotifyTrigger;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import io.micrometer.core.instrument.MeterRegistry;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link QueueAutoConfiguration} against a real PostgreSQL. Every context of this class
 * shares one schema, which the first context to start creates; tests use kinds of their own so that
 * one test's jobs never reach another's listeners.
 */
class QueueAutoConfigurationTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_autoconfig");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class,
				QueueMetricsAutoConfiguration.class, QueueHealthAutoConfiguration.class))
		.withPropertyValues(SCHEMA.properties())
		.withPropertyValues("pgqueue.shutdown-timeout=5s");

	@AfterAll
	static void dropSchema() {
		SCHEMA.drop();
	}

	@Test
	void definesTheQueueBeansAndMigratesTheConfiguredSchemaWithoutAFlywayBean() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(JobClient.class)
				.hasSingleBean(QueueEngine.class)
				.hasSingleBean(QueueMigrator.class)
				.hasSingleBean(JobHandlerRegistry.class)
				.doesNotHaveBean(Flyway.class);
			assertThat(internals(context).services()).extracting(EngineService::name)
				.containsExactly("polling heartbeat", "notifications", "promoter", "rescuer", "cleaner",
						"stats reader", "statistics refresher", "schedule ticker", "running-jobs watch", "history flusher");
			assertThat(SCHEMA.tables(jdbc(context))).contains("pgqueue_jobs", "pgqueue_schema_history",
					"pgqueue_queue_history");
		});
	}

	@Test
	void createsTheConfiguredSchemaWhenItDoesNotExistYet() {
		FreshSchema schema = FreshSchema.named("pgqueue_created");
		try {
			this.contextRunner.withPropertyValues(schema.properties()).run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(schema.tables(jdbc(context))).contains("pgqueue_jobs", "pgqueue_schema_history");
			});
		}
		finally {
			schema.drop();
		}
	}

	@Test
	void migratesAlongsideTheApplicationsOwnFlywayMigrationsInTheSameSchema() {
		FreshSchema schema = FreshSchema.named("pgqueue_flyway");
		try {
			this.contextRunner.withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class))
				.withPropertyValues(schema.properties())
				.withPropertyValues("spring.flyway.schemas=" + schema.name())
				.run((context) -> {
					assertThat(context).hasNotFailed().hasSingleBean(Flyway.class);
					assertThat(schema.tables(jdbc(context))).contains("flyway_schema_history", "app_orders",
							"pgqueue_schema_history", "pgqueue_jobs");
				});
		}
		finally {
			schema.drop();
		}
	}

	@Test
	void aBeanThatEnqueuesWhileTheContextStartsFindsTheJobsTable() {
		FreshSchema schema = FreshSchema.named("pgqueue_startup");
		try {
			// Registered ahead of every configuration, as an application's own beans are.
			this.contextRunner.withPropertyValues(schema.properties())
				.withBean(StartupEnqueuer.class)
				.run((context) -> {
					assertThat(context).hasNotFailed();
					UUID id = context.getBean(StartupEnqueuer.class).enqueued;
					assertThat(schema.stateOf(jdbc(context), id)).isEqualTo("available");
				});
		}
		finally {
			schema.drop();
		}
	}

	@Test
	void userDefinedJobClientMakesTheAutoConfiguredOneBackOff() {
		this.contextRunner.withUserConfiguration(CustomJobClientConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(JobClient.class).doesNotHaveBean("pgqueueJobClient");
			assertThat(context.getBean(JobClient.class)).isSameAs(context.getBean("customJobClient"));
		});
	}

	@Test
	void userDefinedQueueMigratorMakesTheAutoConfiguredOneBackOff() {
		this.contextRunner.withUserConfiguration(CustomQueueMigratorConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(QueueMigrator.class).doesNotHaveBean("pgqueueMigrator");
			assertThat(context.getBean(QueueMigrator.class)).isSameAs(context.getBean("customQueueMigrator"));
		});
	}

	@Test
	void startsAPollerForEachQueueThatHasListeners() {
		this.contextRunner.withUserConfiguration(GreetingListenerConfiguration.class, MailListenerConfiguration.class)
			.run((context) -> {
				assertThat(internals(context).pollers()).extracting((poller) -> poller.settings().name())
					.containsExactlyInAnyOrder("default", "mail");
				JobPoller mail = poller(context, "mail");
				assertThat(mail.isRunning()).isTrue();
				assertThat(mail.kinds()).containsExactly("mail.welcome");
				JobPoller defaults = poller(context, "default");
				assertThat(defaults.isRunning()).isTrue();
				assertThat(defaults.kinds()).containsExactly("greeting", "greeting.with-job");
			});
	}

	@Test
	void runsAnEnqueuedJobThroughItsListenerWithThePayloadMappedToARecord() {
		this.contextRunner.withUserConfiguration(GreetingListenerConfiguration.class).run((context) -> {
			Greeting greeting = new Greeting("Ada " + UUID.randomUUID(), 3);
			UUID id = context.getBean(JobClient.class).enqueue("greeting", greeting);
			GreetingListener listener = context.getBean(GreetingListener.class);
			await().atMost(TIMEOUT).untilAsserted(() -> assertThat(listener.greetings).contains(greeting));
			await().atMost(TIMEOUT).until(() -> "completed".equals(SCHEMA.stateOf(jdbc(context), id)));
		});
	}

	@Test
	void runsTheInterceptorBeansInTheirOrderAndPublishesJobEventsAsApplicationEvents() {
		this.contextRunner.withUserConfiguration(GreetingListenerConfiguration.class, InterceptorConfiguration.class)
			.run((context) -> {
				UUID id = context.getBean(JobClient.class).enqueue("greeting", new Greeting("Edsger", 2));
				EventRecorder recorder = context.getBean(EventRecorder.class);
				// Enqueued is published on the enqueuing thread after the commit, Started and Succeeded on
				// pgqueue's threads: a poller may start the job before the enqueuer publishes, so only
				// the worker's own events have an order.
				await().atMost(TIMEOUT)
					.untilAsserted(() -> assertThat(recorder.events).filteredOn((event) -> event.id().equals(id))
						.extracting((event) -> event.getClass().getSimpleName())
						.containsExactlyInAnyOrder("Enqueued", "Started", "Succeeded"));
				assertThat(recorder.events).filteredOn((event) -> event.id().equals(id))
					.extracting((event) -> event.getClass().getSimpleName())
					.filteredOn((name) -> !name.equals("Enqueued"))
					.containsExactly("Started", "Succeeded");
				assertThat(recorder.trail).containsExactly("first " + id, "second " + id);
			});
		this.contextRunner.withUserConfiguration(GreetingListenerConfiguration.class, InterceptorConfiguration.class)
			.withPropertyValues("pgqueue.events.enabled=false")
			.run((context) -> {
				UUID id = context.getBean(JobClient.class).enqueue("greeting", new Greeting("Barbara", 1));
				await().atMost(TIMEOUT).until(() -> "completed".equals(SCHEMA.stateOf(jdbc(context), id)));
				assertThat(context.getBean(EventRecorder.class).events).isEmpty();
				assertThat(context.getBean(EventRecorder.class).trail).hasSize(2);
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class InterceptorConfiguration {

		@Bean
		EventRecorder eventRecorder() {
			return new EventRecorder();
		}

		@Bean
		@org.springframework.core.annotation.Order(2)
		JobInterceptor second(EventRecorder recorder) {
			return (job, invocation) -> {
				recorder.trail.add("second " + job.id());
				invocation.proceed();
			};
		}

		@Bean
		@org.springframework.core.annotation.Order(1)
		JobInterceptor first(EventRecorder recorder) {
			return (job, invocation) -> {
				recorder.trail.add("first " + job.id());
				invocation.proceed();
			};
		}

	}

	static class EventRecorder {

		final List<JobEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();

		final List<String> trail = new java.util.concurrent.CopyOnWriteArrayList<>();

		@org.springframework.context.event.EventListener
		void on(JobEvent event) {
			this.events.add(event);
		}

	}

	@Test
	void passesTheJobToAListenerThatTakesItAfterThePayload() {
		this.contextRunner.withUserConfiguration(GreetingListenerConfiguration.class).run((context) -> {
			Greeting greeting = new Greeting("Grace " + UUID.randomUUID(), 1);
			UUID id = context.getBean(JobClient.class).enqueue("greeting.with-job", greeting);
			GreetingListener listener = context.getBean(GreetingListener.class);
			await().atMost(TIMEOUT).until(() -> listener.jobs.containsKey(id));
			Job job = listener.jobs.get(id);
			assertThat(job.kind()).isEqualTo("greeting.with-job");
			assertThat(job.queue()).isEqualTo("default");
			assertThat(job.attempt()).isEqualTo(1);
			assertThat(listener.payloadsByJob.get(id)).isEqualTo(greeting);
		});
	}

	@Test
	void failsStartupWhenTwoListenersHandleTheSameKind() {
		this.contextRunner.withUserConfiguration(DuplicateKindConfiguration.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(failureMessages(context)).contains("'duplicate.kind'")
				.contains(FirstDuplicateListener.class.getName() + ".handle(String)")
				.contains(SecondDuplicateListener.class.getName() + ".handle(String)");
		});
	}

	@Test
	void holdsTheJvmWithANonDaemonThreadWhileItProcessesJobsAndReleasesItWhenTheContextCloses() {
		AtomicReference<Thread> held = new AtomicReference<>();
		this.contextRunner.withUserConfiguration(MailListenerConfiguration.class).run((context) -> {
			QueueKeepAlive keepAlive = context.getBean(QueueKeepAlive.class);
			assertThat(keepAlive.isRunning()).isTrue();
			held.set(keepAlive.thread());
			assertThat(held.get()).isNotNull();
			assertThat(held.get().isDaemon()).isFalse();
			assertThat(held.get().isAlive()).isTrue();
		});
		await().atMost(TIMEOUT).until(() -> !held.get().isAlive());
	}

	@Test
	void holdsNothingWhenTheApplicationDoesNotProcessJobsOrKeepAliveIsOff() {
		this.contextRunner.run((context) -> assertThat(context.getBean(QueueKeepAlive.class).isRunning())
			.as("no listener, no recurring job").isFalse());
		this.contextRunner.withPropertyValues("pgqueue.enabled=false")
			.withUserConfiguration(MailListenerConfiguration.class)
			.run((context) -> assertThat(context.getBean(QueueKeepAlive.class).isRunning()).isFalse());
		this.contextRunner.withPropertyValues("pgqueue.keep-alive=false")
			.withUserConfiguration(MailListenerConfiguration.class)
			.run((context) -> assertThat(context).doesNotHaveBean(QueueKeepAlive.class));
	}

	@Test
	void aContextWhoseStartFailsLeavesNoThreadThatHoldsTheJvm() {
		Set<Thread> before = keepAliveThreads();
		this.contextRunner.withUserConfiguration(MailListenerConfiguration.class)
			.withPropertyValues("pgqueue.queues.nobody-listens.concurrency=1")
			.run((context) -> assertThat(context).hasFailed());
		await().atMost(TIMEOUT).untilAsserted(() -> assertThat(keepAliveThreads()).isSubsetOf(before));
	}

	private static Set<Thread> keepAliveThreads() {
		return Thread.getAllStackTraces().keySet().stream()
			.filter((thread) -> thread.getName().equals("pgqueue-keep-alive") && thread.isAlive())
			.collect(Collectors.toSet());
	}

	@Test
	void enqueuesButNeitherPollsNorMaintainsWhenProcessingIsDisabled() {
		this.contextRunner.withPropertyValues("pgqueue.enabled=false")
			.withUserConfiguration(GreetingListenerConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(JobClient.class)
					.doesNotHaveBean(QueueHealthIndicator.class);
				QueueEngine engine = context.getBean(QueueEngine.class);
				assertThat(engine.processing()).isFalse();
				assertThat(internals(context).pollers()).isEmpty();
				assertThat(internals(context).services()).extracting(EngineService::name)
					.containsExactly("polling heartbeat");
				UUID id = context.getBean(JobClient.class).enqueue("producer-only.greeting", new Greeting("Linus", 1));
				assertThat(SCHEMA.stateOf(jdbc(context), id)).isEqualTo("available");
			});
	}

	@Test
	void recordsTheQueuesHistoryUnlessDisabledAndKeepsItForTheConfiguredRetention() {
		this.contextRunner.withPropertyValues("pgqueue.history.retention=3h").run((context) -> {
			assertThat(internals(context).historySettings().retention()).isEqualTo(Duration.ofHours(3));
			assertThat(internals(context).historyRecorder().enabled()).isTrue();
		});
		this.contextRunner.withPropertyValues("pgqueue.history.enabled=false").run((context) -> {
			assertThat(internals(context).historyRecorder().enabled()).isFalse();
			assertThat(internals(context).services()).extracting(EngineService::name).doesNotContain("history flusher");
		});
		this.contextRunner.withPropertyValues("pgqueue.history.retention=0s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("pgqueue.history.retention must be positive"));
	}

	@Test
	void throttlesNotificationsByDefaultAndNeitherNotifiesNorListensWhenTheyAreOff() {
		this.contextRunner.run((context) -> {
			assertThat(internals(context).settings().notifications()).isTrue();
			assertThat(internals(context).jobs().notifies()).isTrue();
		});
		this.contextRunner.withPropertyValues("pgqueue.notifications.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(QueueEngine.class);
			assertThat(internals(context).settings().notifications()).isFalse();
			assertThat(internals(context).jobs().notifies()).isFalse();
		});
	}

	@Test
	void bindsTheLargestEnqueueAllAndFailsStartupOnNoneNamingTheSetting() {
		this.contextRunner.withPropertyValues("pgqueue.max-jobs-per-enqueue=2").run((context) -> {
			JobClient client = context.getBean(JobClient.class);
			assertThatIllegalArgumentException()
				.isThrownBy(() -> client.enqueueAll(List.of(JobRequest.of("a", null), JobRequest.of("b", null),
						JobRequest.of("c", null))))
				.withMessageContaining("pgqueue.max-jobs-per-enqueue (2)");
		});
		this.contextRunner.withPropertyValues("pgqueue.max-jobs-per-enqueue=0")
			.run((context) -> assertThat(failureMessages(context)).contains("pgqueue.max-jobs-per-enqueue"));
	}

	@Test
	void bindsTheLivenessTimeoutAndFailsStartupOnOneTooShortNamingTheSetting() {
		this.contextRunner.run((context) -> assertThat(internals(context).settings().livenessTimeout())
			.isEqualTo(EngineSettings.DEFAULT_LIVENESS_TIMEOUT));
		this.contextRunner.withPropertyValues("pgqueue.notifications.liveness-timeout=3s")
			.run((context) -> assertThat(internals(context).settings().livenessTimeout())
				.isEqualTo(Duration.ofSeconds(3)));
		this.contextRunner.withPropertyValues("pgqueue.notifications.liveness-timeout=0s")
			.run((context) -> assertThat(failureMessages(context)).contains("pgqueue.notifications.liveness-timeout"));
	}

	@Test
	void enablesTheNotifyTriggerWhenAskedAndDisablesItByDefault() {
		this.contextRunner.withPropertyValues("pgqueue.notifications.trigger=true")
			.run((context) -> assertThat(trigger(context).enabled()).isTrue());
		this.contextRunner.run((context) -> assertThat(trigger(context).enabled()).isFalse());
	}

	private static NotifyTrigger trigger(AssertableApplicationContext context) {
		assertThat(context).hasNotFailed();
		return new NotifyTrigger(context.getBean(DataSource.class), SchemaName.of(SCHEMA.name()));
	}

	@Test
	void failsStartupOnANegativeNotificationIntervalNamingTheSetting() {
		this.contextRunner.withPropertyValues("pgqueue.notifications.min-interval=-5ms").run((context) -> {
			assertThat(failureMessages(context)).contains("pgqueue.notifications.min-interval")
				.contains("zero or positive");
		});
	}

	@Test
	void failsStartupWhenMigrationIsOffAndTheJobsTableIsMissing() {
		try (TestSchema empty = TestDatabase.get().createSchema("pgqueue_unmigrated")) {
			this.contextRunner.withPropertyValues("pgqueue.schema.name=" + empty.name(), "pgqueue.schema.migrate=false")
				.run((context) -> {
					assertThat(context).hasFailed();
					assertThat(failureMessages(context)).contains(empty.name() + ".pgqueue_jobs")
						.contains("pgqueue.schema.migrate");
					assertThat(empty.jdbcTemplate()
						.queryForObject("SELECT to_regclass('pgqueue_jobs') IS NULL", Boolean.class)).isTrue();
				});
		}
	}

	@Test
	void startsWithMigrationOffWhenTheJobsTableAlreadyExists() {
		this.contextRunner.run((migrated) -> assertThat(migrated).hasNotFailed());
		this.contextRunner.withPropertyValues("pgqueue.schema.migrate=false").run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(QueueMigrator.class);
			UUID id = context.getBean(JobClient.class).enqueue("migrate-off.greeting", new Greeting("Barbara", 2));
			assertThat(SCHEMA.stateOf(jdbc(context), id)).isEqualTo("available");
		});
	}

	@Test
	void failsStartupOnAnInvalidSchemaName() {
		this.contextRunner.withPropertyValues("pgqueue.schema.name=Bad-Name")
			.run((context) -> assertThat(failureMessages(context)).contains("pgqueue.schema.name")
				.contains("Bad-Name"));
	}

	@Test
	void failsStartupOnAScheduleThatCannotFireNamingItsKey() {
		this.contextRunner
			.withPropertyValues("pgqueue.enabled=false", "pgqueue.schedules.nightly.cron=0 0 25 * * *",
					"pgqueue.schedules.nightly.kind=report.nightly")
			.run((context) -> assertThat(failureMessages(context))
				.contains("Schedule 'nightly' has an invalid cron expression \"0 0 25 * * *\"")
				.contains("six fields"));
		this.contextRunner
			.withPropertyValues("pgqueue.enabled=false", "pgqueue.schedules.nightly.cron=0 0 2 * * *",
					"pgqueue.schedules.nightly.kind=report.nightly", "pgqueue.schedules.nightly.zone=Europe/Pari")
			.run((context) -> assertThat(failureMessages(context)).contains("unknown time zone 'Europe/Pari'"));
		this.contextRunner
			.withPropertyValues("pgqueue.enabled=false", "pgqueue.schedules.nightly.cron=0 0 2 * * *")
			.run((context) -> assertThat(failureMessages(context)).contains("Schedule 'nightly' has no kind"));
		this.contextRunner
			.withPropertyValues("pgqueue.enabled=false", "pgqueue.schedules.nightly.cron=0 0 2 * * *",
					"pgqueue.schedules.nightly.kind=report.nightly", "pgqueue.schedules.nightly.missed=sometimes")
			.run((context) -> assertThat(failureMessages(context)).contains("pgqueue.schedules.nightly.missed"));
	}

	@Test
	void savesTheDeclaredSchedulesAtStartUp() {
		this.contextRunner
			.withPropertyValues("pgqueue.enabled=false", "pgqueue.schedules.nightly-report.cron=0 0 2 * * *",
					"pgqueue.schedules.nightly-report.zone=Europe/Paris",
					"pgqueue.schedules.nightly-report.kind=report.nightly",
					"pgqueue.schedules.nightly-report.queue=reports",
					"pgqueue.schedules.nightly-report.payload.format=pdf",
					"pgqueue.schedules.nightly-report.missed=all", "pgqueue.schedules.nightly-report.overlap=skip")
			.run((context) -> {
				ScheduleDetails saved = context.getBean(JobSchedules.class).get("nightly-report").orElseThrow();
				assertThat(saved.zone().getId()).isEqualTo("Europe/Paris");
				assertThat(saved.queue()).isEqualTo("reports");
				assertThat(saved.payload()).isEqualTo("{\"format\": \"pdf\"}");
				assertThat(saved.missed()).isEqualTo(MissedTicks.ALL);
				assertThat(saved.overlap()).isEqualTo(Overlap.SKIP);
				assertThat(saved.declared()).isTrue();
				context.getBean(JobSchedules.class).delete("nightly-report");
			});
	}

	@Test
	void failsStartupOnAQueueConcurrencyBelowOne() {
		this.contextRunner.withPropertyValues("pgqueue.queues.mail.concurrency=0")
			.run((context) -> assertThat(failureMessages(context)).contains("pgqueue.queues.mail.concurrency"));
	}

	@Test
	void failsStartupOnAConfiguredQueueThatNoListenerUses() {
		this.contextRunner.withUserConfiguration(MailListenerConfiguration.class)
			.withPropertyValues("pgqueue.queues.mial.concurrency=2")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidQueueConfigurationException.class)
				.hasMessageContaining("queue 'mial'")
				.hasMessageContaining("no @JobListener"));
	}

	@Test
	void acceptsAConfiguredQueueWithoutListenersWhenProcessingIsDisabled() {
		this.contextRunner.withPropertyValues("pgqueue.enabled=false", "pgqueue.queues.mail.max-attempts=3")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(JobClient.class));
	}

	@Test
	void failsStartupOnANegativeQueueBatchSize() {
		this.contextRunner.withPropertyValues("pgqueue.queues.mail.batch-size=-1")
			.run((context) -> assertThat(failureMessages(context)).contains("pgqueue.queues.mail.batch-size"));
	}

	@Test
	void failsStartupOnARateLimitPeriodShorterThanThePollInterval() {
		this.contextRunner
			.withPropertyValues("pgqueue.queues.mail.rate-limit.starts=10", "pgqueue.queues.mail.rate-limit.period=100ms")
			.run((context) -> assertThat(failureMessages(context)).contains("pgqueue.queues.mail.rate-limit.period")
				.contains("poll-interval"));
	}

	@Test
	void failsStartupOnARetryJitterAboveOne() {
		this.contextRunner.withPropertyValues("pgqueue.queues.mail.retry.jitter=2")
			.run((context) -> assertThat(failureMessages(context)).contains("pgqueue.queues.mail.retry.jitter"));
	}

	@Test
	void bindsQueueSettingsIntoTheQueuesPoller() {
		this.contextRunner.withUserConfiguration(ReportListenerConfiguration.class)
			.withPropertyValues("pgqueue.queues.reports.mode=leased", "pgqueue.queues.reports.concurrency=3",
					"pgqueue.queues.reports.batch-size=7", "pgqueue.queues.reports.poll-interval=250ms",
					"pgqueue.queues.reports.lease-duration=30s", "pgqueue.queues.reports.max-attempts=5",
					"pgqueue.queues.reports.retry.initial-delay=2s", "pgqueue.queues.reports.retry.max-delay=1m",
					"pgqueue.queues.reports.retry.multiplier=3", "pgqueue.queues.reports.retry.jitter=0.5",
					"pgqueue.queues.reports.non-retryable-exceptions=java.lang.IllegalArgumentException",
					"pgqueue.queues.reports.claim-ahead=false", "pgqueue.queues.reports.run-at-jitter=5s",
					"pgqueue.queues.reports.assignment=buckets", "pgqueue.queues.reports.buckets=128",
					"pgqueue.queues.reports.sla=10s", "pgqueue.queues.reports.per-key-concurrency=2",
					"pgqueue.queues.reports.max-running=9", "pgqueue.queues.reports.timeout=45s",
					"pgqueue.queues.reports.max-batch-size=70", "pgqueue.queues.reports.rate-limit.starts=100",
					"pgqueue.queues.reports.rate-limit.period=1m", "pgqueue.queues.reports.per-key-rate-limit.starts=5",
					"pgqueue.queues.reports.per-key-rate-limit.period=10s")
			.run((context) -> {
				JobPoller poller = poller(context, "reports");
				assertThat(poller.settings()).isEqualTo(new QueueSettings("reports", QueueMode.LEASED, 3, 7, 70,
						Duration.ofMillis(250), Duration.ofSeconds(30), 5,
						new RetryPolicy(Duration.ofSeconds(2), Duration.ofMinutes(1), 3.0, 0.5),
						List.of(IllegalArgumentException.class), false, Duration.ofSeconds(5), QueueAssignment.BUCKETS, 128,
						Duration.ofSeconds(10), new ConcurrencyLimits(2, false, 9), Duration.ofSeconds(45), false,
						new RateLimit(100, Duration.ofMinutes(1)), new RateLimit(5, Duration.ofSeconds(10)), null));
			});
	}

	@Test
	void bindsFairnessAcrossKeysAndItsWeights() {
		this.contextRunner.withUserConfiguration(ReportListenerConfiguration.class)
			.withPropertyValues("pgqueue.queues.reports.fair-by-key=true", "pgqueue.queues.reports.key-weights[tenant.gold]=3")
			.run((context) -> assertThat(poller(context, "reports").settings().fairness())
				.isEqualTo(new KeyFairness(Map.of("tenant.gold", 3))));
	}

	@Test
	void failsStartupOnKeyWeightsWithoutFairness() {
		this.contextRunner.withPropertyValues("pgqueue.queues.mail.key-weights.gold=3")
			.run((context) -> assertThat(failureMessages(context))
				.contains("pgqueue.queues.mail.key-weights weighs keys, but the queue does not share its workers"));
	}

	@Test
	void bindsAKindsRateLimitAndWeightOverItsListenersAnnotation() {
		this.contextRunner.withUserConfiguration(ReportListenerConfiguration.class)
			.withPropertyValues("pgqueue.kinds[report.monthly].rate-limit.starts=30",
					"pgqueue.kinds[report.monthly].rate-limit.period=1m", "pgqueue.kinds[report.monthly].rate-weight=3")
			.run((context) -> {
				JobHandlerRegistry handlers = context.getBean(JobHandlerRegistry.class);
				assertThat(handlers.rateLimitOf("report.monthly")).isEqualTo(new RateLimit(30, Duration.ofMinutes(1)));
				assertThat(handlers.rateWeightOf("report.monthly")).isEqualTo(3);
				assertThat(poller(context, "reports").rate().choosesJobs()).as("claims choose their jobs").isTrue();
			});
	}

	@Test
	void failsStartupOnAKindWeightAboveItsQueuesRateLimit() {
		this.contextRunner.withUserConfiguration(ReportListenerConfiguration.class)
			.withPropertyValues("pgqueue.queues.reports.rate-limit.starts=2",
					"pgqueue.kinds[report.monthly].rate-weight=5")
			.run((context) -> assertThat(failureMessages(context))
				.contains("pgqueue.kinds.report.monthly.rate-weight is 5, above pgqueue.queues.reports.rate-limit.starts (2)"));
	}

	@Test
	void failsStartupOnAPerKeyRateLimitOfNoStarts() {
		this.contextRunner.withPropertyValues("pgqueue.queues.mail.per-key-rate-limit.starts=0")
			.run((context) -> assertThat(failureMessages(context))
				.contains("pgqueue.queues.mail.per-key-rate-limit.starts must be at least 1, was 0"));
	}

	@Test
	void aQueueWithBucketAssignmentClaimsOnlyFromTheBucketsItsCoordinatorGaveIt() {
		this.contextRunner.withUserConfiguration(ReportListenerConfiguration.class)
			.withPropertyValues("pgqueue.queues.reports.assignment=buckets", "pgqueue.queues.reports.buckets=8",
					"pgqueue.buckets.heartbeat-interval=200ms")
			.run((context) -> {
				JobPoller poller = poller(context, "reports");
				assertThat(poller.scope()).isInstanceOf(BucketScope.class);
				BucketScope scope = (BucketScope) poller.scope();
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(scope.buckets()).containsExactly(0, 1, 2, 3, 4, 5, 6, 7));
				assertThat(scope.coordinator().leadingGeneration()).isPositive();
			});
	}

	@Test
	void aRetryPolicyBeanIsTheBackoffOfEveryQueueAndEachRetryKeyOverridesItsPart() {
		RetryPolicy applicationPolicy = new RetryPolicy(Duration.ofSeconds(5), Duration.ofMinutes(10), 4.0, 0.1);
		this.contextRunner.withUserConfiguration(ReportListenerConfiguration.class, GreetingListenerConfiguration.class)
			.withBean(RetryPolicy.class, () -> applicationPolicy)
			.withPropertyValues("pgqueue.queues.reports.retry.multiplier=3")
			.run((context) -> {
				assertThat(poller(context, "default").settings().retry())
					.isEqualTo(applicationPolicy);
				assertThat(poller(context, "reports").settings().retry())
					.isEqualTo(new RetryPolicy(Duration.ofSeconds(5), Duration.ofMinutes(10), 3.0, 0.1));
			});
	}

	@Test
	void withoutARetryPolicyBeanQueuesBackOffByTheDocumentedDefaults() {
		this.contextRunner.withUserConfiguration(ReportListenerConfiguration.class)
			.run((context) -> assertThat(poller(context, "reports").settings().retry())
				.isEqualTo(new RetryPolicy(Duration.ofSeconds(1), Duration.ofHours(1), 2.0, 0.2)));
	}

	@Test
	void aRetryKeyThatConflictsWithTheRetryPolicyBeanFailsStartupNamingTheKey() {
		this.contextRunner.withUserConfiguration(ReportListenerConfiguration.class)
			.withBean(RetryPolicy.class, () -> new RetryPolicy(Duration.ofSeconds(5), Duration.ofMinutes(10), 4.0, 0.1))
			.withPropertyValues("pgqueue.queues.reports.retry.initial-delay=1h")
			.run((context) -> assertThat(failureMessages(context))
				.contains("pgqueue.queues.reports.retry.max-delay"));
	}

	@Test
	void runsTheWorkersOfEveryQueueOnTheApplicationsWorkerExecutor() {
		this.contextRunner.withUserConfiguration(ThreadProbeConfiguration.class)
			.withBean(QueueAutoConfiguration.WORKER_EXECUTOR_BEAN_NAME, Executor.class,
					() -> Executors.newCachedThreadPool(new CustomizableThreadFactory("app-jobs-")),
					(definition) -> definition.setDestroyMethodName("shutdownNow"))
			.run((context) -> {
				UUID id = context.getBean(JobClient.class).enqueue("thread.probe", "which thread?");
				ThreadProbe probe = context.getBean(ThreadProbe.class);
				await().atMost(TIMEOUT).until(() -> probe.threadNameByJob.containsKey(id));
				assertThat(probe.threadNameByJob.get(id)).startsWith("app-jobs-");
			});
	}

	@Test
	void runsJobsOnVirtualThreadsWhenTheyAreEnabledAndTheJdkHasThem() {
		this.contextRunner.withUserConfiguration(ThreadProbeConfiguration.class)
			.withPropertyValues("spring.threads.virtual.enabled=true")
			.run((context) -> {
				UUID id = context.getBean(JobClient.class).enqueue("thread.probe", "which thread?");
				ThreadProbe probe = context.getBean(ThreadProbe.class);
				await().atMost(TIMEOUT).until(() -> probe.virtualByJob.containsKey(id));
				assertThat(poller(context, "default").isRunning()).isTrue();
				assertThat(probe.threadNameByJob.get(id)).startsWith("pgqueue-default-");
				boolean jdkHasVirtualThreads = Runtime.version().feature() >= 21;
				assertThat(probe.virtualByJob.get(id)).isEqualTo(jdkHasVirtualThreads);
			});
	}

	@Test
	void enqueueJoinsATransactionalServiceAndRollsBackWithIt() {
		this.contextRunner.withUserConfiguration(SignupServiceConfiguration.class).run((context) -> {
			SignupService service = context.getBean(SignupService.class);
			UUID committed = service.signUp("Edsger", false);
			assertThat(SCHEMA.stateOf(jdbc(context), committed)).isEqualTo("available");
			assertThatIllegalStateException().isThrownBy(() -> service.signUp("Tony", true))
				.withMessage("sign-up rejected");
			UUID rolledBack = service.lastEnqueued();
			assertThat(rolledBack).isNotNull().isNotEqualTo(committed);
			assertThat(SCHEMA.stateOf(jdbc(context), rolledBack)).isNull();
		});
	}

	@Test
	void enqueueJoinsATransactionTemplateAndRollsBackWithIt() {
		this.contextRunner.run((context) -> {
			TransactionTemplate transactions = context.getBean(TransactionTemplate.class);
			JobClient jobClient = context.getBean(JobClient.class);
			UUID committed = transactions.execute((status) -> jobClient.enqueue("tx.greeting", new Greeting("Niklaus", 1)));
			UUID rolledBack = transactions.execute((status) -> {
				UUID id = jobClient.enqueue("tx.greeting", new Greeting("Alan", 1));
				status.setRollbackOnly();
				return id;
			});
			assertThat(SCHEMA.stateOf(jdbc(context), committed)).isEqualTo("available");
			assertThat(SCHEMA.stateOf(jdbc(context), rolledBack)).isNull();
		});
	}

	@Test
	void runsJobsWithoutMetricsWhenMicrometerIsAbsent() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
			.withUserConfiguration(GreetingListenerConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(QueueMetrics.class);
				Greeting greeting = new Greeting("Margaret " + UUID.randomUUID(), 1);
				UUID id = context.getBean(JobClient.class).enqueue("greeting", greeting);
				await().atMost(TIMEOUT)
					.untilAsserted(() -> assertThat(context.getBean(GreetingListener.class).greetings).contains(greeting));
				await().atMost(TIMEOUT).until(() -> "completed".equals(SCHEMA.stateOf(jdbc(context), id)));
			});
	}

	/** The messages of the start-up failure and all its causes, one per line. */
	static String failureMessages(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		StringBuilder messages = new StringBuilder();
		for (Throwable failure = context.getStartupFailure(); failure != null; failure = failure.getCause()) {
			messages.append(failure.getMessage()).append('\n');
		}
		return messages.toString();
	}

	private static JdbcTemplate jdbc(AssertableApplicationContext context) {
		return context.getBean(JdbcTemplate.class);
	}

	record Greeting(String name, int count) {
	}

	@Configuration(proxyBeanMethods = false)
	static class GreetingListenerConfiguration {

		@Bean
		GreetingListener greetingListener() {
			return new GreetingListener();
		}

	}

	static class GreetingListener {

		final BlockingQueue<Greeting> greetings = new LinkedBlockingQueue<>();

		final Map<UUID, Job> jobs = new ConcurrentHashMap<>();

		final Map<UUID, Greeting> payloadsByJob = new ConcurrentHashMap<>();

		@JobListener(kind = "greeting")
		void greet(Greeting greeting) {
			this.greetings.add(greeting);
		}

		@JobListener(kind = "greeting.with-job")
		void greetWithJob(Greeting greeting, Job job) {
			this.payloadsByJob.put(job.id(), greeting);
			this.jobs.put(job.id(), job);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class MailListenerConfiguration {

		@Bean
		MailListener mailListener() {
			return new MailListener();
		}

	}

	static class MailListener {

		@JobListener(kind = "mail.welcome", queue = "mail")
		void send(Greeting greeting) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ReportListenerConfiguration {

		@Bean
		ReportListener reportListener() {
			return new ReportListener();
		}

	}

	static class ReportListener {

		@JobListener(kind = "report.monthly", queue = "reports")
		void render(Job job) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DuplicateKindConfiguration {

		@Bean
		FirstDuplicateListener firstDuplicateListener() {
			return new FirstDuplicateListener();
		}

		@Bean
		SecondDuplicateListener secondDuplicateListener() {
			return new SecondDuplicateListener();
		}

	}

	static class FirstDuplicateListener {

		@JobListener(kind = "duplicate.kind")
		void handle(String payload) {
		}

	}

	static class SecondDuplicateListener {

		@JobListener(kind = "duplicate.kind")
		void handle(String payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ThreadProbeConfiguration {

		@Bean
		ThreadProbe threadProbe() {
			return new ThreadProbe();
		}

	}

	static class ThreadProbe {

		final Map<UUID, Boolean> virtualByJob = new ConcurrentHashMap<>();

		final Map<UUID, String> threadNameByJob = new ConcurrentHashMap<>();

		@JobListener(kind = "thread.probe")
		void probe(String payload, Job job) {
			this.threadNameByJob.put(job.id(), Thread.currentThread().getName());
			this.virtualByJob.put(job.id(), isVirtual(Thread.currentThread()));
		}

		/** Thread.isVirtual() exists from JDK 21; this code compiles for 17. */
		private static boolean isVirtual(Thread thread) {
			try {
				return (Boolean) Thread.class.getMethod("isVirtual").invoke(thread);
			}
			catch (NoSuchMethodException ex) {
				return false;
			}
			catch (ReflectiveOperationException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SignupServiceConfiguration {

		@Bean
		SignupService signupService(JobClient jobClient) {
			return new SignupService(jobClient);
		}

	}

	static class SignupService {

		private final JobClient jobClient;

		private volatile UUID lastEnqueued;

		SignupService(JobClient jobClient) {
			this.jobClient = jobClient;
		}

		@Transactional
		public UUID signUp(String name, boolean reject) {
			UUID id = this.jobClient.enqueue("signup.welcome", new Greeting(name, 1));
			this.lastEnqueued = id;
			if (reject) {
				throw new IllegalStateException("sign-up rejected");
			}
			return id;
		}

		public UUID lastEnqueued() {
			return this.lastEnqueued;
		}

	}

	static class StartupEnqueuer implements InitializingBean {

		private final JobClient jobClient;

		volatile UUID enqueued;

		StartupEnqueuer(JobClient jobClient) {
			this.jobClient = jobClient;
		}

		@Override
		public void afterPropertiesSet() {
			this.enqueued = this.jobClient.enqueue("startup.report", new Greeting("at start-up", 1));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class CustomJobClientConfiguration {

		@Bean
		JobClient customJobClient() {
			return new JobClient() {

				@Override
				public UUID enqueue(JobRequest request) {
					return UUID.randomUUID();
				}

				@Override
				public List<UUID> enqueueAll(List<JobRequest> requests) {
					return requests.stream().map(this::enqueue).toList();
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class CustomQueueMigratorConfiguration {

		@Bean
		QueueMigrator customQueueMigrator(DataSource dataSource) {
			return new QueueMigrator(dataSource, SchemaName.of(SCHEMA.name()), true);
		}

	}


	/** The parts of the context's engine that its public API does not show. */
	static EngineInternals internals(org.springframework.context.ApplicationContext context) {
		return EngineInternals.of(context.getBean(QueueEngine.class));
	}

	/** The started poller of the queue in the engine of the context. */
	static JobPoller poller(org.springframework.context.ApplicationContext context, String queue) {
		return internals(context).pollers()
			.stream()
			.filter((poller) -> poller.settings().name().equals(queue))
			.findFirst()
			.orElseThrow(() -> new AssertionError("No poller of queue '" + queue + "'"));
	}

}
