package dev.pgqueue.engine.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import dev.pgqueue.MissedTicks;
import dev.pgqueue.Overlap;
import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * Recurring jobs' rows. Statements join the caller's transaction, as the tick pass needs: it locks
 * the due schedules, enqueues their jobs and moves them on in one.
 */
public final class ScheduleRepository {

	private static final RowMapper<ScheduleDetails> DETAILS = (rs, i) -> details(rs);

	private static final Instant NEVER = Instant.parse("9999-12-31T00:00:00Z");

	private final JdbcTemplate jdbc;

	private final ScheduleStatements sql;

	public ScheduleRepository(JdbcTemplate jdbc, SchemaName schema) {
		this.jdbc = jdbc;
		this.sql = new ScheduleStatements(schema);
	}

	/** The database's clock. */
	public Instant now() {
		OffsetDateTime now = this.jdbc.queryForObject(this.sql.now, OffsetDateTime.class);
		return now.toInstant();
	}

	/** Locks up to {@code limit} due running schedules for the caller's transaction. */
	public List<Due> lockDue(int limit) {
		return this.jdbc.query(this.sql.lockDue, (rs, i) -> new Due(details(rs), instant(rs, 16)), limit);
	}

	/** Which of these jobs are waiting or running. */
	public Set<UUID> unfinished(Collection<UUID> publicIds) {
		if (publicIds.isEmpty()) {
			return Set.of();
		}
		UUID[] ids = publicIds.toArray(new UUID[0]);
		Set<UUID> unfinished = new HashSet<>();
		this.jdbc.query((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.unfinished);
			ps.setArray(1, con.createArrayOf("uuid", ids));
			return ps;
		}, (ResultSet rs) -> {
			unfinished.add(rs.getObject(1, UUID.class));
		});
		return unfinished;
	}

	/**
	 * Moves schedules on, in one statement: each to its next tick, with the last tick fired and its
	 * job where one was.
	 */
	public void advance(List<Advance> moves) {
		if (moves.isEmpty()) {
			return;
		}
		int n = moves.size();
		String[] names = new String[n];
		Timestamp[] next = new Timestamp[n];
		Timestamp[] last = new Timestamp[n];
		UUID[] jobs = new UUID[n];
		for (int i = 0; i < n; i++) {
			Advance move = moves.get(i);
			names[i] = move.name();
			// An expression without more ticks: parked at the end of time, where no pass finds it.
			next[i] = timestamp((move.nextTick() != null) ? move.nextTick() : NEVER);
			last[i] = timestamp(move.lastTick());
			jobs[i] = move.lastJob();
		}
		this.jdbc.update((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.advance);
			ps.setArray(1, con.createArrayOf("text", names));
			ps.setArray(2, con.createArrayOf("timestamptz", next));
			ps.setArray(3, con.createArrayOf("timestamptz", last));
			ps.setArray(4, con.createArrayOf("uuid", jobs));
			return ps;
		});
	}

	/**
	 * Creates or changes a schedule; returns it as written, or empty if it was already so.
	 * @param nextTick the first tick after now, used if the schedule is new or its expression or zone changed
	 */
	public Optional<ScheduleDetails> save(String name, String cron, ZoneId zone, String kind, String queue,
			String payloadJson, MissedTicks missed, Overlap overlap, Instant nextTick, boolean declared) {
		return this.jdbc.query(this.sql.save, DETAILS, name, cron, zone.getId(), kind, queue, payloadJson, missed.name(),
				overlap.name(), timestamp(nextTick), declared).stream().findFirst();
	}

	public Optional<ScheduleDetails> get(String name) {
		return this.jdbc.query(this.sql.get, DETAILS, name).stream().findFirst();
	}

	public List<ScheduleDetails> list() {
		return this.jdbc.query(this.sql.list, DETAILS);
	}

	public boolean pause(String name, String by) {
		return this.jdbc.update(this.sql.pause, by, name) == 1;
	}

	public boolean resume(String name) {
		return this.jdbc.update(this.sql.resume, name) == 1;
	}

	public void recordJob(String name, UUID job) {
		this.jdbc.update(this.sql.recordJob, job, name);
	}

	public boolean delete(String name) {
		return this.jdbc.update(this.sql.delete, name) == 1;
	}

	/** Names of running schedules whose next tick fell due more than {@code grace} ago. */
	public List<String> overdue(Duration grace) {
		return this.jdbc.queryForList(this.sql.overdue, String.class, grace.toMillis());
	}

	private static ScheduleDetails details(ResultSet rs) throws SQLException {
		String lastJob = rs.getString(11);
		return new ScheduleDetails(rs.getString(1), rs.getString(2), ZoneId.of(rs.getString(3)), rs.getString(4),
				rs.getString(5), rs.getString(6), MissedTicks.valueOf(rs.getString(7)), Overlap.valueOf(rs.getString(8)),
				instant(rs, 9), nullableInstant(rs, 10), (lastJob != null) ? UUID.fromString(lastJob) : null,
				nullableInstant(rs, 12), rs.getString(13), rs.getBoolean(14), instant(rs, 15));
	}

	private static Instant instant(ResultSet rs, int column) throws SQLException {
		return rs.getObject(column, OffsetDateTime.class).toInstant();
	}

	private static @Nullable Instant nullableInstant(ResultSet rs, int column) throws SQLException {
		OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
		return (value != null) ? value.toInstant() : null;
	}

	private static @Nullable Timestamp timestamp(@Nullable Instant instant) {
		return (instant != null) ? Timestamp.from(instant) : null;
	}

	/**
	 * Where a pass moves a schedule.
	 * @param nextTick its next tick, or {@code null} if its expression has no more
	 * @param lastTick the last tick the pass fired, or {@code null} for none
	 * @param lastJob that tick's job, or {@code null}
	 */
	public record Advance(String name, @Nullable Instant nextTick, @Nullable Instant lastTick, @Nullable UUID lastJob) {

	}

	/**
	 * A due schedule locked by the caller's transaction.
	 * @param now the database's clock when it was read
	 */
	public record Due(ScheduleDetails schedule, Instant now) {

	}

}
