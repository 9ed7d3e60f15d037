package dev.pgqueue.autoconfigure;

import java.util.concurrent.Executor;

import javax.sql.DataSource;

import dev.pgqueue.AdminCaller;
import dev.pgqueue.InDoubtJobResolver;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobInterceptor;
import dev.pgqueue.JobSchedules;
import dev.pgqueue.QueueShards;
import dev.pgqueue.JobRequest;
import dev.pgqueue.NotificationConnectionFactory;
import dev.pgqueue.RetryPolicy;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.QueueEngineBuilder;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.listener.JobListenerMethodProcessor;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.thread.Threading;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * Auto-configuration of pgqueue: the schema migrator, the repository, the {@link JobClient}, the
 * {@link JobAdmin}, the discovery of {@code @JobListener} methods and, unless
 * {@code pgqueue.enabled=false}, one poller per queue plus the background services.
 *
 * <p>They run on the application's data source and transaction manager, or on the beans qualified
 * with {@link QueueDataSource}, {@link QueueTransactionManager} and {@link QueueWorkerExecutor}.
 */
@AutoConfiguration(after = { DataSourceAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
		DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
		JacksonAutoConfiguration.class })
@ConditionalOnClass({ JobClient.class, JdbcTemplate.class })
@ConditionalOnBean(DataSource.class)
@EnableConfigurationProperties(QueueProperties.class)
public final class QueueAutoConfiguration {

	/**
	 * Name of an {@link Executor} bean that, when the application defines one, runs the workers of
	 * every queue instead of a pool per queue. Each queue still runs at most its concurrency at once.
	 * A bean qualified with {@link QueueWorkerExecutor} takes precedence.
	 */
	public static final String WORKER_EXECUTOR_BEAN_NAME = "pgqueueWorkerExecutor";

	@Bean
	@Conditional(QueueDatabases.OnTheApplicationsDataSource.class)
	@ConditionalOnMissingBean
	QueueMigrator pgqueueMigrator(@QueueDataSource ObjectProvider<DataSource> queueDataSource,
			ObjectProvider<DataSource> dataSource, QueueProperties properties, ListableBeanFactory beans) {
		DataSource queueData = new QueueInfrastructure(beans).dataSource(queueDataSource, dataSource);
		return new QueueMigrator(queueData, SchemaName.of(properties.getSchema().getName()),
				properties.getSchema().isMigrate(), properties.getNotifications().isTrigger())
			.withBucketQueues(properties.bucketQueues());
	}

	@Bean
	JobHandlerRegistry pgqueueJobHandlerRegistry(QueueProperties properties) {
		JobHandlerRegistry registry = new JobHandlerRegistry();
		properties.getKinds().forEach((kind, settings) -> registry.override(settings.toSettings(kind)));
		return registry;
	}

	/**
	 * Holds the JVM while this application processes jobs: every engine thread is a daemon, so a
	 * worker without a web server would otherwise exit as soon as it has started.
	 */
	@Bean
	@ConditionalOnBooleanProperty(name = "pgqueue.keep-alive", matchIfMissing = true)
	QueueKeepAlive pgqueueKeepAlive(QueueProperties properties, JobHandlerRegistry handlers) {
		return new QueueKeepAlive(() -> properties.isEnabled()
				&& (!handlers.queues().isEmpty() || !properties.getSchedules().isEmpty()));
	}

