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

}
