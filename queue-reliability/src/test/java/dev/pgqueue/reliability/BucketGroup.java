package dev.pgqueue.reliability;

import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.pgqueue.schema.SchemaName;
import org.awaitility.core.ConditionTimeoutException;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.awaitility.Awaitility.await;

/**
 * The bucket coordinator of a scenario's queue as the tests see it: its three tables in the
 * workload's schema, and the buckets each worker says its claims read ({@link WorkerProcess#BUCKET_VIEW}).
 * A spread counts as settled only when both agree.
 */
final class BucketGroup {

	/** The bucket count of the scenarios' queue (the default). */
	static final int BUCKETS = 64;

	private static final Pattern VIEW = Pattern.compile(Pattern.quote(WorkerProcess.BUCKET_VIEW)
			+ "(\\d+): generation (\\d+), buckets \\[([0-9, ]*)]");

	private final Workload workload;

	private final String members;

	private final String leaders;

	private final String buckets;

	private final Map<String, String> memberNames = new ConcurrentHashMap<>();

	BucketGroup(Workload workload) {
		this.workload = workload;
		SchemaName schema = SchemaName.of(workload.schemaName());
		this.members = schema.qualify("pgqueue_members");
		this.leaders = schema.qualify("pgqueue_leaders");
		this.buckets = schema.qualify("pgqueue_buckets");
	}

	/** The worker's name in the coordinator, as it printed it at start-up. */
	String member(Worker worker) {
		return this.memberNames.computeIfAbsent(worker.name(), (name) -> worker.lines(WorkerProcess.BUCKET_MEMBER)
			.stream()
			.findFirst()
			.map((line) -> line.substring(line.indexOf(WorkerProcess.BUCKET_MEMBER) + WorkerProcess.BUCKET_MEMBER.length()))
			.orElseThrow(() -> new IllegalStateException(worker + " printed no member name; see " + worker.log())));
	}

	/** The leader's row, or {@code null} before anyone led. */
	Leader leader() {
		List<Leader> rows = jdbc().query("SELECT leader, generation, lease_until >= clock_timestamp() FROM "
				+ this.leaders + " WHERE queue = ?",
				(rs, i) -> new Leader(rs.getString(1), rs.getLong(2), rs.getBoolean(3)), WorkerProcess.QUEUE);
		return rows.isEmpty() ? null : rows.get(0);
	}

	/** The worker whose lease as leader runs now, among {@code workers}, or {@code null}. */
	Worker leading(List<Worker> workers) {
		Leader leader = leader();
		if (leader == null || !leader.leaseValid()) {
			return null;
		}
		return workers.stream().filter((worker) -> member(worker).equals(leader.member())).findFirst().orElse(null);
	}

	/**
	 * The buckets each of {@code live} claims from, once the spread has settled: the leader is one of
	 * them and its lease runs, every bucket has a row written in its generation and owned by one of
	 * them, none waits for a hand-over, and each worker says its claims read exactly the buckets the
	 * table gives it. Empty while that is not so.
	 */
	Map<Worker, Set<Integer>> settled(List<Worker> live) {
		Leader leader = leader();
		Map<String, Worker> byMember = new LinkedHashMap<>();
		live.forEach((worker) -> byMember.put(member(worker), worker));
		if (leader == null || !leader.leaseValid() || !byMember.containsKey(leader.member())) {
			return Map.of();
		}
		List<Row> rows = rows();
		if (rows.size() != BUCKETS) {
			return Map.of();
		}
		Map<Worker, Set<Integer>> owned = new LinkedHashMap<>();
		live.forEach((worker) -> owned.put(worker, new TreeSet<>()));
		for (Row row : rows) {
			Worker owner = byMember.get(row.owner());
			if (owner == null || row.nextOwner() != null || row.generation() != leader.generation()) {
				return Map.of();
			}
			owned.get(owner).add(row.bucket());
		}
		for (Worker worker : live) {
			if (!view(worker).buckets().equals(owned.get(worker))) {
				return Map.of();
			}
		}
		return owned;
	}

	/**
	 * Waits until the spread over {@code live} has settled with the given shares (largest first) and
	 * returns it; fails with what the tables and the workers said last.
	 */
	Map<Worker, Set<Integer>> awaitSettled(List<Worker> live, List<Integer> shares, Duration atMost) {
		List<Map<Worker, Set<Integer>>> found = new ArrayList<>(List.of(Map.of()));
		try {
			await().atMost(atMost)
				.pollInterval(Duration.ofMillis(25))
				.pollDelay(Duration.ZERO)
				.ignoreExceptions()
				.until(() -> {
					found.set(0, settled(live));
					return shares(found.get(0)).equals(shares);
				});
			return found.get(0);
		}
		catch (ConditionTimeoutException ex) {
			throw new AssertionError("The buckets did not settle as " + shares + " over " + live + " within " + atMost
					+ ". " + describe(live), ex);
		}
	}

	/** The sizes of the shares, largest first. */
	static List<Integer> shares(Map<Worker, Set<Integer>> spread) {
		return spread.values().stream().map(Set::size).sorted(Comparator.reverseOrder()).toList();
	}

