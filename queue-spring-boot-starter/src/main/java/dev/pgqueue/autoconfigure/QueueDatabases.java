package dev.pgqueue.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.NotificationConnectionFactory;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.QueueEngineBuilder;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.ClassUtils;

/**
 * The databases the engine runs on, as the configuration gives them: the application's data source
 * (or its {@link QueueDataSource}), or the shards of {@code pgqueue.shards}, each a {@code DataSource}
 * bean or a pool made from its connection settings. The one place of the starter that tells one
 * database from shards: it hands them to {@link QueueEngine#builder}, and everything else reads the
 * engine.
 */
final class QueueDatabases {

	private final QueueProperties properties;

	private final ListableBeanFactory beans;

	private final ObjectProvider<QueueMetrics> metrics;

	private final ObjectProvider<DatabaseMetrics> databaseMetrics;

	/**
	 * @param metrics the application's own metrics, which every database then shares
	 * @param databaseMetrics the meters of each database, made where the application has none of its own
	 */
	QueueDatabases(QueueProperties properties, ListableBeanFactory beans, ObjectProvider<QueueMetrics> metrics,
			ObjectProvider<DatabaseMetrics> databaseMetrics) {
		this.properties = properties;
		this.beans = beans;
		this.metrics = metrics;
		this.databaseMetrics = databaseMetrics;
	}

	/** Whether {@code pgqueue.shards} names shards. */
	static boolean sharded(QueueProperties properties) {
		return !properties.getShards().isEmpty();
	}

	/**
	 * Matches where the engine's one database is the application's (or its {@link QueueDataSource}):
	 * {@code pgqueue.shards} names no shard. The schema migration of that data source is then a bean, which
	 * Spring Boot's database initialization orders the application's database users after; each shard's
	 * migration is the engine's, on the pool it is given.
	 */
	static final class OnTheApplicationsDataSource extends SpringBootCondition {

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			boolean sharded = !Binder.get(context.getEnvironment())
				.bind("pgqueue.shards", Bindable.mapOf(String.class, QueueShardProperties.class))
				.orElse(Map.of())
				.isEmpty();
			return sharded ? ConditionOutcome.noMatch("pgqueue.shards names shards")
					: ConditionOutcome.match("pgqueue.shards names no shard");
		}

	}

	/** The builder of an engine on the application's queue data source: its template, transactions and sessions. */
	QueueEngineBuilder one(ObjectProvider<DataSource> queueDataSource, ObjectProvider<DataSource> applicationDataSource,
			ObjectProvider<JdbcTemplate> jdbcTemplate,
			ObjectProvider<PlatformTransactionManager> queueTransactionManager,
			ObjectProvider<PlatformTransactionManager> transactionManager,
			ObjectProvider<NotificationConnectionFactory> notificationConnections) {
		QueueInfrastructure infrastructure = new QueueInfrastructure(this.beans);
		DataSource dataSource = infrastructure.dataSource(queueDataSource, applicationDataSource);
		return QueueEngine.builder(dataSource)
			.jdbcTemplate(QueueInfrastructure.jdbcTemplate(dataSource, jdbcTemplate))
			.transactionManager(infrastructure.transactionManager(dataSource,
					QueueInfrastructure.isDedicated(queueDataSource), queueTransactionManager, transactionManager))
			.notificationConnections(notificationConnections.getIfUnique())
			.metrics(metricsOf(null));
	}

	/**
	 * The builder of an engine over the shards: each shard's pool (a bean, or one made here and closed
	 * with the engine), schema, migrator, transaction manager (the application's when it manages the
	 * shard's pool, else one of its own) and meters.
	 */
	QueueEngineBuilder shards(ObjectProvider<PlatformTransactionManager> transactionManager) {
		boolean startWhileDown = this.properties.getSharding().isStartWhileDown();
		QueueEngineBuilder builder = QueueEngine.builder()
			.startWhileDown(startWhileDown)
			.spillUnkeyed(this.properties.getSharding().isSpillUnkeyed());
		List<AutoCloseable> pools = new ArrayList<>();
		try {
			for (Map.Entry<String, QueueShardProperties> entry : this.properties.getShards().entrySet()) {
				String name = entry.getKey();
				QueueShardProperties shard = entry.getValue();
				DataSource dataSource;
				if (shard.getDataSource() != null) {
					dataSource = dataSourceBean(name, shard, this.beans);
				}
				else {
					dataSource = newPool(name, shard, startWhileDown);
					pools.add((AutoCloseable) dataSource);
				}
				SchemaName schema = SchemaName.of(
						(shard.getSchema() != null) ? shard.getSchema() : this.properties.getSchema().getName());
				PlatformTransactionManager shared = transactionManager.getIfUnique();
				PlatformTransactionManager manager = (shared != null
						&& QueueInfrastructure.manages(shared, dataSource) == Boolean.TRUE) ? shared
								: new DataSourceTransactionManager(dataSource);
				builder.shard(name, dataSource, (database) -> {
					database.slots(shard.getSlots())
						.schema(schema)
						.jdbcTemplate(new JdbcTemplate(dataSource))
						.transactionManager(manager)
						.metrics(metricsOf(name))
						.migrator(new QueueMigrator(dataSource, schema, this.properties.getSchema().isMigrate(),
								this.properties.getNotifications().isTrigger())
							.withBucketQueues(this.properties.bucketQueues()));
					if (shard.getDataSource() == null) {
						database.closeWith((AutoCloseable) dataSource);
					}
				});
			}
		}
		catch (RuntimeException ex) {
			pools.forEach(QueueDatabases::closeQuietly);
			throw ex;
		}
		return builder;
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

	/**
	 * The application's own metrics, shared by every database; else the database's meters (a shard's
	 * tagged with its name); else none, without Micrometer.
	 */
	private QueueMetrics metricsOf(@Nullable String shard) {
		QueueMetrics shared = this.metrics.getIfUnique();
		if (shared != null) {
			return shared;
		}
		DatabaseMetrics meters = this.databaseMetrics.getIfAvailable();
		return (meters != null) ? meters.of(shard) : QueueMetrics.NONE;
	}

	private static void closeQuietly(AutoCloseable pool) {
		try {
			pool.close();
		}
		catch (Exception ex) {
			// Start-up already fails with the cause that matters.
		}
	}

	private static DataSource newPool(String name, QueueShardProperties shard, boolean startWhileDown) {
		String key = "pgqueue.shards." + name + ".url";
		if (shard.getUrl() == null || shard.getUrl().isBlank()) {
			throw new InvalidQueueConfigurationException(key, "Shard '" + name + "' has neither " + key
					+ " nor pgqueue.shards." + name + ".data-source", "Set " + key + " (with username and password), or pgqueue.shards." + name
							+ ".data-source to the name of a DataSource bean.");
		}
		if (!ClassUtils.isPresent("com.zaxxer.hikari.HikariDataSource", QueueDatabases.class.getClassLoader())) {
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
