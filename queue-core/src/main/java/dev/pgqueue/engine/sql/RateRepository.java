package dev.pgqueue.engine.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Runs the statements on the windows of rate limits ({@link RateStatements}, on
 * {@code pgqueue_rate_windows}): reserving starts and giving back those no job used. Each call is a
 * short transaction of its own, never the caller's (it must not be made inside a transaction on the
 * queue's data source): the window's row is the one point every claimer of a limit passes through,
 * so it is locked for one statement only. Its commit is asynchronous ({@code synchronous_commit}
 * off): a grant lost in a server crash can let more jobs start in the window around the crash, never
 * fewer, and costs a fraction of a millisecond less per claim than a flush to disk.
 */
public class RateRepository {

	/**
	 * The names of the windows of per-key limits start with this, then the length of the queue's name,
	 * the queue and the key, each after a colon.
	 */
	public static final String KEY_WINDOW_PREFIX = "key:";

	private final JdbcTemplate jdbc;

	private final RateStatements sql;

	public RateRepository(JdbcTemplate jdbc, SchemaName schema) {
		this.jdbc = jdbc;
		this.sql = new RateStatements(schema);
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
			try (PreparedStatement ps = con.prepareStatement(this.sql.reserve)) {
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
			try (PreparedStatement ps = con.prepareStatement(this.sql.giveBack)) {
				ps.setString(1, name);
				ps.setInt(2, units);
				ps.setObject(3, grant.grantedAt().atOffset(ZoneOffset.UTC));
				ps.execute();
				return null;
			}
		});
	}

	/**
	 * Reserves units of several limits at once, in one short transaction: every row is locked (in the
	 * order of their names, so that two claims never wait on each other in a cycle), then all are booked
	 * at one instant, the start the claim's jobs record; each limit grants what it can, independently of
	 * the others. Names must not repeat.
	 * @param wanted what to reserve of each limit
	 * @return each limit's grant, by name
	 */
	public Map<String, Grant> reserveAll(List<Wanted> wanted) {
		if (wanted.isEmpty()) {
			return Map.of();
		}
		Map<String, Grant> grants = inOwnTransaction((con) -> {
			try (PreparedStatement ps = con.prepareStatement(this.sql.reserveAll)) {
				ps.setArray(1, con.createArrayOf("text", wanted.stream().map(Wanted::name).toArray()));
				ps.setArray(2, con.createArrayOf("int4", wanted.stream().map(Wanted::starts).toArray()));
				ps.setArray(3, con.createArrayOf("int8", wanted.stream().map(Wanted::periodMicros).toArray()));
				ps.setArray(4, con.createArrayOf("int4", wanted.stream().map(Wanted::units).toArray()));
				Map<String, Grant> byName = new HashMap<>();
				try (ResultSet rs = ps.executeQuery()) {
					while (rs.next()) {
						long freeIn = rs.getLong("free_in_us");
						Long free = rs.wasNull() ? null : freeIn;
						byName.put(rs.getString("name"), new Grant(rs.getInt("granted"),
								rs.getObject("granted_at", OffsetDateTime.class).toInstant(), free));
					}
				}
				return byName;
			}
		});
		return (grants != null) ? grants : Map.of();
	}

	/** Gives back units of several grants that no job used, in one short transaction. */
	public void giveBackAll(List<Unused> unused) {
		List<Unused> some = unused.stream().filter((each) -> each.units() > 0).toList();
		if (some.isEmpty()) {
			return;
		}
		inOwnTransaction((con) -> {
			try (PreparedStatement ps = con.prepareStatement(this.sql.giveBackAll)) {
				ps.setArray(1, con.createArrayOf("text", some.stream().map(Unused::name).toArray()));
				ps.setArray(2, con.createArrayOf("int4", some.stream().map(Unused::units).toArray()));
				ps.setArray(3, con.createArrayOf("timestamptz", some.stream()
					.map((each) -> each.grant().grantedAt().atOffset(ZoneOffset.UTC)).toArray()));
				ps.execute();
				return null;
			}
		});
	}

	/**
	 * Deletes the windows whose names start with {@code prefix} and that granted nothing for a whole
	 * period: a limit per key leaves one row per key, which would otherwise stay. A window deleted while
	 * a claim reserves is made again, empty, which is what it held.
	 * @return how many were deleted
	 */
	public int pruneIdle(String prefix) {
		String pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
		return this.jdbc.update(this.sql.pruneIdle, pattern);
	}

	/** The starts granted in the last period of the limit named {@code name}, by the database's clock now. */
	public int used(String name) {
		Integer used = this.jdbc.queryForObject(this.sql.used, Integer.class, name);
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

	/**
	 * Units wanted of one limit.
	 * @param name the limit's window
	 * @param starts the limit's most units in one period
	 * @param periodMicros the period
	 * @param units how many to reserve
	 */
	public record Wanted(String name, int starts, long periodMicros, int units) {
	}

	/**
	 * Units of a grant that no job used.
	 * @param name the limit's window
	 * @param grant the grant they came from
	 * @param units how many
	 */
	public record Unused(String name, Grant grant, int units) {
	}

}
