package dev.pgqueue.benchmark;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;

import javax.sql.DataSource;

/**
 * Counts the JDBC calls that make the PostgreSQL driver wait for the server: statement executions,
 * commits, rollbacks, savepoints and parameter-metadata look-ups. Used to compare round trips per
 * job, never while timing.
 */
final class CountingDataSource implements DataSource {

	/** Calls for which the driver sends a message and waits for the answer. */
	private static final Set<String> ROUND_TRIPS = Set.of("execute", "executeQuery", "executeUpdate",
			"executeBatch", "executeLargeUpdate", "executeLargeBatch", "commit", "rollback", "setSavepoint",
			"releaseSavepoint", "getParameterMetaData");

	private final DataSource target;

	private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

	CountingDataSource(DataSource target) {
		this.target = target;
	}

	/** Round trips so far. */
	long total() {
		return this.counts.values().stream().mapToLong(LongAdder::sum).sum();
	}

	/** Round trips so far by JDBC method. */
	Map<String, Long> byMethod() {
		Map<String, Long> copy = new TreeMap<>();
		this.counts.forEach((method, count) -> copy.put(method, count.sum()));
		return copy;
	}

	void reset() {
		this.counts.clear();
	}

	@Override
	public Connection getConnection() throws SQLException {
		return wrap(this.target.getConnection(), Connection.class);
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		return wrap(this.target.getConnection(username, password), Connection.class);
	}

	private <T> T wrap(T delegate, Class<T> type) {
		InvocationHandler handler = (proxy, method, args) -> {
			String name = method.getName();
			if (ROUND_TRIPS.contains(name)) {
				this.counts.computeIfAbsent(name, (key) -> new LongAdder()).increment();
			}
			Object result;
			try {
				result = method.invoke(delegate, args);
			}
			catch (InvocationTargetException ex) {
				throw ex.getCause();
			}
			if (result instanceof CallableStatement statement) {
				return wrap(statement, CallableStatement.class);
			}
			if (result instanceof PreparedStatement statement) {
				return wrap(statement, PreparedStatement.class);
			}
			if (result instanceof Statement statement && !(result instanceof PreparedStatement)) {
				return wrap(statement, Statement.class);
			}
			return result;
		};
		return type.cast(Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { type }, handler));
	}

	@Override
	public PrintWriter getLogWriter() throws SQLException {
		return this.target.getLogWriter();
	}

	@Override
	public void setLogWriter(PrintWriter out) throws SQLException {
		this.target.setLogWriter(out);
	}

	@Override
	public void setLoginTimeout(int seconds) throws SQLException {
		this.target.setLoginTimeout(seconds);
	}

	@Override
	public int getLoginTimeout() throws SQLException {
		return this.target.getLoginTimeout();
	}

	@Override
	public Logger getParentLogger() throws SQLFeatureNotSupportedException {
		return this.target.getParentLogger();
	}

	@Override
	public <T> T unwrap(Class<T> type) throws SQLException {
		return this.target.unwrap(type);
	}

	@Override
	public boolean isWrapperFor(Class<?> type) throws SQLException {
		return this.target.isWrapperFor(type);
	}

}
