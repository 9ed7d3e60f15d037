package dev.pgqueue.engine;

import java.lang.reflect.Method;
import java.sql.DriverManager;
import java.util.Properties;

import javax.sql.DataSource;

import dev.pgqueue.NotificationConnectionFactory;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.datasource.AbstractDriverBasedDataSource;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.util.ReflectionUtils;

/**
 * Where the notification listener's connection comes from when the application supplies no
 * {@link NotificationConnectionFactory}: a connection of its own, outside the application's pool.
 *
 * <p>A pooled connection held for {@code LISTEN} escapes the pool's care: HikariCP cannot retire it
 * at {@code maxLifetime} while it is checked out, and it takes one of the pool's slots for good. So
 * with HikariCP (found behind Spring's delegating data sources, without a dependency on it) the
 * listener opens its sessions through the JDBC driver with the pool's {@code jdbcUrl}, user, password
 * and driver properties, or through the data source HikariCP wraps. A data source that opens a new
 * session on each call (Spring's driver-based ones) is used as it is. Any other pool lends one
 * connection for as long as it answers: the liveness check still replaces it when it goes deaf, but
 * the pool counts it as in use meanwhile.
 */
public final class NotificationConnections {

	/** The {@code application_name} of the listener's sessions, for operators and {@code pg_stat_activity}. */
	public static final String APPLICATION_NAME = "pgqueue-listener";

	private static final Logger logger = LoggerFactory.getLogger(NotificationConnections.class);

	private NotificationConnections() {
	}

	/** The listener's connections for an application whose pool is {@code dataSource}. */
	static NotificationConnectionFactory of(DataSource dataSource) {
		DataSource target = dataSource;
		while (target instanceof DelegatingDataSource delegating && delegating.getTargetDataSource() != null) {
			target = delegating.getTargetDataSource();
		}
		if (target instanceof AbstractDriverBasedDataSource) {
			return target::getConnection;
		}
		NotificationConnectionFactory own = (ReflectionUtils.findMethod(target.getClass(), "getHikariPoolMXBean") != null)
				? outsideHikari(target) : null;
		if (own != null) {
			return own;
		}
		logger.info("pgqueue notifications: listening on a connection borrowed from the data source ({}), which holds "
				+ "it while it answers; to listen outside the pool, define a NotificationConnectionFactory bean",
				target.getClass().getName());
		return dataSource::getConnection;
	}

	/**
	 * Sessions opened by the JDBC driver from {@code url} and {@code properties} (user, password,
	 * driver properties), named {@link #APPLICATION_NAME}, with TCP keep-alive unless the properties
	 * say otherwise.
	 */
	public static NotificationConnectionFactory direct(String url, Properties properties) {
		Properties session = new Properties();
		session.putAll(properties);
		session.setProperty("ApplicationName", APPLICATION_NAME);
		session.putIfAbsent("tcpKeepAlive", "true");
		return () -> DriverManager.getConnection(url, session);
	}

	/** HikariCP's settings read through its getters; null when it has neither a URL nor a data source. */
	private static @Nullable NotificationConnectionFactory outsideHikari(DataSource hikari) {
		String url = (String) get(hikari, "getJdbcUrl");
		String user = (String) get(hikari, "getUsername");
		String password = (String) get(hikari, "getPassword");
		if (url != null) {
			Properties properties = new Properties();
			if (get(hikari, "getDataSourceProperties") instanceof Properties driver) {
				properties.putAll(driver);
			}
			if (user != null) {
				properties.setProperty("user", user);
			}
			if (password != null) {
				properties.setProperty("password", password);
			}
			return direct(url, properties);
		}
		if (get(hikari, "getDataSource") instanceof DataSource wrapped) {
			// What HikariCP itself does with a data source it wraps.
			return (user != null) ? () -> wrapped.getConnection(user, password) : wrapped::getConnection;
		}
		return null;
	}

	private static @Nullable Object get(Object target, String getter) {
		Method method = ReflectionUtils.findMethod(target.getClass(), getter);
		return (method != null) ? ReflectionUtils.invokeMethod(method, target) : null;
	}

}
