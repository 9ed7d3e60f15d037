package dev.pgqueue.engine.sql;

/**
 * The statements of the notification listener ({@code engine.NotificationListener});
 * {@link NotificationRepository} runs them. The channels on which jobs and pauses are announced are
 * named by {@link JobStatements#channel} and {@link AdminStatements#pausesChannel}.
 */
final class NotificationStatements {

	private NotificationStatements() {
	}

	/**
	 * Starts listening on a channel, for the session. No parameters ({@code LISTEN} takes none): the
	 * channel's name is written into the text as a quoted identifier, so that any name (the schema's
	 * channels contain a colon) is taken as it is, case and all.
	 */
	public static String listen(String channel) {
		return "LISTEN \"" + channel.replace("\"", "\"\"") + "\"";
	}

	/**
	 * Names the session, for {@code pg_stat_activity} and the server's log. Parameter: the name.
	 * Returns one row (set_config's result), which nothing reads.
	 */
	public static final String NAME_SESSION = "SELECT set_config('application_name', ?, false)";

	/**
	 * The liveness check of a connection that has heard nothing for a while: any answer will do. No
	 * parameters; one row.
	 */
	public static final String PING = "SELECT 1";

	/**
	 * What a session hands back before it closes, in case it was borrowed from a pool: no channel, the
	 * name it was opened with. No parameters.
	 */
	public static final String RELEASE = "UNLISTEN *; RESET application_name";

}
