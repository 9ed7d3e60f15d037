package dev.pgqueue.engine;

import java.lang.reflect.Method;

import javax.sql.DataSource;

import dev.pgqueue.engine.settings.QueueSettings;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.util.ReflectionUtils;

/**
 * Warns when a transactional queue may run more batches at once than its connection pool has
 * connections. Each batch holds a connection until it commits, and the background services borrow
 * connections now and then (the notification listener holds a session of its own, outside a HikariCP
 * pool: {@link NotificationConnections}): a pool smaller than that makes batches
 * wait for each other (fewer jobs run at once than configured), and a listener that needs a
 * connection of its own besides the batch's can wait until the pool gives up.
 *
 * <p>The pool's size is read from HikariCP (Spring Boot's default pool) through its
 * {@code getMaximumPoolSize()}, without a dependency on it; other pools are not checked.
 */
final class ConnectionPoolCheck {

	private static final Logger logger = LoggerFactory.getLogger(ConnectionPoolCheck.class);

	/** Headroom for the background services' statements, and for the rare moment two run at once. */
	static final int RESERVED = 2;

	private ConnectionPoolCheck() {
	}

	/** Logs a warning when the transactional queue's batches would not all get a connection. */
	static void warnIfTooSmall(QueueSettings settings, @Nullable DataSource dataSource) {
		if (dataSource == null) {
			return;
		}
		int poolSize = maximumPoolSize(dataSource);
		int needed = settings.concurrency() + RESERVED;
		if (poolSize <= 0 || poolSize >= needed) {
			return;
		}
		String key = "pgqueue.queues." + settings.name() + ".concurrency";
		logger.warn("Queue '{}' runs up to {} transactional batches at once (concurrency {}), each holding a database "
				+ "connection until it commits, but its connection pool has at most {} connections, which the "
				+ "background services share. Batches will wait for connections, so "
				+ "fewer jobs run at once than configured, and a listener that opens a connection outside its job's "
				+ "transaction (REQUIRES_NEW, another DataSource) can wait until the pool's connection timeout and fail. "
				+ "Give the pool at least {} connections (concurrency + {}; spring.datasource.hikari.maximum-pool-size), "
				+ "or lower {} to {}.", settings.name(), settings.concurrency(), settings.concurrency(), poolSize,
				needed, RESERVED, key, Math.max(1, poolSize - RESERVED));
	}

	/** The pool's maximum size, or -1 when it cannot be read. */
	static int maximumPoolSize(DataSource dataSource) {
		DataSource target = dataSource;
		while (target instanceof DelegatingDataSource delegating && delegating.getTargetDataSource() != null) {
			target = delegating.getTargetDataSource();
		}
		Method getter = ReflectionUtils.findMethod(target.getClass(), "getMaximumPoolSize");
		if (getter == null || getter.getReturnType() != int.class) {
			return -1;
		}
		try {
			return (int) getter.invoke(target);
		}
		catch (ReflectiveOperationException | RuntimeException ex) {
			return -1;
		}
	}

}
