package dev.pgqueue.engine.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The windows of rate limits ({@code pgqueue_rate_windows}): reserving starts and giving back those
 * no job used. Each call is a short transaction of its own, never the caller's (it must not be made
 * inside a transaction on the queue's data source): the window's row is the one point every claimer
 * of a limit passes through, so it is locked for one statement only. Its
 * commit is asynchronous ({@code synchronous_commit} off): a grant lost in a server crash can let
 * more jobs start in the window around the crash, never fewer, and costs a fraction of a millisecond
 * less per claim than a flush to disk.
 */
public class RateRepository {

	private final JdbcTemplate jdbc;

	private final String reserve;

	private final String giveBack;

	private final String used;

	public RateRepository(JdbcTemplate jdbc, SchemaName schema) {
		this.jdbc = jdbc;
		// The ring's slot i holds the sub-window that is congruent to i - 1 modulo 51 and no later than
		// the head; it counts while it is one of the last 51 sub-windows by the clock now.
		this.used = """
				SELECT coalesce(sum(c.n), 0) FROM %s w
				CROSS JOIN LATERAL unnest(w.counts) WITH ORDINALITY AS c(n, i)
				WHERE w.name = ?
				  AND w.head - (((w.head - (c.i - 1)) %% 51) + 51) %% 51
				      > floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint
				        / greatest(w.period_us / 50, 1) - 51""".formatted(schema.qualify("pgqueue_rate_windows"));
		this.reserve = "SELECT set_config('synchronous_commit', 'off', true), r.granted, r.granted_at, "
				+ "(extract(epoch FROM r.free_at - r.granted_at) * 1000000)::bigint AS free_in_us FROM "
				+ schema.qualify("pgqueue_rate_reserve") + "(?, ?, ?, ?, ?) r";
		this.giveBack = "SELECT set_config('synchronous_commit', 'off', true), " + schema.qualify("pgqueue_rate_give_back")
				+ "(?, ?, ?)";
	}

	/**
	 * Reserves up to {@code wanted} starts of the limit named {@code name}.
	 * @param starts the limit's most starts in one period
	 * @param periodMicros the period
	 */
	public Grant reserve(String name, int starts, long periodMicros, int wanted) {
		return reserve(name, starts, periodMicros, wanted, 0);
	}

	/**
	 * Reserves up to {@code wanted} starts of the limit named {@code name}, and {@code ahead} more for
	 * the caller's next claim when the window stays less than half used with them.
	 * @param starts the limit's most starts in one period
	 * @param periodMicros the period
	 */
	public Grant reserve(String name, int starts, long periodMicros, int wanted, int ahead) {
		Grant grant = inOwnTransaction((con) -> {
			try (PreparedStatement ps = con.prepareStatement(this.reserve)) {
				ps.setString(1, name);
				ps.setInt(2, starts);
				ps.setLong(3, periodMicros);
				ps.setInt(4, wanted);
				ps.setInt(5, ahead);
				try (ResultSet rs = ps.executeQuery()) {
					rs.next();
					long freeIn = rs.getLong("free_in_us");
					Long free = rs.wasNull() ? null : freeIn;
					return new Grant(rs.getInt("granted"), rs.getObject("granted_at", OffsetDateTime.class).toInstant(),
							free);
				}
			}
		});
		if (grant == null) {
			throw new IllegalStateException("The rate window '" + name + "' answered nothing");
		}
		return grant;
	}

	/** Gives back {@code units} of a grant that no job used. */
	public void giveBack(String name, Grant grant, int units) {
		if (units <= 0) {
			return;
		}
		inOwnTransaction((con) -> {
			try (PreparedStatement ps = con.prepareStatement(this.giveBack)) {
				ps.setString(1, name);
				ps.setInt(2, units);
				ps.setObject(3, grant.grantedAt().atOffset(ZoneOffset.UTC));
				ps.execute();
				return null;
			}
		});
	}

	/** The starts granted in the last period of the limit named {@code name}, by the database's clock now. */
	public int used(String name) {
		Integer used = this.jdbc.queryForObject(this.used, Integer.class, name);
		return (used != null) ? used : 0;
	}

	/** Runs one statement as a transaction of its own, committed before the connection goes back. */
	private <T> @Nullable T inOwnTransaction(ConnectionCallback<T> statement) {
		if (TransactionSynchronizationManager.isActualTransactionActive()) {
			throw new IllegalStateException("A rate window is reserved in a transaction of its own, never inside "
					+ "the caller's: its row would stay locked until the caller commits");
		}
		return this.jdbc.execute((Connection con) -> {
			if (con.getAutoCommit()) {
				return statement.doInConnection(con);
			}
			try {
				T result = statement.doInConnection(con);
				con.commit();
				return result;
			}
			catch (SQLException | RuntimeException ex) {
				con.rollback();
				throw ex;
			}
		});
	}

	/**
	 * What a reservation got.
	 * @param granted how many starts it may make now, perhaps fewer than wanted
	 * @param grantedAt the instant of the grant, by the database's clock: the start instant of the jobs
	 * that use it
	 * @param freeInMicros when fewer than wanted were granted, how long after {@code grantedAt} the next
	 * start frees; otherwise {@code null}
	 */
	public record Grant(int granted, Instant grantedAt, @Nullable Long freeInMicros) {
	}

}
