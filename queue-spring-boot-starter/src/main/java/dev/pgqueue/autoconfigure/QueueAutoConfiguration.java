package dev.pgqueue.autoconfigure;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executor;

import javax.sql.DataSource;

import dev.pgqueue.AdminCaller;
import dev.pgqueue.InDoubtJobResolver;
import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.RetryPolicy;
import dev.pgqueue.engine.JdbcJobAdmin;
import dev.pgqueue.engine.JdbcJobClient;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.JobPollerFactory;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.NotificationListener;
import dev.pgqueue.engine.NotificationThrottle;
import dev.pgqueue.engine.poll.PollerWakeUps;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.maintenance.QueueMaintenance;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.poll.QueueSignals;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.AdminRepository;
import dev.pgqueue.engine.sql.CoordinationRepository;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.sql.PreparedTransactionRepository;
import dev.pgqueue.engine.twophase.InDoubtResolver;
import dev.pgqueue.listener.JobListenerMethodProcessor;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
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
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.unit.DataSize;

/**
 * Auto-configuration of pgqueue: the schema migrator, the repository, the {@link JobClient}, the
 * {@link JobAdmin}, the discovery of {@code @JobListener} methods and, unless
 * {@code pgqueue.enabled=false}, one {@link JobPoller} per queue plus the background services.
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
	 */
	public static final String WORKER_EXECUTOR_BEAN_NAME = "pgqueueWorkerExecutor";

	private static final Logger logger = LoggerFactory.getLogger(QueueAutoConfiguration.class);

	@Bean
	@ConditionalOnMissingBean
	QueueMigrator pgqueueMigrator(DataSource dataSource, QueueProperties properties) {
		return new QueueMigrator(dataSource, SchemaName.of(properties.getSchema().getName()),
				properties.getSchema().isMigrate());
	}

	@Bean
	JobRepository pgqueueJobRepository(DataSource dataSource, ObjectProvider<JdbcTemplate> jdbcTemplate,
			QueueProperties properties) {
		JdbcTemplate template = jdbcTemplate.getIfUnique(() -> new JdbcTemplate(dataSource));
		return new JobRepository(template, SchemaName.of(properties.getSchema().getName()),
				properties.getNotifications().isEnabled());
	}

	@Bean
	JobHandlerRegistry pgqueueJobHandlerRegistry(QueueProperties properties) {
		JobHandlerRegistry registry = new JobHandlerRegistry();
		properties.getKinds().forEach((kind, settings) -> registry.override(kind, settings.getMaxRunning(),
				settings.getTimeout()));
		return registry;
	}

	@Bean
	QueueCatalog pgqueueQueueCatalog(QueueProperties properties, ObjectProvider<RetryPolicy> retryPolicy) {
		RetryPolicy defaultRetry = retryPolicy.getIfUnique(() -> RetryPolicy.DEFAULT);
		return new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE).withRetry(defaultRetry),
				properties.toQueueSettings(defaultRetry));
	}

	@Bean
	@ConditionalOnMissingBean(JobClient.class)
	JdbcJobClient pgqueueJobClient(JobRepository repository, ObjectProvider<JsonMapper> jsonMapper,
			QueueCatalog queues, JobHandlerRegistry handlers, QueueProperties properties, PollerWakeUps wakeUps,
			ObjectProvider<NotificationThrottle> throttle, ObjectProvider<QueueObservations> observations) {
		DataSize limit = properties.getMaxPayloadSize();
		return new JdbcJobClient(repository, jsonMapper.getIfAvailable(JsonMapper::new), queues, handlers,
				(limit != null) ? limit.toBytes() : 0, wakeUps, throttle.getIfAvailable(),
				observations.getIfAvailable(() -> QueueObservations.NONE));
	}

	@Bean
	@ConditionalOnBooleanProperty(name = "pgqueue.notifications.enabled", matchIfMissing = true)
	NotificationThrottle pgqueueNotificationThrottle(JobRepository repository, QueueProperties properties) {
		return new NotificationThrottle(repository, properties.getNotifications().getMinInterval());
	}

	@Bean
	PollerWakeUps pgqueuePollerWakeUps() {
		return new PollerWakeUps();
	}

	@Bean
	QueuePauses pgqueueQueuePauses(JobRepository repository) {
		return new QueuePauses(adminRepository(repository));
	}

	@Bean
	@ConditionalOnMissingBean(JobAdmin.class)
	JdbcJobAdmin pgqueueJobAdmin(JobRepository repository, QueuePauses pauses, PollerWakeUps wakeUps,
			ObjectProvider<AdminCaller> caller) {
		return new JdbcJobAdmin(adminRepository(repository), repository, pauses, wakeUps,
				caller.getIfUnique(() -> AdminCaller.SYSTEM));
	}

	private static AdminRepository adminRepository(JobRepository repository) {
		return new AdminRepository(repository.jdbcTemplate(), repository.schema(), repository.notifies());
	}

	@Bean
	static JobListenerMethodProcessor pgqueueJobListenerMethodProcessor(ConfigurableListableBeanFactory beanFactory,
			ObjectProvider<JobHandlerRegistry> registry, ObjectProvider<JsonMapper> jsonMapper,
			ObjectProvider<JobPollerFactory> pollerFactory, ObjectProvider<QueueCatalog> queues,
			ObjectProvider<PollerWakeUps> wakeUps, ObjectProvider<InDoubtJobResolver> inDoubtJobResolver) {
		return new JobListenerMethodProcessor(registry.getObject(), jsonMapper.getIfAvailable(JsonMapper::new),
				(handlers) -> registerPollers(beanFactory, handlers, pollerFactory.getIfAvailable(),
						queues.getObject(), wakeUps.getObject(), inDoubtJobResolver.getIfUnique() != null));
	}

	private static void registerPollers(ConfigurableListableBeanFactory beanFactory, JobHandlerRegistry handlers,
			JobPollerFactory factory, QueueCatalog queues, PollerWakeUps wakeUps, boolean hasInDoubtJobResolver) {
		Set<String> unused = new TreeSet<>(queues.configuredQueues());
		unused.removeAll(handlers.queues());
		if (!unused.isEmpty() && factory != null) {
			String queue = unused.iterator().next();
			throw new InvalidQueueConfigurationException("pgqueue.queues." + queue, "pgqueue.queues configures queue '"
					+ queue + "', but no @JobListener in this application runs jobs in it (queues with listeners: "
					+ handlers.queues() + ")", "Fix the queue's name, add a @JobListener(queue = \"" + queue
							+ "\"), remove its configuration, or set pgqueue.enabled=false in an application that "
							+ "only enqueues.");
		}
		if (factory == null) {
			logger.info("pgqueue processing is off (pgqueue.enabled=false): jobs are enqueued but not run here");
			return;
		}
		if (handlers.queues().isEmpty()) {
			logger.info("pgqueue found no @JobListener methods; no queue is polled in this application");
		}
		for (String queue : handlers.queues()) {
			if (queues.settings(queue).twoPhaseCommit() && !hasInDoubtJobResolver) {
				throw new InvalidQueueConfigurationException("pgqueue.queues." + queue + ".two-phase-commit", "Queue '"
						+ queue + "' uses two-phase commit, but the application defines no InDoubtJobResolver bean (or "
						+ "more than one): a job whose worker dies between prepare and commit would stay in doubt, "
						+ "holding its row and vacuum back, until pgqueue.two-phase-commit.roll-back-after",
						"Define one InDoubtJobResolver bean that asks the other system whether a job's effect happened "
								+ "(by the job's id); if the effects are idempotent and may simply run again, "
								+ "(job) -> false will do.");
			}
			JobPoller poller = factory.create(queue, handlers.kindsOf(queue));
			beanFactory.registerSingleton("pgqueuePoller." + queue, poller);
			wakeUps.register(poller);
		}
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

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "pgqueue.enabled", matchIfMissing = true)
	static class ProcessingConfiguration {

		@Bean
			JobRunner pgqueueJobRunner(JobHandlerRegistry handlers, ObjectProvider<QueueMetrics> metrics,
				ObjectProvider<QueueObservations> observations) {
			return new JobRunner(handlers, metrics.getIfAvailable(() -> QueueMetrics.NONE),
					observations.getIfAvailable(() -> QueueObservations.NONE));
		}

		@Bean
		QueueSignals pgqueueQueueSignals(JobRepository repository, ObjectProvider<QueueMetrics> metrics,
				QueueProperties properties) {
			// A queue counts as slipping its SLA for two stats intervals after a job missed it, so that
			// the health component shows it between two reads.
			return new QueueSignals(repository, metrics.getIfAvailable(() -> QueueMetrics.NONE),
					properties.toMaintenanceSettings().statsInterval().multipliedBy(2));
		}

		@Bean
			JobPollerFactory pgqueueJobPollerFactory(QueueCatalog queues, JobRepository repository, JobRunner runner,
				ObjectProvider<PlatformTransactionManager> transactionManager, ObjectProvider<QueueMetrics> metrics,
				QueueProperties properties, Environment environment, QueueSignals signals, QueuePauses pauses,
				@Qualifier(WORKER_EXECUTOR_BEAN_NAME) ObjectProvider<Executor> workerExecutor) {
			PlatformTransactionManager manager = transactionManager.getIfUnique();
			TransactionTemplate template = (manager != null) ? new TransactionTemplate(manager) : null;
			WorkerSettings workerSettings = new WorkerSettings(properties.getShutdownTimeout(),
					Threading.VIRTUAL.isActive(environment), properties.getRetention().getCompleted().isZero());
			return new JobPollerFactory(queues, repository, runner, template,
					metrics.getIfAvailable(() -> QueueMetrics.NONE), workerSettings, workerExecutor.getIfAvailable(), true,
					signals, new CoordinationRepository(repository.jdbcTemplate(), repository.schema()),
					properties.getBuckets().getHeartbeatInterval(), pauses);
		}

		@Bean
			@ConditionalOnBooleanProperty(name = "pgqueue.notifications.enabled", matchIfMissing = true)
		NotificationListener pgqueueNotificationListener(DataSource dataSource, JobRepository repository,
				PollerWakeUps wakeUps, QueuePauses pauses) {
			return new NotificationListener(dataSource, repository.channel(), wakeUps, pauses);
		}

		@Bean
			QueueMaintenance pgqueueMaintenance(DataSource dataSource, ObjectProvider<JdbcTemplate> jdbcTemplate,
				ObjectProvider<QueueMetrics> metrics, QueueProperties properties, QueueCatalog queues,
				JobHandlerRegistry handlers, QueueSignals signals, QueuePauses pauses,
				ObjectProvider<InDoubtJobResolver> inDoubtJobResolver) {
			JdbcTemplate jdbc = jdbcTemplate.getIfUnique(() -> new JdbcTemplate(dataSource));
			SchemaName schema = SchemaName.of(properties.getSchema().getName());
			QueueMetrics queueMetrics = metrics.getIfAvailable(() -> QueueMetrics.NONE);
			MaintenanceRepository repository = new MaintenanceRepository(jdbc, schema,
					properties.getNotifications().isEnabled());
			boolean twoPhase = queues.configuredQueues().stream().anyMatch((q) -> queues.settings(q).twoPhaseCommit());
			InDoubtResolver resolver = twoPhase ? new InDoubtResolver(new PreparedTransactionRepository(jdbc, schema),
					schema, properties.toTwoPhaseSettings(), handlers, inDoubtJobResolver.getIfUnique(), queueMetrics)
					: null;
			return new QueueMaintenance(repository, properties.toMaintenanceSettings(), queueMetrics, () -> {
				Set<String> known = new TreeSet<>(queues.configuredQueues());
				known.addAll(handlers.queues());
				return known;
			}, handlers, signals, resolver, pauses);
		}

	}

}
