package dev.pgqueue.autoconfigure;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobClient;
import dev.pgqueue.autoconfigure.QueueAutoConfigurationTests.ThreadProbe;
import dev.pgqueue.autoconfigure.QueueAutoConfigurationTests.ThreadProbeConfiguration;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.AbstractDataSource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;
import org.springframework.transaction.TransactionDefinition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests that pgqueue runs on the beans qualified for it ({@link QueueDataSource},
 * {@link QueueTransactionManager}, {@link QueueWorkerExecutor}) and refuses a transaction manager
 * of another data source, against a real PostgreSQL.
 */
class QueueInfrastructureTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_infra");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, QueueAutoConfiguration.class))
		.withPropertyValues(SCHEMA.properties())
		.withPropertyValues("pgqueue.shutdown-timeout=5s");

	@AfterAll
	static void dropSchema() {
		SCHEMA.drop();
	}

	@Test
	void runsEverythingOnTheQueueDataSourceWhileTheApplicationsIsPrimary() {
		this.contextRunner.withUserConfiguration(DedicatedDataSourceConfiguration.class,
				ThreadProbeConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				UUID id = context.getBean(JobClient.class).enqueue("thread.probe", "hello");
				ThreadProbe probe = context.getBean(ThreadProbe.class);
				await().atMost(TIMEOUT).until(() -> probe.threadNameByJob.containsKey(id));
				HikariDataSource queue = context.getBean("queueDataSource", HikariDataSource.class);
				assertThat(SCHEMA.tables(new JdbcTemplate(queue))).contains("pgqueue_jobs");
				assertThat(context.getBean(UnusableDataSource.class).attempts).hasValue(0);
			});
	}

	@Test
	void runsTransactionalQueuesOnTheQualifiedTransactionManager() {
		this.contextRunner
			.withUserConfiguration(DedicatedDataSourceConfiguration.class, QueueTransactionManagerConfiguration.class,
					ThreadProbeConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				CountingTransactionManager manager = context.getBean(CountingTransactionManager.class);
				int before = manager.begun.get();
				UUID id = context.getBean(JobClient.class).enqueue("thread.probe", "hello");
				ThreadProbe probe = context.getBean(ThreadProbe.class);
				await().atMost(TIMEOUT).until(() -> probe.threadNameByJob.containsKey(id));
				assertThat(manager.begun.get()).isGreaterThan(before);
			});
	}

	@Test
	void refusesAQualifiedTransactionManagerOfAnotherDataSourceNamingBoth() {
		this.contextRunner
			.withUserConfiguration(DedicatedDataSourceConfiguration.class, ForeignTransactionManagerConfiguration.class)
			.run((context) -> {
				FailureAnalysis analysis = analysis(context);
				assertThat(analysis.getDescription()).contains("'foreignTransactionManager'")
					.contains("'queueDataSource'")
					.contains("@QueueTransactionManager");
				assertThat(analysis.getAction()).contains("@QueueTransactionManager").contains("@QueueDataSource");
			});
	}

	@Test
	void refusesTheApplicationsTransactionManagerWhenItManagesAnotherDataSource() {
		this.contextRunner.withUserConfiguration(ApplicationTransactionManagerOfAnotherDataSource.class)
			.run((context) -> assertThat(analysis(context).getDescription())
				.contains("'transactionManager' (the application's transaction manager)")
				.contains("does not manage its data source 'dataSource'"));
	}

	@Test
	void asksWhichDataSourceWhenSeveralAreNeitherPrimaryNorQualified() {
		this.contextRunner.withUserConfiguration(TwoDataSourcesConfiguration.class)
			.run((context) -> assertThat(analysis(context).getDescription()).contains("[first, second]")
				.contains("@QueueDataSource"));
	}

	@Test
	void runsWorkersOnTheQualifiedExecutor() {
		this.contextRunner.withUserConfiguration(ThreadProbeConfiguration.class, QualifiedExecutorConfiguration.class)
			.run((context) -> {
				UUID id = context.getBean(JobClient.class).enqueue("thread.probe", "which thread?");
				ThreadProbe probe = context.getBean(ThreadProbe.class);
				await().atMost(TIMEOUT).until(() -> probe.threadNameByJob.containsKey(id));
				assertThat(probe.threadNameByJob.get(id)).startsWith("qualified-jobs-");
			});
	}

	private static FailureAnalysis analysis(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		FailureAnalysis analysis = new QueueFailureAnalyzers.MisfittingBeans().analyze(context.getStartupFailure());
		assertThat(analysis).as("failure analysis of %s", context.getStartupFailure()).isNotNull();
		return analysis;
	}

	static HikariDataSource testDataSource() {
		TestDatabase database = TestDatabase.get();
		HikariDataSource dataSource = new HikariDataSource();
		dataSource.setJdbcUrl(database.jdbcUrl());
		dataSource.setUsername(database.username());
		dataSource.setPassword(database.password());
		dataSource.setMaximumPoolSize(12);
		return dataSource;
	}

	/** The application's data source in these tests: pgqueue must never open a connection on it. */
	static class UnusableDataSource extends AbstractDataSource {

		final AtomicInteger attempts = new AtomicInteger();

		@Override
		public Connection getConnection() throws SQLException {
			this.attempts.incrementAndGet();
			throw new SQLException("the application's data source is not the queue's");
		}

		@Override
		public Connection getConnection(String username, String password) throws SQLException {
			return getConnection();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DedicatedDataSourceConfiguration {

		@Bean
		@Primary
		UnusableDataSource applicationDataSource() {
			return new UnusableDataSource();
		}

		@Bean
		@QueueDataSource
		HikariDataSource queueDataSource() {
			return testDataSource();
		}

	}

	static class CountingTransactionManager extends DataSourceTransactionManager {

		private static final long serialVersionUID = 1L;

		final AtomicInteger begun = new AtomicInteger();

		CountingTransactionManager(DataSource dataSource) {
			super(dataSource);
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
			this.begun.incrementAndGet();
			super.doBegin(transaction, definition);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class QueueTransactionManagerConfiguration {

		@Bean
		@Primary
		DataSourceTransactionManager applicationTransactionManager(UnusableDataSource applicationDataSource) {
			return new DataSourceTransactionManager(applicationDataSource);
		}

		@Bean
		@QueueTransactionManager
		CountingTransactionManager queueTransactionManager(@QueueDataSource DataSource queueDataSource) {
			return new CountingTransactionManager(queueDataSource);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ForeignTransactionManagerConfiguration {

		@Bean
		@QueueTransactionManager
		DataSourceTransactionManager foreignTransactionManager(UnusableDataSource applicationDataSource) {
			return new DataSourceTransactionManager(applicationDataSource);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ApplicationTransactionManagerOfAnotherDataSource {

		@Bean
		HikariDataSource dataSource() {
			return testDataSource();
		}

		@Bean
		DataSourceTransactionManager transactionManager() {
			return new DataSourceTransactionManager(new UnusableDataSource());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TwoDataSourcesConfiguration {

		@Bean
		HikariDataSource first() {
			return testDataSource();
		}

		@Bean
		HikariDataSource second() {
			return testDataSource();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class QualifiedExecutorConfiguration {

		@Bean(destroyMethod = "shutdownNow")
		@QueueWorkerExecutor
		java.util.concurrent.ExecutorService jobs() {
			return Executors.newCachedThreadPool(new CustomizableThreadFactory("qualified-jobs-"));
		}

		@Bean(destroyMethod = "shutdownNow")
		Executor applicationExecutor() {
			return Executors.newCachedThreadPool(new CustomizableThreadFactory("application-"));
		}

	}

}
