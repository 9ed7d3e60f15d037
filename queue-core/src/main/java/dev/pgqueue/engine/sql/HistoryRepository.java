package dev.pgqueue.engine.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.pgqueue.QueueHistory;
import dev.pgqueue.QueueHistory.Point;
import dev.pgqueue.engine.job.CountedMinute;
import dev.pgqueue.schema.SchemaName;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Runs the statements on the queues' per-minute history ({@link HistoryStatements}): the flusher's
 * one upsert of everything an instance counted, the cleaner's prune, and the read that aggregates
 * minutes into steps.
 */
public class HistoryRepository {

	private static final double NANOS_PER_MILLI = 1_000_000.0;

	private final JdbcTemplate jdbc;

	private final HistoryStatements sql;

	public HistoryRepository(JdbcTemplate jdbc, SchemaName schema) {
		this.jdbc = jdbc;
		this.sql = new HistoryStatements(schema);
	}

	/** Adds the counted minutes to their rows, in one statement; does nothing when there are none. */
	public void addMinutes(Collection<CountedMinute> minutes) {
		if (minutes.isEmpty()) {
			return;
		}
		int n = minutes.size();
		String[] queues = new String[n];
		Long[] minute = new Long[n];
		Long[] completed = new Long[n];
		Long[] failed = new Long[n];
		Long[] retried = new Long[n];
		Long[] waits = new Long[n];
		Double[] waitSum = new Double[n];
		Double[] waitMax = new Double[n];
		Long[] runs = new Long[n];
		Double[] runSum = new Double[n];
		Double[] runMax = new Double[n];
		int i = 0;
		for (CountedMinute counted : minutes) {
			queues[i] = counted.queue();
			minute[i] = counted.minute();
			completed[i] = counted.completed();
			failed[i] = counted.failed();
			retried[i] = counted.retried();
			waits[i] = counted.waits();
			waitSum[i] = counted.waitNanosSum() / NANOS_PER_MILLI;
			waitMax[i] = counted.waitNanosMax() / NANOS_PER_MILLI;
			runs[i] = counted.runs();
			runSum[i] = counted.runNanosSum() / NANOS_PER_MILLI;
			runMax[i] = counted.runNanosMax() / NANOS_PER_MILLI;
			i++;
		}
		this.jdbc.update((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.addMinutes);
			ps.setArray(1, con.createArrayOf("text", queues));
			ps.setArray(2, con.createArrayOf("int8", minute));
			ps.setArray(3, con.createArrayOf("int8", completed));
			ps.setArray(4, con.createArrayOf("int8", failed));
			ps.setArray(5, con.createArrayOf("int8", retried));
			ps.setArray(6, con.createArrayOf("int8", waits));
			ps.setArray(7, con.createArrayOf("float8", waitSum));
			ps.setArray(8, con.createArrayOf("float8", waitMax));
			ps.setArray(9, con.createArrayOf("int8", runs));
			ps.setArray(10, con.createArrayOf("float8", runSum));
			ps.setArray(11, con.createArrayOf("float8", runMax));
			return ps;
		});
	}

	/** Deletes the minutes older than the retention; returns how many. */
	public int pruneOlderThan(Duration retention) {
		return this.jdbc.update(this.sql.pruneOlderThan, retention.toMillis());
	}

	/**
	 * Each queue's history over the last {@code steps} steps of {@code step}, one point per step,
	 * queues in name order; a queue with no minute in the window is left out.
	 */
	public List<QueueHistory> read(Duration step, int steps) {
		Map<String, List<Point>> points = new LinkedHashMap<>();
		this.jdbc.query(this.sql.readSteps, (ResultSet rs) -> {
			points.computeIfAbsent(rs.getString(1), (queue) -> new ArrayList<>())
				.add(new Point(rs.getObject(2, OffsetDateTime.class).toInstant(), rs.getLong(3), rs.getLong(4),
						rs.getLong(5), millis(rs, 6), millis(rs, 7), millis(rs, 8), millis(rs, 9)));
		}, step.toSeconds(), steps);
		List<QueueHistory> histories = new ArrayList<>(points.size());
		points.forEach((queue, queuePoints) -> histories.add(new QueueHistory(queue, step, queuePoints)));
		return histories;
	}

	/** A duration in milliseconds, {@link Duration#ZERO} for null (nothing measured). */
	private static Duration millis(ResultSet rs, int column) throws SQLException {
		double millis = rs.getDouble(column);
		return rs.wasNull() ? Duration.ZERO : Duration.ofNanos(Math.round(millis * NANOS_PER_MILLI));
	}

}
