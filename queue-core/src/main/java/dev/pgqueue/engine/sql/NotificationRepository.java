package dev.pgqueue.engine.sql;

import java.sql.Connection;
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

}
