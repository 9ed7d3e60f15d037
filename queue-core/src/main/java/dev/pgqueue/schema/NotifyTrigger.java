package dev.pgqueue.schema;

import java.sql.SQLException;
import java.sql.Statement;

import javax.sql.DataSource;

import dev.pgqueue.InvalidQueueConfigurationException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Turns on or off the trigger that notifies the queues of jobs inserted by plain SQL
 * ({@code pgqueue.notifications.trigger}; created disabled by migration V15).
 *
 * <p>The trigger belongs to the schema, not to one application: every instance on the schema sets it
 * at start-up, and the last one to start wins, so give every application the same setting. An
 * instance whose setting matches the trigger's state changes nothing and takes no lock; one that
 * changes it runs {@code ALTER TABLE … ENABLE|DISABLE TRIGGER}, which needs to own the table and
 * waits for inserts and updates in flight (at most {@link #LOCK_TIMEOUT}, then start-up fails).
 */
public final class NotifyTrigger {

	/** The trigger's name, on {@code pgqueue_jobs}. */
	public static final String NAME = "pgqueue_jobs_notify_inserted";

	/** How long a change waits for the table's lock before start-up fails. */
	public static final String LOCK_TIMEOUT = "5s";

	/**
	 * The trigger's state: {@code O} (enabled), {@code D} (disabled), {@code R} or {@code A} (enabled
	 * for replicas or always), no row when it does not exist. Parameters: the table's
	 * schema-qualified, quoted name; the trigger's name.
	 */
	static final String STATE = """
			SELECT tgenabled::text FROM pg_trigger WHERE tgrelid = to_regclass(?) AND tgname = ?""";

	private static final Logger logger = LoggerFactory.getLogger(NotifyTrigger.class);

	private final JdbcTemplate jdbc;

	private final SchemaName schema;

	public NotifyTrigger(DataSource dataSource, SchemaName schema) {
		this.jdbc = new JdbcTemplate(dataSource);
		this.schema = schema;
	}

	/** Whether the trigger exists and fires on inserts. */
	public boolean enabled() {
		String state = state();
		return state != null && !state.equals("D");
	}

	/** Enables or disables the trigger, unless it already is. */
	public void set(boolean enabled) {
		String state = state();
		if (state == null) {
			if (enabled) {
				throw new InvalidQueueConfigurationException("pgqueue.notifications.trigger", "pgqueue.notifications."
						+ "trigger is true but trigger " + NAME + " does not exist on " + table(), "Apply migration V15 ("
						+ QueueMigrator.LOCATION.substring(10) + ") to schema '" + this.schema.value() + "', or set "
						+ "pgqueue.schema.migrate=true, or set pgqueue.notifications.trigger=false.");
			}
			return;
		}
		if (enabled == !state.equals("D")) {
			return;
		}
		String alter = "ALTER TABLE " + table() + (enabled ? " ENABLE" : " DISABLE") + " TRIGGER " + NAME;
		try {
			this.jdbc.execute((ConnectionCallback<Void>) (con) -> {
				boolean autoCommit = con.getAutoCommit();
				con.setAutoCommit(false);
				try (Statement statement = con.createStatement()) {
					statement.execute("SET LOCAL lock_timeout = '" + LOCK_TIMEOUT + "'");
					statement.execute(alter);
					con.commit();
				}
				catch (SQLException ex) {
					con.rollback();
					throw ex;
				}
				finally {
					con.setAutoCommit(autoCommit);
				}
				return null;
			});
		}
		catch (DataAccessException ex) {
			throw new InvalidQueueConfigurationException("pgqueue.notifications.trigger", "Could not "
					+ (enabled ? "enable" : "disable") + " trigger " + NAME + " on " + table() + " as "
					+ "pgqueue.notifications.trigger=" + enabled + " asks: " + ex.getMostSpecificCause().getMessage(),
					"Have the table's owner run: " + alter + "; or set pgqueue.notifications.trigger=" + !enabled
							+ " to leave it as it is.");
		}
		logger.info("pgqueue: {} trigger {} on {} (pgqueue.notifications.trigger={})",
				enabled ? "enabled" : "disabled", NAME, table(), enabled);
	}

	private @Nullable String state() {
		return this.jdbc.query(STATE, (rs) -> rs.next() ? rs.getString(1) : null, this.schema.qualify("pgqueue_jobs"),
				NAME);
	}

	private String table() {
		return this.schema.qualify("pgqueue_jobs");
	}

}
