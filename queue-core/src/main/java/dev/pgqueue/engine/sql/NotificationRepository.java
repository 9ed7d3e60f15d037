package dev.pgqueue.engine.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Runs the statements of the notification listener ({@link NotificationStatements}) on the
 * listener's own connection, a session it holds for as long as it listens.
 */
public final class NotificationRepository {

	private NotificationRepository() {
	}

	/**
	 * Starts listening on each channel, on {@code con}. The connection must be in auto-commit mode:
	 * a {@code LISTEN} takes effect when its transaction commits.
	 */
	public static void listen(Connection con, String... channels) throws SQLException {
		try (Statement statement = con.createStatement()) {
			for (String channel : channels) {
				statement.execute(NotificationStatements.listen(channel));
			}
		}
	}

	/** Names the session on {@code con} ({@code application_name}), whatever it was opened with. */
	public static void nameSession(Connection con, String name) throws SQLException {
		try (PreparedStatement statement = con.prepareStatement(NotificationStatements.NAME_SESSION)) {
			statement.setString(1, name);
			statement.execute();
		}
	}

	/**
	 * Asks the server for an answer on {@code con}; throws when none comes within the connection's
	 * network timeout ({@link Connection#setNetworkTimeout}) or the session is gone.
	 */
	public static void ping(Connection con) throws SQLException {
		try (Statement statement = con.createStatement()) {
			statement.execute(NotificationStatements.PING);
		}
	}

	/** Stops listening on every channel and restores the session's name, before {@code con} is closed. */
	public static void release(Connection con) throws SQLException {
		try (Statement statement = con.createStatement()) {
			statement.execute(NotificationStatements.RELEASE);
		}
	}

}
