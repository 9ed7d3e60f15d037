package dev.pgqueue.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.AdminCaller;
import dev.pgqueue.InDoubtJobResolver;
import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobInterceptor;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.ScheduleSettings;
import dev.pgqueue.engine.shards.ShardLayout;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.thread.Threading;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.ClassUtils;

/**
 * pgqueue over the shards of {@code pgqueue.shards}: each shard's table migrated and its engine built
 * with the settings every engine shares, the engines run together by {@link QueueShards}, and the
 * application's {@link JobClient} the one that routes each job to its shard.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(ShardsCondition.Configured.class)
class QueueShardsConfiguration {

	@Bean
	QueueShards pgqueueShards(QueueProperties properties, Environment environment, QueueCatalog queues,
			JobHandlerRegistry handlers, ObjectProvider<PlatformTransactionManager> transactionManager,
			ObjectProvider<JsonMapper> jsonMapper, ObjectProvider<QueueMetrics> metrics,
			ObjectProvider<QueueObservations> observations, ObjectProvider<InDoubtJobResolver> inDoubtJobResolver,
			ObjectProvider<AdminCaller> caller, @QueueWorkerExecutor ObjectProvider<Executor> queueWorkerExecutor,
			@Qualifier(QueueAutoConfiguration.WORKER_EXECUTOR_BEAN_NAME) ObjectProvider<Executor> workerExecutor,
			ObjectProvider<JobInterceptor> interceptors, ObjectProvider<ShardMetrics> shardMetrics,
			ApplicationEventPublisher events, ListableBeanFactory beans) {
		Map<String, @Nullable String> slots = new LinkedHashMap<>();
		properties.getShards().forEach((name, shard) -> slots.put(name, shard.getSlots()));
		ShardLayout layout = ShardLayout.of(slots);
		EngineParts parts = new EngineParts(properties, queues, handlers, jsonMapper, metrics, observations,
				inDoubtJobResolver, caller, QueueInfrastructure.workerExecutor(queueWorkerExecutor, workerExecutor),
				interceptors, events);
		ScheduleSettings schedules = properties.toScheduleSettings();
		boolean virtualThreads = Threading.VIRTUAL.isActive(environment);
		boolean startWhileDown = properties.getSharding().isStartWhileDown();
		List<QueueShards.Member> members = new ArrayList<>();
		try {
			for (Map.Entry<String, QueueShardProperties> entry : properties.getShards().entrySet()) {
				String name = entry.getKey();
				QueueShardProperties shard = entry.getValue();
				AutoCloseable pool = null;
				DataSource dataSource;
				if (shard.getDataSource() != null) {
					dataSource = dataSourceBean(name, shard, beans);
				}
				else {
					dataSource = newPool(name, shard, startWhileDown);
					pool = (AutoCloseable) dataSource;
				}
				try {
					SchemaName schema = SchemaName
						.of((shard.getSchema() != null) ? shard.getSchema() : properties.getSchema().getName());
					QueueMigrator migrator = new QueueMigrator(dataSource, schema, properties.getSchema().isMigrate(),
							properties.getNotifications().isTrigger());
					RuntimeException unmigrated = migrate(name, migrator, startWhileDown);
					PlatformTransactionManager shared = transactionManager.getIfUnique();
					PlatformTransactionManager manager = (shared != null
							&& QueueInfrastructure.manages(shared, dataSource) == Boolean.TRUE) ? shared
									: new DataSourceTransactionManager(dataSource);
					// Recurring jobs live on the first shard, so that each fires once.
					QueueEngine engine = parts
						.configure(QueueEngine.builder(dataSource)
							.settings(properties.toEngineSettings(virtualThreads).withSchema(schema))
							.jdbcTemplate(new JdbcTemplate(dataSource))
							.transactionManager(manager)
							.schedules(members.isEmpty() ? schedules : schedules.withDeclared(List.of()))
							.shard(name, layout.ids(name)))
						.metrics(metricsOf(name, shardMetrics, metrics))
						.build();
					members.add(new QueueShards.Member(name, dataSource, engine, migrator, pool, unmigrated));
				}
				catch (RuntimeException ex) {
					closeQuietly(pool);
					throw ex;
				}
			}
		}
		catch (RuntimeException ex) {
			members.forEach((member) -> closeQuietly(member.ownPool()));
			throw ex;
		}
		if (members.stream().allMatch((member) -> member.unmigrated() != null)) {
			RuntimeException first = Objects.requireNonNull(members.get(0).unmigrated());
			members.forEach((member) -> closeQuietly(member.ownPool()));
			throw new IllegalStateException("None of the shards " + layout.shards() + " answered at start-up (shard '"
					+ members.get(0).name() + "': " + first.getMessage() + "). pgqueue.sharding.start-while-down lets "
					+ "the application start while some shards are down, not all: start it again once one answers.",
					first);
		}
		return new QueueShards(layout, members, properties.getSharding().isSpillUnkeyed());
	}

	@Bean
	@ConditionalOnMissingBean(JobClient.class)
	JobClient pgqueueJobClient(QueueShards shards) {
		return shards.client();
	}

	@Bean
	@ConditionalOnMissingBean(JobAdmin.class)
	JobAdmin pgqueueJobAdmin(QueueShards shards) {
		return shards.admin();
	}

	/** The schedules of the first shard declared, where every recurring job lives so that each tick fires once. */
	@Bean
	@ConditionalOnMissingBean(JobSchedules.class)
	JobSchedules pgqueueJobSchedules(QueueShards shards) {
		return shards.engine(shards.names().get(0)).schedules();
	}

	/**
	 * Migrates one shard's tables, naming the shard when it cannot: an instance must not start with
	 * part of its jobs out of reach, unnoticed, unless told to ({@code pgqueue.sharding.start-while-down}).
	 * @return why the shard could not be migrated, where start-up goes on without it
	 */
	private static @Nullable RuntimeException migrate(String shard, QueueMigrator migrator, boolean startWhileDown) {
		try {
			migrator.afterPropertiesSet();
			return null;
		}
		catch (RuntimeException ex) {
			if (!startWhileDown) {
				throw unanswered(shard, "migrate the jobs table of", ex);
			}
			return ex;
		}
	}

	private static IllegalStateException unanswered(String shard, String what, RuntimeException ex) {
		return new IllegalStateException("pgqueue could not " + what + " shard '" + shard + "' (pgqueue.shards."
				+ shard + "): " + ex.getMessage() + ". Every shard must answer when the application starts: start "
				+ "it again once shard '" + shard + "' answers.", ex);
	}

	private static DataSource dataSourceBean(String name, QueueShardProperties shard, ListableBeanFactory beans) {
		String key = "pgqueue.shards." + name + ".data-source";
		if (shard.getUrl() != null) {
			throw new InvalidQueueConfigurationException(key, key + " and pgqueue.shards." + name
					+ ".url are both set", "Give the shard either a DataSource bean or connection settings.");
		}
		try {
			return beans.getBean(shard.getDataSource(), DataSource.class);
		}
		catch (NoSuchBeanDefinitionException ex) {
			throw new InvalidQueueConfigurationException(key, key + " names '" + shard.getDataSource()
					+ "', which is no DataSource bean", "Name a DataSource bean, or give pgqueue.shards." + name
							+ ".url, username and password instead.");
		}
	}

	/** The shard's own tagged meters; else the application's QueueMetrics bean, shared; else none. */
	private static QueueMetrics metricsOf(String shard, ObjectProvider<ShardMetrics> shardMetrics,
			ObjectProvider<QueueMetrics> metrics) {
		ShardMetrics perShard = shardMetrics.getIfAvailable();
		return (perShard != null) ? perShard.forShard(shard) : metrics.getIfAvailable(() -> QueueMetrics.NONE);
	}

	private static void closeQuietly(@Nullable AutoCloseable pool) {
		if (pool != null) {
			try {
				pool.close();
			}
			catch (Exception ex) {
				// Start-up already fails with the cause that matters.
			}
		}
	}

	private static DataSource newPool(String name, QueueShardProperties shard, boolean startWhileDown) {
		String key = "pgqueue.shards." + name + ".url";
		if (shard.getUrl() == null || shard.getUrl().isBlank()) {
			throw new InvalidQueueConfigurationException(key, "Shard '" + name + "' has neither " + key
					+ " nor pgqueue.shards." + name + ".data-source", "Set " + key + " (with username and password), or pgqueue.shards." + name
							+ ".data-source to the name of a DataSource bean.");
		}
		if (!ClassUtils.isPresent("com.zaxxer.hikari.HikariDataSource", QueueShardsConfiguration.class.getClassLoader())) {
			throw new InvalidQueueConfigurationException(key, "Shard '" + name + "' gives connection settings, but "
					+ "HikariCP, which pgqueue makes its pool with, is not on the classpath",
					"Add spring-boot-starter-jdbc (or com.zaxxer:HikariCP), or give the shard a DataSource bean "
							+ "with pgqueue.shards." + name + ".data-source.");
		}
		if (shard.getMaximumPoolSize() < 1) {
			throw new InvalidQueueConfigurationException("pgqueue.shards." + name + ".maximum-pool-size",
					"pgqueue.shards." + name + ".maximum-pool-size must be at least 1, was "
							+ shard.getMaximumPoolSize(),
					"Give the pool room for each queue's pollers and workers.");
		}
		if (shard.getConnectionTimeout().toMillis() < 250) {
			throw new InvalidQueueConfigurationException("pgqueue.shards." + name + ".connection-timeout",
					"pgqueue.shards." + name + ".connection-timeout must be at least 250ms, was "
							+ shard.getConnectionTimeout(),
					"Give the pool at least 250ms to hand out a connection (HikariCP's least).");
		}
		return HikariPools.create(name, shard, startWhileDown);
	}

	/** Touched only when a shard gives connection settings, so that an application without HikariCP loads. */
	private static final class HikariPools {

		/** @param lazy whether the pool starts without a connection, for a shard that may not answer yet */
		static DataSource create(String name, QueueShardProperties shard, boolean lazy) {
			HikariConfig config = new HikariConfig();
			config.setJdbcUrl(shard.getUrl());
			config.setUsername(shard.getUsername());
			config.setPassword(shard.getPassword());
			config.setMaximumPoolSize(shard.getMaximumPoolSize());
			config.setConnectionTimeout(shard.getConnectionTimeout().toMillis());
			config.setPoolName("pgqueue-shard-" + name);
			if (lazy) {
				config.setInitializationFailTimeout(-1);
			}
			try {
				return new HikariDataSource(config);
			}
			catch (RuntimeException ex) {
				throw unanswered(name, "open a pool on", ex);
			}
		}

	}

}
