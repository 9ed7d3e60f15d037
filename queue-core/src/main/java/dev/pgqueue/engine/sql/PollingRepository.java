package dev.pgqueue.engine.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.pgqueue.schema.SchemaName;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Runs the statements of the polling heartbeat ({@link PollingStatements}), over two small tables:
 * one row per instance and queue it polls, with its last heartbeat, and one per kind and the queue
 * it was handled in, with when it was last seen handled. Each statement is its own transaction.
 *
 * <p>Times are compared on the database clock only, so that instances whose clocks disagree still
 * agree on which queues are polled.
 */
public class PollingRepository {

	private final JdbcTemplate jdbc;

	private final PollingStatements sql;

	public PollingRepository(JdbcTemplate jdbc, SchemaName schema) {
		this.jdbc = jdbc;
		this.sql = new PollingStatements(schema);
	}

	/** Records that {@code instance} polls {@code queues} now. */
	public void heartbeat(String instance, Collection<String> queues) {
		if (queues.isEmpty()) {
			return;
		}
		this.jdbc.update((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.heartbeat);
			ps.setString(1, instance);
			ps.setArray(2, con.createArrayOf("text", queues.toArray(new String[0])));
			return ps;
		});
	}

	/**
	 * Records that the kinds were handled in their queues: pairs not seen before are added, and those
	 * last seen longer than {@code refreshAfter} ago are seen again now; the others are left as they
	 * are, so that a heartbeat rewrites no row most of the time.
	 * @param kindsByQueue the kinds handled in each queue
	 */
	public void recordHandledKinds(Map<String, String[]> kindsByQueue, Duration refreshAfter) {
		List<String> queues = new ArrayList<>();
		List<String> kinds = new ArrayList<>();
		kindsByQueue.forEach((queue, queueKinds) -> {
			for (String kind : new TreeSet<>(List.of(queueKinds))) {
				queues.add(queue);
				kinds.add(kind);
			}
		});
		if (queues.isEmpty()) {
			return;
		}
		this.jdbc.update((Connection con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.recordHandledKinds);
			ps.setArray(1, con.createArrayOf("text", queues.toArray(new String[0])));
			ps.setArray(2, con.createArrayOf("text", kinds.toArray(new String[0])));
			ps.setLong(3, refreshAfter.toMillis());
			return ps;
		});
	}

	/**
	 * Removes the rows of instances that have not heartbeat for {@code pollerRetention}, and the kinds
	 * not seen handled for {@code kindRetention}.
	 */
	public void prune(Duration pollerRetention, Duration kindRetention) {
		this.jdbc.update(this.sql.dropGonePollers, pollerRetention.toMillis());
		this.jdbc.update(this.sql.dropForgottenKinds, kindRetention.toMillis());
	}

	/** The queues some instance heartbeat for within {@code expiry}. */
	public Set<String> polledQueues(Duration expiry) {
		return new HashSet<>(this.jdbc.queryForList(this.sql.polledQueues, String.class, expiry.toMillis()));
	}

	/** The queues each kind was seen handled in, by kind. */
	public Map<String, Set<String>> queuesByHandledKind() {
		Map<String, Set<String>> queues = new HashMap<>();
		this.jdbc.query(this.sql.handledKinds,
				(ResultSet rs) -> {
					queues.computeIfAbsent(rs.getString(2), (kind) -> new TreeSet<>()).add(rs.getString(1));
				});
		return queues;
	}

}
