package dev.pgqueue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * A connection that runs each statement on the next of several server connections, as a pooler in
 * transaction mode may run each autocommit statement: what a session-level setting or lock taken by
 * one statement is worth to the next.
 */
final class StatementPerServerConnection {

	private StatementPerServerConnection() {
	}

	/** A data source whose every connection spreads its statements over {@code servers} in turn. */
	static DataSource dataSource(Connection... servers) {
		AtomicInteger next = new AtomicInteger();
		Connection client = (Connection) Proxy.newProxyInstance(StatementPerServerConnection.class.getClassLoader(),
				new Class<?>[] { Connection.class }, (proxy, method, args) -> {
					Connection target = switch (method.getName()) {
						case "prepareStatement", "createStatement", "prepareCall" ->
							servers[Math.floorMod(next.getAndIncrement(), servers.length)];
						default -> servers[0];
					};
					if (method.getName().equals("close")) {
						// The pooler keeps its server connections.
						return null;
					}
					try {
						return method.invoke(target, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
		return new SingleConnectionDataSource(client, true);
	}

}
