package dev.pgqueue.engine.sql;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.job.NewJob;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

import org.springframework.jdbc.core.ArgumentPreparedStatementSetter;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.PreparedStatementCreator;

/**
 * The plain insert a unique enqueue tries first (see {@link UniqueJobRepository}): no
 * {@code ON CONFLICT}, so no speculative insertion, and all or nothing. Tried only outside a
 * transaction (the connection in autocommit, where a failed statement undoes only itself), only for
 * keys held while their job is unfinished, and only when {@link FailFast} says so.
 */
final class PlainUniqueInsert {

	private final JdbcTemplate jdbc;

	private final UniqueStatements sql;

	private final FailFast failFast = new FailFast();

	PlainUniqueInsert(JdbcTemplate jdbc, UniqueStatements sql) {
		this.jdbc = jdbc;
		this.sql = sql;
	}

	/**
	 * Inserts every job if no key is held; returns the ids inserted, or {@code null} if it was not
	 * tried or a key was held (then nothing was inserted and nothing added to {@code dueQueues}).
	 */
	@Nullable Set<UUID> tryInsert(List<NewJob> jobs, boolean notifying, Set<String> dueQueues) {
		if (jobs.stream().anyMatch((job) -> job.unique().periodic()) || !this.failFast.shouldTry()) {
			return null;
		}
		PreparedStatementCreator statement;
		if (jobs.size() == 1) {
			statement = (con) -> {
				PreparedStatement ps = con.prepareStatement(
						notifying ? this.sql.insertOneWhileUnfinishedOrFailNotifying : this.sql.insertOneWhileUnfinishedOrFail);
				new ArgumentPreparedStatementSetter(UniqueInserts.oneRow(jobs.get(0))).setValues(ps);
				return ps;
			};
		}
		else {
			statement = UniqueInserts.many(
					notifying ? this.sql.insertWhileUnfinishedOrFailNotifying : this.sql.insertWhileUnfinishedOrFail, jobs);
		}
		return this.jdbc.execute((ConnectionCallback<@Nullable Set<UUID>>) (con) -> {
			if (!con.getAutoCommit()) {
				return null;
			}
			Set<UUID> inserted = new LinkedHashSet<>();
			Set<String> due = new LinkedHashSet<>();
			try (PreparedStatement ps = statement.createPreparedStatement(con); ResultSet rs = ps.executeQuery()) {
				while (rs.next()) {
					UniqueInserts.read(rs, inserted, due);
				}
			}
			catch (SQLException ex) {
				if (keyHeld(ex)) {
					this.failFast.failed();
					return null;
				}
				throw ex;
			}
			this.failFast.succeeded();
			dueQueues.addAll(due);
			return inserted;
		});
	}

	/** Whether the statement failed because a key was held while its job is unfinished. */
	private static boolean keyHeld(SQLException ex) {
		ServerErrorMessage message = (ex instanceof PSQLException psql) ? psql.getServerErrorMessage() : null;
		return "23505".equals(ex.getSQLState()) && message != null
				&& UniqueStatements.UNFINISHED_INDEX.equals(message.getConstraint());
	}

	/**
	 * When to try the plain insert first: always while it succeeds; after a failure, not for the next
	 * enqueue, after two failures in a row not for the next two, and so on, doubling up to
	 * {@value #MAX_SKIPS}. Shared by the threads that enqueue through one repository; a race between
	 * them only moves a count by one.
	 */
	static final class FailFast {

		/** The longest run of enqueues that skip the plain insert after failures. */
		static final int MAX_SKIPS = 1024;

		private final AtomicInteger skipsLeft = new AtomicInteger();

		private final AtomicInteger nextSkips = new AtomicInteger(1);

		boolean shouldTry() {
			int left = this.skipsLeft.get();
			if (left <= 0) {
				return true;
			}
			this.skipsLeft.compareAndSet(left, left - 1);
			return false;
		}

		void succeeded() {
			this.nextSkips.set(1);
		}

		void failed() {
			int skips = this.nextSkips.get();
			this.skipsLeft.set(skips);
			this.nextSkips.set(Math.min(skips * 2, MAX_SKIPS));
		}

	}

}
