package dev.pgqueue;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Opens the connection on which an application {@code LISTEN}s for new jobs, pauses and cancel
 * requests. The listener holds it for as long as it answers, checks it when no notification has
 * arrived for a while, and closes it and opens another when it stops answering
 * ({@code pgqueue.notifications.liveness-timeout}).
 *
 * <p>Unless an application defines a bean of this type, pgqueue opens a connection of its own with
 * the URL, user, password and driver properties of the application's HikariCP pool, outside the pool
 * (so that the pool's {@code maxLifetime} and sizing are untouched); with another pool it borrows
 * one connection from the pool for as long as it listens. Define one when neither fits, for instance
 * when credentials rotate or the pool reaches the database through a pooler in transaction mode
 * while a direct address exists:
 *
 * <pre>{@code
 * @Bean
 * NotificationConnectionFactory listenerConnection(Credentials credentials) {
 *     return () -> DriverManager.getConnection("jdbc:postgresql://db-primary:5432/app",
 *             credentials.user(), credentials.password());
 * }
 * }</pre>
 *
 * <p>Each call must return a new session to the same database as the application's data source, in
 * auto-commit mode or not (the listener switches it on). The listener names the session
 * {@code pgqueue-listener} ({@code application_name}) and closes it when it stops.
 */
@FunctionalInterface
public interface NotificationConnectionFactory {

	/**
	 * A new connection to listen on.
	 * @throws SQLException when none can be opened; the listener tries again with backoff
	 */
	Connection connect() throws SQLException;

}