	@Bean
	QueueCatalog pgqueueQueueCatalog(QueueProperties properties, ObjectProvider<RetryPolicy> retryPolicy) {
		RetryPolicy defaultRetry = retryPolicy.getIfUnique(() -> RetryPolicy.DEFAULT);
		return new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE).withRetry(defaultRetry),
				properties.toQueueSettings(defaultRetry));
	}

	/**
	 * The engine, assembled once, on the application's data source or over the shards of
	 * {@code pgqueue.shards}: its client, admin and schedules are beans of their own, its pollers and
	 * services start and stop with it. With {@code pgqueue.enabled=false} it only enqueues and
	 * administers jobs.
	 */
	@Bean
	QueueEngine pgqueueEngine(@QueueDataSource ObjectProvider<DataSource> queueDataSource,
			ObjectProvider<DataSource> applicationDataSource, ObjectProvider<JdbcTemplate> jdbcTemplate,
			@QueueTransactionManager ObjectProvider<PlatformTransactionManager> queueTransactionManager,
			ObjectProvider<PlatformTransactionManager> transactionManager, ObjectProvider<JsonMapper> jsonMapper,
			QueueProperties properties, Environment environment, QueueCatalog queues, JobHandlerRegistry handlers,
			ObjectProvider<QueueMetrics> metrics, ObjectProvider<DatabaseMetrics> databaseMetrics,
			ObjectProvider<QueueObservations> observations,
			ObjectProvider<InDoubtJobResolver> inDoubtJobResolver, ObjectProvider<AdminCaller> caller,
			@QueueWorkerExecutor ObjectProvider<Executor> queueWorkerExecutor,
			@Qualifier(WORKER_EXECUTOR_BEAN_NAME) ObjectProvider<Executor> workerExecutor,
			ObjectProvider<JobInterceptor> interceptors,
			ObjectProvider<NotificationConnectionFactory> notificationConnections, ApplicationEventPublisher events,
			ListableBeanFactory beans) {
		QueueDatabases databases = new QueueDatabases(properties, beans, metrics, databaseMetrics);
		QueueEngineBuilder builder = QueueDatabases.sharded(properties) ? databases.shards(transactionManager)
				: databases.one(queueDataSource, applicationDataSource, jdbcTemplate, queueTransactionManager,
						transactionManager, notificationConnections);
		return new EngineParts(properties, queues, handlers, jsonMapper, observations, inDoubtJobResolver,
				caller, QueueInfrastructure.workerExecutor(queueWorkerExecutor, workerExecutor), interceptors, events)
			.configure(builder.settings(properties.toEngineSettings(Threading.VIRTUAL.isActive(environment)))
				.schedules(properties.toScheduleSettings()))
			.build();
	}

	/** The recurring jobs; over shards, those of the first shard, where each lives so that it fires once. */
	@Bean
	@ConditionalOnMissingBean(JobSchedules.class)
	JobSchedules pgqueueJobSchedules(QueueEngine engine) {
		return engine.schedules();
	}

	/** Enqueues jobs; over shards, each on its shard. */
	@Bean
	@ConditionalOnMissingBean(JobClient.class)
	JobClient pgqueueJobClient(QueueEngine engine) {
		return engine.client();
	}

	/** Inspects and changes jobs and queues; over shards, on every shard. */
	@Bean
	@ConditionalOnMissingBean(JobAdmin.class)
	JobAdmin pgqueueJobAdmin(QueueEngine engine) {
		return engine.admin();
	}

	/**
	 * The shards, for listeners that write on their job's shard and operators who ask which answer; names
	 * none without {@code pgqueue.shards}, where its transaction DataSource is the queue's own.
	 */
	@Bean
	@ConditionalOnMissingBean(QueueShards.class)
	QueueShards pgqueueShards(QueueEngine engine) {
		return engine.shards();
	}

	/** Registers every {@code @JobListener} method in the engine's handler registry; the engine polls their queues. */
	@Bean
	static JobListenerMethodProcessor pgqueueJobListenerMethodProcessor(ObjectProvider<JobHandlerRegistry> registry,
			ObjectProvider<JsonMapper> jsonMapper) {
		return new JobListenerMethodProcessor(registry.getObject(), jsonMapper.getIfAvailable(JsonMapper::new));
	}

	/** Names the callers of {@link JobAdmin} operations after the authenticated user. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(SecurityContextHolder.class)
	static class SecurityCallerConfiguration {

		@Bean
		@ConditionalOnMissingBean
		AdminCaller pgqueueAdminCaller() {
			return new SecurityContextAdminCaller();
		}

	}

}
