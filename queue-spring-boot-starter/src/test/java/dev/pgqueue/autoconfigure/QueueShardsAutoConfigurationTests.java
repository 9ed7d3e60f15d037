package dev.pgqueue.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import javax.sql.DataSource;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.Job;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobListener;
import dev.pgqueue.JobRequest;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.QueueShards;
import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.autoconfigure.SchedulesDescriptor.ScheduleDescriptor;
import dev.pgqueue.ShardUnavailableException;
import dev.pgqueue.ShardsPartlyFailedException;
import dev.pgqueue.autoconfigure.QueuesDescriptor.ShardDescriptor;
import dev.pgqueue.autoconfigure.QueuesDescriptor.ShardQueueDescriptor;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.test.TestDatabase;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Tests for pgqueue over {@code pgqueue.shards}, three shards as three schemas of the test database,
 * each with its own pool (two from connection settings, one a DataSource bean), so that each shard's
 * jobs table, engine and transactions are its own as on three servers.
 */
class QueueShardsAutoConfigurationTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final FreshSchema APPLICATION = FreshSchema.named("pgqueue_app");

	private static final FreshSchema S1 = FreshSchema.named("pgqueue_s1");

	private static final FreshSchema S2 = FreshSchema.named("pgqueue_s2");

	private static final FreshSchema S3 = FreshSchema.named("pgqueue_s3");

	private static final Map<String, FreshSchema> SCHEMAS = Map.of("s1", S1, "s2", S2, "s3", S3);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class))
		.withPropertyValues(APPLICATION.properties())
		.withPropertyValues("pgqueue.shutdown-timeout=5s")
		.withPropertyValues(shard("s1", S1))
		.withPropertyValues(shard("s2", S2))
		.withPropertyValues("pgqueue.shards.s3.data-source=thirdShard", "pgqueue.shards.s3.schema=" + S3.name());

	@AfterAll
	static void dropSchemas() {
		List.of(APPLICATION, S1, S2, S3).forEach(FreshSchema::drop);
	}

	@Test
	void buildsOneEngineAndTableAShardAndRoutesTheJobClientOverThem() {
		this.contextRunner.withUserConfiguration(ThirdShard.class)
			.withConfiguration(AutoConfigurations.of(QueueInfoContributorAutoConfiguration.class))
			.run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(QueueShards.class)
				.hasSingleBean(JobClient.class)
				.hasSingleBean(JobAdmin.class)
				.hasSingleBean(QueueEngine.class);
			QueueShards shards = context.getBean(QueueShards.class);
			QueueEngine engine = context.getBean(QueueEngine.class);
			assertThat(shards.names()).containsExactly("s1", "s2", "s3");
			assertThat(engine.shards()).isSameAs(shards);
			assertThat(context.getBean(JobClient.class)).isSameAs(engine.client());
			assertThat(context.getBean(JobAdmin.class)).isSameAs(engine.admin());
			SCHEMAS.values().forEach((schema) -> assertThat(schema.tables(jdbc(context))).contains("pgqueue_jobs"));
			Info.Builder info = new Info.Builder();
			context.getBean("pgqueueInfoContributor", InfoContributor.class).contribute(info);
			assertThat(info.build().getDetails().get("pgqueue")).asString()
				.contains("shards={s1=SchemaInfo[name=" + S1.name() + ", version=22, unavailable=null]")
				.contains("s3=SchemaInfo[name=" + S3.name() + ", version=22, unavailable=null]");
			assertThat(APPLICATION.tables(jdbc(context))).doesNotContain("pgqueue_jobs");
		});
	}

	@Test
	void eachKeysJobsRunOnTheShardItsSlotNamesAndEachJobTellsItsShard() {
		this.contextRunner.withUserConfiguration(ThirdShard.class, ShardListener.class)
			.withConfiguration(AutoConfigurations.of(QueueMetricsAutoConfiguration.class))
			.withBean(SimpleMeterRegistry.class)
			.run((context) -> {
			QueueShards shards = context.getBean(QueueShards.class);
			JobClient client = context.getBean(JobClient.class);
			Map<UUID, String> expected = new ConcurrentHashMap<>();
			for (int i = 0; i < 30; i++) {
				String tenant = "tenant-" + i;
				UUID id = client.enqueue(JobRequest.of("shard.record", tenant).shardKey(tenant));
				expected.put(id, shards.shardOfKey(tenant).orElseThrow());
			}
			ShardListener listener = context.getBean(ShardListener.class);
			await().atMost(TIMEOUT).until(() -> listener.shards.size() == 30);
			assertThat(listener.shards).isEqualTo(expected);
			assertThat(Set.copyOf(expected.values())).containsExactlyInAnyOrder("s1", "s2", "s3");
			expected.forEach((id, shard) -> {
				assertThat(shards.shardOf(id)).contains(shard);
				assertThat(SCHEMAS.get(shard).stateOf(jdbc(context), id)).isEqualTo("completed");
			});
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			for (String shard : List.of("s1", "s2", "s3")) {
				long ran = expected.values().stream().filter(shard::equals).count();
				assertThat(registry.find("pgqueue.handler.duration").tags("shard", shard, "kind", "shard.record").timer())
					.as("handler timer of shard %s", shard)
					.isNotNull()
					.satisfies((timer) -> assertThat(timer.count()).isEqualTo(ran));
			}
			assertThat(registry.find("pgqueue.handler.duration").tags("kind", "shard.record").timers())
				.allSatisfy((timer) -> assertThat(timer.getId().getTag("shard")).isNotNull());
		});
	}

	@Test
	void jobsWithoutAKeyTakeTheShardsInTurnAndANamedShardWins() {
		this.contextRunner.withUserConfiguration(ThirdShard.class).withPropertyValues("pgqueue.enabled=false")
			.run((context) -> {
				JobClient client = context.getBean(JobClient.class);
				List<String> landed = new ArrayList<>();
				for (int i = 0; i < 9; i++) {
					landed.add(shardHolding(context, client.enqueue(JobRequest.of("shard.unkeyed", i))));
				}
				assertThat(landed).filteredOn("s1"::equals).hasSize(3);
				assertThat(landed).filteredOn("s2"::equals).hasSize(3);
				assertThat(landed).filteredOn("s3"::equals).hasSize(3);
				String tenant = "tenant-named";
				String other = context.getBean(QueueShards.class).shardOfKey(tenant).orElseThrow().equals("s2") ? "s3" : "s2";
				UUID named = client.enqueue(JobRequest.of("shard.unkeyed", 1).shardKey(tenant).shard(other));
				assertThat(shardHolding(context, named)).isEqualTo(other);
				assertThatIllegalArgumentException()
					.isThrownBy(() -> client.enqueue(JobRequest.of("shard.unkeyed", 1).shard("s9")))
					.withMessageContaining("shard 's9'")
					.withMessageContaining("pgqueue.shards");
			});
	}

	@Test
	void anEnqueueInsideATransactionOnAShardLandsThereAndRollsBackWithIt() {
		this.contextRunner.withUserConfiguration(ThirdShard.class).withPropertyValues("pgqueue.enabled=false")
			.run((context) -> {
				QueueShards shards = context.getBean(QueueShards.class);
				JobClient client = context.getBean(JobClient.class);
				TransactionTemplate onS2 = new TransactionTemplate(new DataSourceTransactionManager(shards.dataSource("s2")));
				List<UUID> ids = new ArrayList<>();
				onS2.executeWithoutResult((status) -> {
					for (int i = 0; i < 6; i++) {
						ids.add(client.enqueue(JobRequest.of("shard.unkeyed", i)));
					}
				});
				ids.forEach((id) -> assertThat(shardHolding(context, id)).isEqualTo("s2"));
				UUID[] rolledBack = new UUID[1];
				onS2.executeWithoutResult((status) -> {
					rolledBack[0] = client.enqueue(JobRequest.of("shard.unkeyed", 1));
					status.setRollbackOnly();
				});
				assertThat(S2.stateOf(jdbc(context), rolledBack[0])).isNull();
				String keyOfS1 = keyOn(shards, "s1");
				assertThatIllegalStateException()
					.isThrownBy(() -> onS2.executeWithoutResult(
							(status) -> client.enqueue(JobRequest.of("shard.unkeyed", 1).shardKey(keyOfS1))))
					.withMessageContaining("belongs on shard 's1'")
					.withMessageContaining("transaction is on shard 's2'");
			});
	}

	@Test
	void aTransactionalListenerWritesThroughTheTransactionDataSourceOnItsJobsShardAndRollsBackWithItsJob() {
		SCHEMAS.values().forEach((schema) -> applicationJdbc().execute("CREATE SCHEMA IF NOT EXISTS " + schema.name()
				+ "; CREATE TABLE IF NOT EXISTS " + schema.name() + ".shard_effects (job_id uuid NOT NULL, shard text)"));
		this.contextRunner.withUserConfiguration(ThirdShard.class, EffectListener.class)
			.withPropertyValues("pgqueue.queues.default.retry.initial-delay=100ms")
			.run((context) -> {
				QueueShards shards = context.getBean(QueueShards.class);
				EffectListener listener = context.getBean(EffectListener.class);
				listener.jdbc = new JdbcTemplate(shards.transactionDataSource());
				JobClient client = context.getBean(JobClient.class);
				List<UUID> ids = new ArrayList<>();
				for (int i = 0; i < 24; i++) {
					ids.add(client.enqueue(JobRequest.of("shard.effect", i).shardKey("key-" + i)));
				}
				await().atMost(TIMEOUT)
					.until(() -> ids.stream().allMatch((id) -> "completed".equals(stateOnItsShard(context, id))));
				// Every job wrote its effect, then failed once: the failed attempt's write went with it.
				for (UUID id : ids) {
					String shard = shards.shardOf(id).orElseThrow();
					assertThat(jdbc(context).queryForList("SELECT shard FROM " + SCHEMAS.get(shard).name()
							+ ".shard_effects WHERE job_id = ?", String.class, id))
						.as("effects of job %s", id)
						.containsExactly(shard);
				}
				assertThat(listener.attempts).hasSize(48);
				assertThatThrownBy(() -> listener.jdbc.queryForObject("SELECT 1", Integer.class)).rootCause()
					.isInstanceOf(IllegalStateException.class)
					.hasMessageContaining("No transaction on a shard's DataSource");
			});
	}

	@Test
	void whileAShardDoesNotAnswerItsKeyedJobsAreRefusedNamingItAndOthersGoToTheShardsUp() {
		this.contextRunner.withUserConfiguration(ThirdShard.class)
			.withConfiguration(AutoConfigurations.of(QueueHealthAutoConfiguration.class))
			.run((context) -> {
				HealthIndicator health = context.getBean("pgqueueHealthIndicator", HealthIndicator.class);
				assertThat(health.health().getStatus()).isEqualTo(Status.UP);
				QueueShards shards = context.getBean(QueueShards.class);
				JobClient client = context.getBean(JobClient.class);
				DelegatingDataSource third = (DelegatingDataSource) context.getBean("thirdShard");
				DataSource answering = third.getTargetDataSource();
				String keyOfS3 = keyOn(shards, "s3");
				assertThat(shardHolding(context, client.enqueue(JobRequest.of("shard.unkeyed", 0).shardKey(keyOfS3))))
					.isEqualTo("s3");
				// As a stopped server: new connections refused, the open ones (this shard's alone) cut.
				third.setTargetDataSource(refusing());
				applicationJdbc().queryForList("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
						+ "WHERE application_name = 'pgqueue-third-shard'");
				long stopped = System.nanoTime();
				await().atMost(TIMEOUT).until(() -> shards.whyDown("s3") != null);
				assertThat(Duration.ofNanos(System.nanoTime() - stopped)).isLessThan(Duration.ofSeconds(1));
				assertThatThrownBy(() -> client.enqueue(JobRequest.of("shard.unkeyed", 1).shardKey(keyOfS3)))
					.isInstanceOf(ShardUnavailableException.class)
					.hasMessageContaining("belongs on shard 's3', which does not answer");
				for (int i = 0; i < 6; i++) {
					assertThat(shardHolding(context, client.enqueue(JobRequest.of("shard.unkeyed", i)))).isIn("s1", "s2");
				}
				Health degraded = health.health();
				assertThat(degraded.getStatus()).isEqualTo(QueueHealthIndicator.DEGRADED);
				assertThat(degraded.getDetails().get("shards")).asString()
					.contains("s3={answers=false, why=its last probe failed");
				third.setTargetDataSource(answering);
				await().atMost(TIMEOUT).until(() -> shards.whyDown("s3") == null);
				assertThat(health.health().getStatus()).isEqualTo(Status.UP);
				assertThat(shardHolding(context, client.enqueue(JobRequest.of("shard.unkeyed", 2).shardKey(keyOfS3))))
					.isEqualTo("s3");
			});
	}

	@Test
	void theEndpointPagesThroughEveryShardsJobsAndFindsEachOnItsShard() {
		this.contextRunner.withUserConfiguration(ThirdShard.class)
			.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class, QueueEndpointAutoConfiguration.class))
			.withPropertyValues("pgqueue.enabled=false", "management.endpoints.web.exposure.include=pgqueue")
			.run((context) -> {
				JobClient client = context.getBean(JobClient.class);
				List<UUID> enqueued = new ArrayList<>();
				for (int i = 0; i < 12; i++) {
					enqueued.add(client.enqueue(JobRequest.of("shard.listed", i).queue("listed")));
				}
				QueueEndpoint endpoint = context.getBean(QueueEndpoint.class);
				List<UUID> listed = new ArrayList<>();
				String cursor = null;
				do {
					JobsDescriptor page = (JobsDescriptor) endpoint.jobs("jobs", "listed", null, null, null, null, null,
							cursor, 5, null, null, null);
					page.jobs().forEach((job) -> listed.add(job.id()));
					cursor = page.next();
				}
				while (cursor != null && listed.size() < 100);
				assertThat(listed).containsExactlyInAnyOrderElementsOf(enqueued).doesNotHaveDuplicates();
				assertThat(context.getBean(JobAdmin.class).find(enqueued.get(4))).isPresent();
			});
	}

	@Test
	void withSpillUnkeyedAJobWithoutAKeyThatItsShardRefusesIsTakenByAnother() {
		this.contextRunner.withUserConfiguration(ThirdShard.class)
			.withPropertyValues("pgqueue.sharding.spill-unkeyed=true")
			.run((context) -> {
				QueueShards shards = context.getBean(QueueShards.class);
				JobClient client = context.getBean(JobClient.class);
				DelegatingDataSource third = (DelegatingDataSource) context.getBean("thirdShard");
				DataSource answering = third.getTargetDataSource();
				// New connections to s3 refused while its watch's own connection still answers: the moment
				// before a stopped server is noticed.
				third.setTargetDataSource(refusing());
				try {
					assertThat(shards.whyDown("s3")).isNull();
					for (int i = 0; i < 6; i++) {
						assertThat(shardHolding(context, client.enqueue(JobRequest.of("shard.unkeyed", i))))
							.isIn("s1", "s2");
					}
					assertThatThrownBy(() -> client.enqueue(JobRequest.of("shard.unkeyed", 0).shardKey(keyOn(shards, "s3"))))
						.as("a keyed job is never spilled")
						.isInstanceOf(CannotGetJdbcConnectionException.class);
				}
				finally {
					third.setTargetDataSource(answering);
				}
			});
	}

	@Test
	void withStartWhileDownAShardThatDoesNotAnswerAtStartUpIsMigratedAndPolledOnceItDoes() {
		FreshSchema late = FreshSchema.named("pgqueue_s3_late");
		try {
			this.contextRunner.withUserConfiguration(LateThirdShard.class, ShardListener.class)
				.withConfiguration(AutoConfigurations.of(QueueHealthAutoConfiguration.class,
						QueueInfoContributorAutoConfiguration.class))
				.withPropertyValues("pgqueue.sharding.start-while-down=true", "pgqueue.shards.s3.schema=" + late.name())
				.run((context) -> {
					assertThat(context).hasNotFailed();
					QueueShards shards = context.getBean(QueueShards.class);
					JobClient client = context.getBean(JobClient.class);
					String keyOfS3 = keyOn(shards, "s3");
					assertThat(shards.whyDown("s3")).contains("it did not answer at start-up");
					assertThatThrownBy(() -> client.enqueue(JobRequest.of("shard.record", "early").shardKey(keyOfS3)))
						.isInstanceOf(ShardUnavailableException.class)
						.hasMessageContaining("belongs on shard 's3', which does not answer");
					assertThat(context.getBean("pgqueueHealthIndicator", HealthIndicator.class).health().getStatus())
						.isEqualTo(QueueHealthIndicator.DEGRADED);
					Info.Builder info = new Info.Builder();
					context.getBean("pgqueueInfoContributor", InfoContributor.class).contribute(info);
					assertThat(info.build().getDetails().get("pgqueue")).asString()
						.contains("s3=SchemaInfo[name=" + late.name() + ", version=null, unavailable=it did not answer");
					assertThatThrownBy(() -> context.getBean(JobAdmin.class).counts())
						.as("the admin does not ask a shard the watch holds down")
						.isInstanceOfSatisfying(ShardsPartlyFailedException.class, (ex) -> {
							assertThat(ex.failures().get("s3")).isInstanceOf(ShardUnavailableException.class)
								.hasMessageContaining("it did not answer at start-up");
							assertThat(ex.results()).containsOnlyKeys("s1", "s2");
						});
					UUID elsewhere = client.enqueue(JobRequest.of("shard.record", "elsewhere"));
					assertThat(Stream.of(S1, S2).filter((schema) -> schema.stateOf(jdbc(context), elsewhere) != null))
						.as("shards holding the job without a key").hasSize(1);

					context.getBean(LateThirdShard.class).answer();
					await().atMost(TIMEOUT).until(() -> shards.whyDown("s3") == null);
					assertThat(late.tables(jdbc(context))).contains("pgqueue_jobs");
					UUID id = client.enqueue(JobRequest.of("shard.record", "late").shardKey(keyOfS3));
					ShardListener listener = context.getBean(ShardListener.class);
					await().atMost(TIMEOUT).until(() -> listener.shards.containsKey(id));
					assertThat(listener.shards.get(id)).isEqualTo("s3");
				});
			this.contextRunner.withUserConfiguration(RefusingThirdShard.class)
				.withPropertyValues("pgqueue.sharding.start-while-down=true",
						"pgqueue.shards.s1.url=" + ((DriverManagerDataSource) refusing()).getUrl(),
						"pgqueue.shards.s2.url=" + ((DriverManagerDataSource) refusing()).getUrl(),
						"pgqueue.shards.s1.connection-timeout=250ms", "pgqueue.shards.s2.connection-timeout=250ms")
				.run((context) -> {
					assertThat(context).hasFailed();
					assertThat(context.getStartupFailure()).hasMessageContaining(
							"None of the shards [s1, s2, s3] answered at start-up");
				});
		}
		finally {
			late.drop();
		}
	}

	@Test
	void aTwoPhaseQueuePreparesEachJobsTransactionOnItsOwnShardWithAResolverPerShard() {
		this.contextRunner.withUserConfiguration(ThirdShard.class, TwoPhaseCommitAutoConfigurationTests.PaymentConfiguration.class)
			.withPropertyValues("pgqueue.queues.payments.two-phase-commit=true", "pgqueue.queues.payments.poll-interval=100ms")
			.run((context) -> {
				QueueShards shards = context.getBean(QueueShards.class);
				JobClient client = context.getBean(JobClient.class);
				Map<UUID, String> expected = new ConcurrentHashMap<>();
				for (String shard : shards.names()) {
					assertThat(EngineInternals.of(context.getBean(QueueEngine.class), shard).inDoubtResolver())
						.as("in-doubt resolver of %s", shard)
						.isNotNull();
					for (int i = 0; i < 2; i++) {
						UUID id = client.enqueue(JobRequest.of("payment.capture", new TwoPhaseCommitAutoConfigurationTests.Capture(i))
							.queue("payments").shard(shard));
						expected.put(id, shard);
					}
				}
				TwoPhaseCommitAutoConfigurationTests.PaymentListener listener = context
					.getBean(TwoPhaseCommitAutoConfigurationTests.PaymentListener.class);
				expected.forEach((id, shard) -> {
					await().atMost(TIMEOUT).until(() -> "completed".equals(SCHEMAS.get(shard).stateOf(jdbc(context), id)));
					assertThat(listener.sawPrepared).as("job %s prepared before its effect ran", id).containsEntry(id, true);
				});
				SCHEMAS.values().forEach((schema) -> assertThat(jdbc(context).queryForObject(
						"SELECT count(*) FROM pg_prepared_xacts WHERE starts_with(gid, ?)", Long.class,
						"pgqueue:" + schema.name() + ":")).as("prepared transactions left on %s", schema.name()).isZero());
			});
	}

	@Test
	void theEndpointsQueuesAddUpEveryShardsStatsAndPollers() {
		this.contextRunner.withUserConfiguration(ThirdShard.class, ShardListener.class)
			.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class, QueueEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=pgqueue",
					"pgqueue.maintenance.stats-interval=200ms", "pgqueue.queues.default.concurrency=2")
			.run((context) -> {
				JobClient client = context.getBean(JobClient.class);
				List<String> names = List.of("s1", "s2", "s2", "s3", "s3", "s3");
				for (String shard : names) {
					client.enqueue(JobRequest.of("shard.later", shard).queue("totals").shard(shard).delay(Duration.ofHours(1)));
				}
				QueueEndpoint endpoint = context.getBean(QueueEndpoint.class);
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(endpoint.queues().queues().get("totals"))
					.isNotNull()
					.satisfies((totals) -> assertThat(totals.scheduled()).isEqualTo(6L)));
				QueuesDescriptor.QueueDescriptor polled = endpoint.queues().queues().get(JobRequest.DEFAULT_QUEUE);
				assertThat(polled.polled()).isTrue();
				assertThat(polled.concurrency()).as("concurrency of the three shards' pollers").isEqualTo(6);
				assertThat(endpoint.queues().shards().get("s3").queues().get("totals").scheduled()).isEqualTo(3L);
			});
	}

	@Test
	void recurringJobsLiveOnTheFirstShardAndJobSchedulesIsItsBean() {
		this.contextRunner.withUserConfiguration(ThirdShard.class)
			.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class, QueueEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=pgqueue")
			.withPropertyValues("pgqueue.schedules.nightly.cron=0 0 3 * * *",
					"pgqueue.schedules.nightly.kind=shard.nightly")
			.run((context) -> {
				assertThat(context).hasSingleBean(JobSchedules.class);
				JobSchedules schedules = context.getBean(JobSchedules.class);
				assertThat(schedules).isSameAs(EngineInternals.of(context.getBean(QueueEngine.class), "s1").schedules());
				assertThat(schedules.list()).extracting(ScheduleDetails::name).containsExactly("nightly");
				UUID fired = schedules.runNow("nightly");
				assertThat(shardHolding(context, fired)).isEqualTo("s1");
				SchedulesDescriptor listed = (SchedulesDescriptor) context.getBean(QueueEndpoint.class)
					.jobs("schedules", null, null, null, null, null, null, null, null, null, null, null);
				assertThat(listed).isNotNull();
				assertThat(listed.schedules()).extracting(ScheduleDescriptor::name).containsExactly("nightly");
				for (FreshSchema other : List.of(S2, S3)) {
					assertThat(jdbc(context).queryForObject("SELECT count(*) FROM " + other.name()
							+ ".pgqueue_schedules", Integer.class)).as("schedules on %s", other.name()).isZero();
				}
			});
	}

	@Test
	void theEndpointShowsEachShardsOwnJobsAndAShardThatDoesNotAnswerBesideTheOthers() {
		this.contextRunner.withUserConfiguration(ThirdShard.class)
			.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class, QueueEndpointAutoConfiguration.class))
			.withPropertyValues("pgqueue.enabled=false", "management.endpoints.web.exposure.include=pgqueue")
			.run((context) -> {
				JobClient client = context.getBean(JobClient.class);
				client.enqueue(JobRequest.of("shard.viewed", 0).queue("viewed-mail").shard("s1"));
				for (int i = 0; i < 3; i++) {
					client.enqueue(JobRequest.of("shard.viewed", i).queue("viewed-reports").shard("s2"));
				}
				for (int i = 0; i < 2; i++) {
					client.enqueue(JobRequest.of("shard.viewed", i).queue("viewed-reports").shard("s3")
						.delay(Duration.ofHours(1)));
				}
				QueueShards shards = context.getBean(QueueShards.class);
				QueueEndpoint endpoint = context.getBean(QueueEndpoint.class);
				Map<String, ShardDescriptor> viewed = endpoint.queues().shards();
				assertThat(viewed).containsOnlyKeys("s1", "s2", "s3");
				assertThat(List.copyOf(viewed.keySet())).containsExactly("s1", "s2", "s3");
				viewed.forEach((shard, view) -> assertThat(view.slots()).as("slots of %s", shard)
					.isEqualTo(context.getBean(QueueEngine.class).layout().orElseThrow().slotCounts().get(shard)));
				assertThat(viewed.values().stream().mapToInt(ShardDescriptor::slots).sum()).isEqualTo(16384);
				assertThat(viewed.values()).allSatisfy((view) -> assertThat(view.answers()).isTrue())
					.allSatisfy((view) -> assertThat(view.why()).isNull());
				// The other tests' jobs are on these shards too, in queues of their own.
				assertThat(viewed.get("s1").queues()).containsEntry("viewed-mail", new ShardQueueDescriptor(1, 0, 0, 0))
					.doesNotContainKey("viewed-reports");
				assertThat(viewed.get("s2").queues()).containsEntry("viewed-reports", new ShardQueueDescriptor(3, 0, 0, 0))
					.doesNotContainKey("viewed-mail");
				assertThat(viewed.get("s3").queues()).containsEntry("viewed-reports", new ShardQueueDescriptor(0, 2, 0, 0))
					.doesNotContainKey("viewed-mail");

				// New connections refused while the watch's own still answers: the count fails before the watch knows.
				DelegatingDataSource third = (DelegatingDataSource) context.getBean("thirdShard");
				DataSource answering = third.getTargetDataSource();
				third.setTargetDataSource(refusing());
				assertThat(shards.whyDown("s3")).isNull();
				Map<String, ShardDescriptor> counting = endpoint.queues().shards();
				assertThat(counting.get("s3").answers()).isFalse();
				assertThat(counting.get("s3").why()).startsWith("its jobs could not be counted: ");
				assertThat(counting.get("s3").queues()).isNull();
				assertThat(counting.get("s2").queues()).isEqualTo(viewed.get("s2").queues());

				// Once the watch knows, the shard is not read at all, and the watch says why.
				applicationJdbc().queryForList("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
						+ "WHERE application_name = 'pgqueue-third-shard'");
				await().atMost(TIMEOUT).until(() -> shards.whyDown("s3") != null);
				Map<String, ShardDescriptor> down = endpoint.queues().shards();
				assertThat(down.get("s3").answers()).isFalse();
				assertThat(down.get("s3").why()).startsWith("its last probe failed");
				assertThat(down.get("s3").slots()).isEqualTo(viewed.get("s3").slots());
				assertThat(down.get("s1")).isEqualTo(viewed.get("s1"));
				assertThat(down.get("s2")).isEqualTo(viewed.get("s2"));

				third.setTargetDataSource(answering);
				await().atMost(TIMEOUT).until(() -> shards.whyDown("s3") == null);
				assertThat(endpoint.queues().shards().get("s3")).isEqualTo(viewed.get("s3"));
			});
	}

	@Test
	void refusesAShardWithoutConnectionSettingsOrWithSlotsForSomeShardsOnly() {
		this.contextRunner.withUserConfiguration(ThirdShard.class).withPropertyValues("pgqueue.shards.s4.schema=x").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(InvalidQueueConfigurationException.class)
				.hasMessageContaining("pgqueue.shards.s4.url");
		});
		this.contextRunner.withUserConfiguration(ThirdShard.class)
			.withPropertyValues("pgqueue.shards.s1.slots=0-8191", "pgqueue.shards.s2.slots=8192-16383")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.isInstanceOf(InvalidQueueConfigurationException.class)
					.hasMessageContaining("pgqueue.shards.s3.slots");
			});
		this.contextRunner.withUserConfiguration(ThirdShard.class)
			.withPropertyValues("pgqueue.shards.s1.connection-timeout=100ms")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.hasMessageContaining("pgqueue.shards.s1.connection-timeout must be at least 250ms");
			});
		this.contextRunner.withUserConfiguration(ThirdShard.class)
			.withPropertyValues("pgqueue.shards.s2.url=" + ((DriverManagerDataSource) refusing()).getUrl(),
					"pgqueue.shards.s2.connection-timeout=250ms")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).hasMessageContaining(
						"pgqueue could not open a pool on shard 's2' (pgqueue.shards.s2): ")
					.hasMessageContaining("Every shard must answer when the application starts");
			});
		this.contextRunner.withUserConfiguration(RefusingThirdShard.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasMessageContaining("pgqueue could not migrate the jobs table of shard 's3' (pgqueue.shards.s3): ");
		});
		this.contextRunner.withPropertyValues("pgqueue.shards.s3.data-source=noSuchBean").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("pgqueue.shards.s3.data-source names 'noSuchBean'");
		});
	}

	@Test
	void withoutShardsARequestNamingOneIsRefusedAndJobsTellNoShard() {
		FreshSchema single = FreshSchema.named("pgqueue_single");
		try {
			runWithoutShards(single);
		}
		finally {
			single.drop();
		}
	}

	private void runWithoutShards(FreshSchema single) {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
					JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class))
			.withPropertyValues(single.properties())
			.withUserConfiguration(ShardListener.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(QueueEngine.class);
				assertThat(context.getBean(QueueShards.class).names()).isEmpty();
				JobClient client = context.getBean(JobClient.class);
				assertThatIllegalArgumentException()
					.isThrownBy(() -> client.enqueue(JobRequest.of("shard.record", "x").shard("s1")))
					.withMessageContaining("no shards are configured (pgqueue.shards)");
				UUID id = client.enqueue(JobRequest.of("shard.record", "x").shardKey("ignored without shards"));
				ShardListener listener = context.getBean(ShardListener.class);
				await().atMost(TIMEOUT).until(() -> listener.jobs.containsKey(id));
				assertThat(listener.jobs.get(id).shard()).isNull();
			});
	}

	private static String[] shard(String name, FreshSchema schema) {
		TestDatabase database = TestDatabase.get();
		List<String> properties = new ArrayList<>();
		properties.add("pgqueue.shards." + name + ".url=" + database.jdbcUrl());
		if (database.username() != null) {
			properties.add("pgqueue.shards." + name + ".username=" + database.username());
		}
		if (database.password() != null) {
			properties.add("pgqueue.shards." + name + ".password=" + database.password());
		}
		properties.add("pgqueue.shards." + name + ".schema=" + schema.name());
		properties.add("pgqueue.shards." + name + ".maximum-pool-size=6");
		return properties.toArray(new String[0]);
	}

	/** A DataSource on a port nothing listens on, as a stopped server: every connection is refused. */
	private static DataSource refusing() {
		try (ServerSocket free = new ServerSocket(0)) {
			return new DriverManagerDataSource("jdbc:postgresql://127.0.0.1:" + free.getLocalPort() + "/test");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String keyOn(QueueShards shards, String shard) {
		for (int i = 0;; i++) {
			if (shards.shardOfKey("key-" + i).orElseThrow().equals(shard)) {
				return "key-" + i;
			}
		}
	}

	private static String shardHolding(ApplicationContext context, UUID id) {
		List<String> holding = SCHEMAS.entrySet()
			.stream()
			.filter((entry) -> entry.getValue().stateOf(jdbc(context), id) != null)
			.map(Map.Entry::getKey)
			.toList();
		assertThat(holding).as("shards holding job %s", id).hasSize(1);
		return holding.get(0);
	}

	private static String stateOnItsShard(ApplicationContext context, UUID id) {
		return SCHEMAS.get(shardHolding(context, id)).stateOf(jdbc(context), id);
	}

	private static JdbcTemplate jdbc(ApplicationContext context) {
		return new JdbcTemplate(context.getBean(DataSource.class));
	}

	private static JdbcTemplate applicationJdbc() {
		TestDatabase database = TestDatabase.get();
		return new JdbcTemplate(
				new DriverManagerDataSource(database.jdbcUrl(), database.username(), database.password()));
	}

	@Configuration(proxyBeanMethods = false)
	static class ThirdShard {

		@Bean(defaultCandidate = false)
		DataSource thirdShard() {
			TestDatabase database = TestDatabase.get();
			String url = database.jdbcUrl() + (database.jdbcUrl().contains("?") ? "&" : "?")
					+ "ApplicationName=pgqueue-third-shard";
			return new DelegatingDataSource(new DriverManagerDataSource(url, database.username(), database.password()));
		}

	}

	/** A third shard that refuses every connection until told to answer. */
	static class LateThirdShard {

		private final DelegatingDataSource dataSource = new DelegatingDataSource(refusing());

		@Bean(defaultCandidate = false)
		DataSource thirdShard() {
			return this.dataSource;
		}

		void answer() {
			TestDatabase database = TestDatabase.get();
			this.dataSource.setTargetDataSource(
					new DriverManagerDataSource(database.jdbcUrl(), database.username(), database.password()));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RefusingThirdShard {

		@Bean(defaultCandidate = false)
		DataSource thirdShard() {
			return refusing();
		}

	}

	static class ShardListener {

		final Map<UUID, String> shards = new ConcurrentHashMap<>();

		final Map<UUID, Job> jobs = new ConcurrentHashMap<>();

		@JobListener(kind = "shard.record")
		void record(String tenant, Job job) {
			this.jobs.put(job.id(), job);
			if (job.shard() != null) {
				this.shards.put(job.id(), job.shard());
			}
		}

	}

	static class EffectListener {

		volatile JdbcTemplate jdbc;

		final Map<String, Integer> attempts = new ConcurrentHashMap<>();

		@JobListener(kind = "shard.effect")
		void write(int index, Job job) {
			this.attempts.put(job.id() + "/" + job.attempt(), index);
			String schema = SCHEMAS.get(job.shard()).name();
			this.jdbc.update("INSERT INTO " + schema + ".shard_effects (job_id, shard) VALUES (?, ?)", job.id(),
					job.shard());
			if (job.attempt() == 1) {
				throw new IllegalStateException("first attempt of job " + job.id() + " fails after its write");
			}
		}

	}

}
