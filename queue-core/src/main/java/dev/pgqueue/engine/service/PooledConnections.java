package dev.pgqueue.engine.service;

import java.lang.reflect.Method;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.util.ReflectionUtils;

/**
 * The idle connections of the application's pool, which a lost connection makes suspect: what
 * terminated one backend (an administrator's sweep, a failover, a restart, a proxy) usually ended
 * the pool's idle ones too, and a pool hands out a connection it used a moment ago without testing
 * it. Retrying at once on such a connection fails again, and each failure would count as a fresh
 * one. So after a lost connection the engine has the pool close its idle connections (and those in
 * use as they come back); the retry then gets a new one.
 *
 * <p>Works with HikariCP (Spring Boot's default pool), through its {@code softEvictConnections()},
 * without a dependency on it; with other pools it does nothing, and a retry may meet a stale
 * connection before the pool notices.
 */
public final class PooledConnections {

	/** Does nothing: for engines without a pool, and tests. */
	public static final PooledConnections NONE = new PooledConnections(null, null);

	/** Evictions closer together than this are one: every part of the engine sees the same loss. */
	private static final long MIN_SPACING_NANOS = 100_000_000L;

	private static final Logger logger = LoggerFactory.getLogger(PooledConnections.class);

	private final @Nullable DataSource pool;

	/** HikariCP's {@code getHikariPoolMXBean()}: the pool exists once it has handed out a connection. */
	private final @Nullable Method poolBean;

	private final AtomicLong lastEviction = new AtomicLong(System.nanoTime() - 2 * MIN_SPACING_NANOS);

	private PooledConnections(@Nullable DataSource pool, @Nullable Method poolBean) {
		this.pool = pool;
		this.poolBean = poolBean;
	}

	/** The pool behind the data source (through Spring's delegating data sources), when it is HikariCP's. */
	public static PooledConnections of(@Nullable DataSource dataSource) {
		DataSource target = dataSource;
		while (target instanceof DelegatingDataSource delegating && delegating.getTargetDataSource() != null) {
			target = delegating.getTargetDataSource();
		}
		if (target == null) {
			return NONE;
		}
		Method poolBean = ReflectionUtils.findMethod(target.getClass(), "getHikariPoolMXBean");
		return (poolBean != null) ? new PooledConnections(target, poolBean) : NONE;
	}

	/** Has the pool replace its idle connections (and those in use once returned); at most once per 100 ms. */
	public void discardIdle() {
		if (this.pool == null || this.poolBean == null) {
			return;
		}
		long now = System.nanoTime();
		long last = this.lastEviction.get();
		if (now - last < MIN_SPACING_NANOS || !this.lastEviction.compareAndSet(last, now)) {
			return;
		}
		try {
			Object mxBean = this.poolBean.invoke(this.pool);
			if (mxBean == null) {
				return;
			}
			Method soft = ReflectionUtils.findMethod(mxBean.getClass(), "softEvictConnections");
			if (soft != null) {
				ReflectionUtils.makeAccessible(soft);
				soft.invoke(mxBean);
				logger.debug("pgqueue: a connection was lost; the pool replaces its idle connections");
			}
		}
		catch (ReflectiveOperationException | RuntimeException ex) {
			logger.debug("pgqueue: could not have the pool replace its idle connections: {}", ex.toString());
		}
	}

}
