package dev.pgqueue.autoconfigure;

import java.util.Arrays;
import java.util.concurrent.Executor;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.InfrastructureProxy;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.ResourceTransactionManager;

/**
 * Picks the beans the engine runs on: the {@link QueueDataSource}, {@link QueueTransactionManager}
 * and {@link QueueWorkerExecutor} when the application qualifies them, the application's own
 * otherwise; and refuses a transaction manager that does not manage the queue's data source, under
 * which a transactional queue would commit a handler's writes apart from its job.
 */
final class QueueInfrastructure {

	private static final Logger logger = LoggerFactory.getLogger(QueueInfrastructure.class);

	private final ListableBeanFactory beans;

	QueueInfrastructure(ListableBeanFactory beans) {
		this.beans = beans;
	}

	/** The {@link QueueDataSource}, else the application's only or primary data source. */
	DataSource dataSource(ObjectProvider<DataSource> qualified, ObjectProvider<DataSource> any) {
		DataSource dedicated = qualified.getIfUnique();
		if (dedicated != null) {
			return dedicated;
		}
		DataSource shared = any.getIfUnique();
		if (shared == null) {
			throw new QueueBeansException(
					"pgqueue found several DataSource beans " + names(DataSource.class)
							+ ", none of them primary or qualified with @QueueDataSource",
					"Annotate the data source that holds the jobs table with @QueueDataSource, or mark one "
							+ "data source @Primary.");
		}
		return shared;
	}

	/** Whether the application qualified a data source of its own for the queue. */
	static boolean isDedicated(ObjectProvider<DataSource> qualified) {
		return qualified.getIfUnique() != null;
	}

	/** The application's {@link JdbcTemplate} when it works on the queue's data source, else a new one on it. */
	static JdbcTemplate jdbcTemplate(DataSource dataSource, ObjectProvider<JdbcTemplate> application) {
		JdbcTemplate shared = application.getIfUnique();
		if (shared != null && shared.getDataSource() != null && sameDataSource(shared.getDataSource(), dataSource)) {
			return shared;
		}
		return new JdbcTemplate(dataSource);
	}

	/**
	 * The {@link QueueTransactionManager}, else the application's only or primary transaction manager
	 * when it manages the queue's data source, else one of pgqueue's own on a dedicated data source.
	 * {@code null} when none applies, which only leased queues can work with.
	 * @throws QueueBeansException when the chosen transaction manager manages another data source
	 */
	@Nullable PlatformTransactionManager transactionManager(DataSource dataSource, boolean dedicatedDataSource,
			ObjectProvider<PlatformTransactionManager> qualified, ObjectProvider<PlatformTransactionManager> any) {
		PlatformTransactionManager chosen = qualified.getIfUnique();
		if (chosen != null) {
			requireManages(chosen, dataSource, "@QueueTransactionManager");
			return chosen;
		}
		PlatformTransactionManager shared = any.getIfUnique();
		if (dedicatedDataSource) {
			if (shared != null && manages(shared, dataSource) == Boolean.TRUE) {
				return shared;
			}
			logger.info("pgqueue runs its transactions on a DataSourceTransactionManager of its own over {}; "
					+ "declare a @QueueTransactionManager to choose another", describe(DataSource.class, dataSource));
			return new DataSourceTransactionManager(dataSource);
		}
		if (shared != null) {
			requireManages(shared, dataSource, "the application's transaction manager");
		}
		return shared;
	}

	/** The {@link QueueWorkerExecutor}, else the executor bean named {@code pgqueueWorkerExecutor}, else none. */
	static @Nullable Executor workerExecutor(ObjectProvider<Executor> qualified, ObjectProvider<Executor> named) {
		Executor executor = qualified.getIfUnique();
		return (executor != null) ? executor : named.getIfAvailable();
	}

	private void requireManages(PlatformTransactionManager manager, DataSource dataSource, String role) {
		if (manages(manager, dataSource) == Boolean.FALSE) {
			throw new QueueBeansException(
					"pgqueue's transaction manager " + describe(PlatformTransactionManager.class, manager) + " ("
							+ role + ") does not manage its data source " + describe(DataSource.class, dataSource)
							+ ": a transactional queue would commit a handler's writes apart from its job",
					"Declare a transaction manager over the queue's data source and annotate it with "
							+ "@QueueTransactionManager, or annotate the data source that transaction manager "
							+ "manages with @QueueDataSource.");
		}
	}

	/**
	 * Whether {@code manager} runs its transactions on {@code dataSource}'s connections; {@code null}
	 * when it cannot be told (a JTA transaction manager, say), which is trusted.
	 */
	static @Nullable Boolean manages(PlatformTransactionManager manager, DataSource dataSource) {
		DataSource managed = managedDataSource(manager);
		return (managed != null) ? sameDataSource(managed, dataSource) : null;
	}

	private static @Nullable DataSource managedDataSource(PlatformTransactionManager manager) {
		if (manager instanceof ResourceTransactionManager resources
				&& resources.getResourceFactory() instanceof DataSource dataSource) {
			return dataSource;
		}
		// JPA's and Hibernate's transaction managers expose the data source they bind connections of.
		BeanWrapper properties = PropertyAccessorFactory.forBeanPropertyAccess(manager);
		if (properties.isReadableProperty("dataSource")
				&& properties.getPropertyValue("dataSource") instanceof DataSource dataSource) {
			return dataSource;
		}
		return null;
	}

	static boolean sameDataSource(DataSource one, DataSource other) {
		return unwrap(one) == unwrap(other);
	}

	private static Object unwrap(Object dataSource) {
		Object current = dataSource;
		while (true) {
			if (current instanceof DelegatingDataSource delegating && delegating.getTargetDataSource() != null) {
				current = delegating.getTargetDataSource();
			}
			else if (current instanceof InfrastructureProxy proxy) {
				current = proxy.getWrappedObject();
			}
			else {
				return current;
			}
		}
	}

	private String describe(Class<?> type, Object bean) {
		for (String name : this.beans.getBeanNamesForType(type, true, false)) {
			if (this.beans.getBean(name) == bean) {
				return "'" + name + "'";
			}
		}
		return "(" + bean.getClass().getName() + ", not a bean)";
	}

	private String names(Class<?> type) {
		return Arrays.toString(this.beans.getBeanNamesForType(type, true, false));
	}

	/** A bean pgqueue needs is missing, ambiguous or does not fit the others. */
	static class QueueBeansException extends IllegalStateException {

		private static final long serialVersionUID = 1L;

		private final String action;

		QueueBeansException(String problem, String action) {
			super(problem);
			this.action = action;
		}

		String action() {
			return this.action;
		}

	}

}