	/** What the tables and the workers say, for a failure message. */
	String describe(List<Worker> workers) {
		Map<String, Long> owners = rows().stream()
			.collect(Collectors.groupingBy((row) -> row.owner() + ((row.nextOwner() != null) ? " -> " + row.nextOwner() : "")
					+ " (generation " + row.generation() + ")", LinkedHashMap::new, Collectors.counting()));
		StringBuilder text = new StringBuilder("Leader: " + leader() + ". Bucket rows: " + owners + ". Members: "
				+ jdbc().queryForList("SELECT member || ' (heartbeat ' || round(extract(epoch FROM clock_timestamp() - "
						+ "heartbeat_at) * 1000) || ' ms ago)' FROM " + this.members, String.class)
				+ ". Workers:");
		for (Worker worker : workers) {
			View view = view(worker);
			text.append(' ').append(worker).append(" = ").append(this.memberNames.get(worker.name()))
				.append(" reads ").append(view.buckets().size()).append(" buckets, leads generation ")
				.append(view.generation()).append(';');
		}
		return text.toString();
	}

	/** How long ago, by the database clock, the worker's last heartbeat was. */
	Duration sinceLastHeartbeat(Worker worker) {
		return millisSince("heartbeat_at", worker);
	}

	/** How long ago, by the database clock, the worker joined the group. */
	Duration sinceJoined(Worker worker) {
		return millisSince("joined_at", worker);
	}

	private Duration millisSince(String column, Worker worker) {
		return Duration.ofMillis(jdbc().queryForObject("SELECT round(extract(epoch FROM clock_timestamp() - " + column
				+ ") * 1000)::bigint FROM " + this.members + " WHERE queue = ? AND member = ?", Long.class,
				WorkerProcess.QUEUE, member(worker)));
	}

	/** Whether every worker heartbeated after {@code instant} (database clock). */
	boolean allHeartbeatedAfter(List<Worker> workers, Timestamp instant) {
		List<String> names = workers.stream().map(this::member).toList();
		Long fresh = jdbc().queryForObject("SELECT count(*) FROM " + this.members + " WHERE queue = ? "
				+ "AND member = ANY(?::text[]) AND heartbeat_at > ?", Long.class, WorkerProcess.QUEUE,
				names.stream().collect(Collectors.joining(",", "{", "}")), instant);
		return fresh == names.size();
	}

	/** Jobs in the buckets that are due and not completed yet. */
	List<UUID> unfinishedIn(Set<Integer> bucketNumbers) {
		return jdbc().queryForList("SELECT public_id FROM " + this.workload.allJobs() + " WHERE queue = ? "
				+ "AND bucket = ANY(?::smallint[]) AND state <> 'completed' AND run_at <= now()", UUID.class,
				WorkerProcess.QUEUE, array(bucketNumbers));
	}

	/** How many of the jobs completed. */
	long completed(Collection<UUID> ids) {
		return jdbc().queryForObject("SELECT count(*) FROM " + this.workload.allJobs()
				+ " WHERE public_id = ANY(?::uuid[]) AND state = 'completed'", Long.class, Scenarios.uuidArray(ids));
	}

	/** Ledger rows written by a worker other than the one {@code spread} gives the job's bucket. */
	long ranOutsideTheirBucketsOwner(Map<Worker, Set<Integer>> spread) {
		long[] owners = new long[BUCKETS];
		spread.forEach((worker, owned) -> owned.forEach((bucket) -> owners[bucket] = worker.pid()));
		String pids = Arrays.stream(owners).mapToObj(Long::toString).collect(Collectors.joining(",", "{", "}"));
		return jdbc().queryForObject("SELECT count(*) FROM ledger l JOIN " + this.workload.allJobs()
				+ " j ON j.public_id = l.job_id WHERE l.worker_pid <> (?::bigint[])[j.bucket + 1]", Long.class, pids);
	}

	/** The last buckets the worker said its claims read, and the generation it said it led. */
	static View view(Worker worker) {
		List<String> lines = worker.lines(WorkerProcess.BUCKET_VIEW);
		for (int i = lines.size() - 1; i >= 0; i--) {
			Matcher matcher = VIEW.matcher(lines.get(i));
			if (matcher.find()) {
				Set<Integer> owned = new TreeSet<>();
				for (String bucket : matcher.group(3).split(",")) {
					if (!bucket.isBlank()) {
						owned.add(Integer.parseInt(bucket.trim()));
					}
				}
				return new View(Long.parseLong(matcher.group(1)), Long.parseLong(matcher.group(2)), owned);
			}
		}
		return new View(0, 0, Set.of());
	}

	private List<Row> rows() {
		return jdbc().query("SELECT bucket, owner, next_owner, generation FROM " + this.buckets
				+ " WHERE queue = ? ORDER BY bucket",
				(ResultSet rs, int i) -> new Row(rs.getInt(1), rs.getString(2), rs.getString(3), rs.getLong(4)),
				WorkerProcess.QUEUE);
	}

	private static String array(Set<Integer> numbers) {
		return numbers.stream().map(Object::toString).collect(Collectors.joining(",", "{", "}"));
	}

	private JdbcTemplate jdbc() {
		return this.workload.jdbc();
	}

	/** The leader's row; {@code leaseValid} whether its lease runs now. */
	record Leader(String member, long generation, boolean leaseValid) {
	}

	/**
	 * What a worker said last about its claims.
	 * @param atMillis when it said so (epoch milliseconds)
	 * @param generation the generation it leads, 0 when it does not lead
	 * @param buckets the buckets its claims read
	 */
	record View(long atMillis, long generation, Set<Integer> buckets) {
	}

	private record Row(int bucket, String owner, String nextOwner, long generation) {
	}

}
