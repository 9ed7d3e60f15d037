package dev.pgqueue.reliability;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.schedules.JdbcJobSchedules;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import org.awaitility.core.ConditionTimeoutException;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.awaitility.Awaitility.await;

/**
 * One scenario's schema: the jobs table, the ledger the workers' handler writes, the jobs enqueued
 * and, at the end, the tally of what became of them. Close it to drop the schema.
 */
final class Workload implements AutoCloseable {

	private static final int CHUNK = 1_000;

	private final TestSchema schema;

	/** An application that only enqueues, notifying on every enqueue; and those of {@link #client}. */
	private final List<QueueEngine> engines = new ArrayList<>();

	private final JobClient client;

	private final String table;

	/** Every job, unfinished and finished: the view over the jobs table and the finished jobs' table. */
	private final String allJobs;

	private Workload(String scenario) {
		this.schema = TestDatabase.get().createSchema("rel_" + scenario);
		SchemaName name = SchemaName.of(this.schema.name());
		new QueueMigrator(this.schema.dataSource(), name, true).afterPropertiesSet();
		jdbc().execute(WorkerProcess.LEDGER_DDL);
		jdbc().execute(WorkerProcess.INTERVALS_DDL);
		this.client = client(QueueObservations.NONE);
		this.table = name.qualify("pgqueue_jobs");
		this.allJobs = name.qualify("pgqueue_all_jobs");
	}

	/** A client of this workload's jobs table whose enqueues are observed (and, with a tracer, traced). */
	JobClient client(QueueObservations observations) {
		QueueEngine engine = QueueEngine.builder(this.schema.dataSource())
			.settings(EngineSettings.defaults(SchemaName.of(this.schema.name())).withNotifications(true, Duration.ZERO))
			.observations(observations)
			.processing(false)
			.build();
		this.engines.add(engine);
		return engine.client();
	}

	/** A new schema named after the scenario, with the jobs table migrated and an empty ledger. */
	static Workload create(String scenario) {
		return new Workload(scenario);
	}

	String schemaName() {
		return this.schema.name();
	}

	String table() {
		return this.table;
	}

	/** Every job, unfinished and finished: the view {@code pgqueue_all_jobs}, which reads read. */
	String allJobs() {
		return this.allJobs;
	}

	JdbcTemplate jdbc() {
		return this.schema.jdbcTemplate();
	}

	/** The schedules of this workload's table, as an application that does not process jobs manages them. */
	JdbcJobSchedules schedules() {
		return EngineInternals.of(this.engines.get(0)).schedules();
	}

	/** The admin API of this workload's table, as an operator's application has it (notifications on). */
	JobAdmin admin() {
		return this.engines.get(0).admin();
	}

	JobRepository repository() {
		return EngineInternals.of(this.engines.get(0)).jobs();
	}

	TestSchema schema() {
		return this.schema;
	}

	/** Enqueues {@code count} jobs, due now, in chunks of one statement each. */
	List<UUID> enqueue(int count) {
		return enqueue(count, Duration.ZERO);
	}

	/** Enqueues {@code count} jobs due now, each with its own rate weight ({@code JobRequest.rateWeight}). */
	List<UUID> enqueueWeighted(int count, int weight) {
		List<UUID> ids = new ArrayList<>(count);
		for (int start = 0; start < count; start += CHUNK) {
			List<JobRequest> requests = new ArrayList<>(CHUNK);
			for (int n = start; n < Math.min(count, start + CHUNK); n++) {
				requests.add(JobRequest.of(WorkerProcess.KIND, Map.of("n", n)).queue(WorkerProcess.QUEUE).rateWeight(weight));
			}
			ids.addAll(this.client.enqueueAll(requests));
		}
		return ids;
	}

	/** Enqueues {@code count} jobs due at an even pace over {@code spread} from now. */
	List<UUID> enqueue(int count, Duration spread) {
		List<UUID> ids = new ArrayList<>(count);
		for (int start = 0; start < count; start += CHUNK) {
			List<JobRequest> requests = new ArrayList<>(CHUNK);
			for (int n = start; n < Math.min(count, start + CHUNK); n++) {
				JobRequest request = JobRequest.of(WorkerProcess.KIND, Map.of("n", n)).queue(WorkerProcess.QUEUE);
				if (!spread.isZero()) {
					request.delay(spread.multipliedBy(n).dividedBy(count));
				}
				requests.add(request);
			}
			ids.addAll(this.client.enqueueAll(requests));
		}
		return ids;
	}

	/**
	 * Enqueues one job per key given, in the order given, each with that concurrency key and its
	 * number among the key's jobs ({@code seq}) in the payload.
	 */
	List<UUID> enqueueKeyed(List<String> keys) {
		Map<String, Integer> seqs = new java.util.HashMap<>();
		List<UUID> ids = new ArrayList<>(keys.size());
		for (int start = 0; start < keys.size(); start += CHUNK) {
			List<JobRequest> requests = new ArrayList<>(CHUNK);
			for (String key : keys.subList(start, Math.min(keys.size(), start + CHUNK))) {
				int seq = seqs.merge(key, 1, Integer::sum) - 1;
				requests.add(JobRequest.of(WorkerProcess.KIND, Map.of("key", key, "seq", seq))
					.queue(WorkerProcess.QUEUE)
					.concurrencyKey(key));
			}
			ids.addAll(this.client.enqueueAll(requests));
		}
		return ids;
	}

	/** Enqueues one job due now per payload, with one statement. */
	List<UUID> enqueue(List<Map<String, Object>> payloads) {
		List<JobRequest> requests = new ArrayList<>(payloads.size());
		payloads.forEach((payload) -> requests.add(JobRequest.of(WorkerProcess.KIND, payload).queue(WorkerProcess.QUEUE)));
		return this.client.enqueueAll(requests);
	}

	/** The database server's clock now: the clock of {@code created_at} and of the ledger's {@code written_at}. */
	Instant databaseNow() {
		return jdbc().queryForObject("SELECT clock_timestamp()", Timestamp.class).toInstant();
	}

	/**
	 * Jobs enqueued, and jobs completed (their first ledger row written), in each of {@code count}
	 * consecutive windows of {@code length} from {@code from} (database clock).
	 */
	List<Window> windows(Instant from, Duration length, int count) {
		return jdbc().query("""
				WITH w AS (
				    SELECT g AS i, ?::timestamptz + g * ?::interval AS lo, ?::timestamptz + (g + 1) * ?::interval AS hi
				    FROM generate_series(0, ? - 1) AS g),
				firsts AS (SELECT job_id, min(written_at) AS at FROM ledger GROUP BY job_id)
				SELECT w.lo,
				       (SELECT count(*) FROM %s j WHERE j.created_at >= w.lo AND j.created_at < w.hi) AS enqueued,
				       (SELECT count(*) FROM firsts f WHERE f.at >= w.lo AND f.at < w.hi) AS completed
				FROM w ORDER BY w.i""".formatted(this.allJobs),
				(rs, i) -> new Window(rs.getTimestamp(1).toInstant(), rs.getLong(2), rs.getLong(3)),
				Timestamp.from(from), length.toMillis() + " milliseconds", Timestamp.from(from),
				length.toMillis() + " milliseconds", count);
	}

	/** Jobs enqueued and completed within one window of time (see {@link #windows}). */
	record Window(Instant from, long enqueued, long completed) {

		/** Completions as a share of what was offered in the same window. */
		double pace() {
			return (this.enqueued == 0) ? 1.0 : (double) this.completed / this.enqueued;
		}

	}

	/** Jobs in state {@code completed}. */
	long completed() {
		return jdbc().queryForObject("SELECT count(*) FROM " + this.allJobs + " WHERE state = 'completed'", Long.class);
	}

	/** Jobs waiting for a worker. */
	long available() {
		// state || '' keeps the planner off the claim index, whose scans scenario 7 counts as the workers'.
		return jdbc().queryForObject("SELECT count(*) FROM " + this.table + " WHERE state || '' = 'available'",
				Long.class);
	}

	/** Dead tuples of the jobs table, as the statistics last reported them. */
	/**
	 * Scans of the claim index and the entries they read, since the server started counting: their
	 * difference over a phase is what the workers' claims read (each backend reports at least once a
	 * second while busy).
	 */
	long[] claimIndexReads() {
		return jdbc().queryForObject("SELECT idx_scan, idx_tup_read FROM pg_stat_user_indexes "
				+ "WHERE schemaname = ? AND indexrelname = 'pgqueue_jobs_claim_idx'",
				(rs, i) -> new long[] { rs.getLong(1), rs.getLong(2) }, schemaName());
	}

	long deadTuples() {
		return jdbc().queryForObject("SELECT coalesce(max(n_dead_tup), 0) FROM pg_stat_user_tables "
				+ "WHERE schemaname = ? AND relname = 'pgqueue_jobs'", Long.class, schemaName());
	}

	/**
	 * Waits until no other client session of the database runs a transaction that began before
	 * {@code instant}: such a session holds back what vacuum may remove, and this machine may be
	 * shared with other test runs.
	 */
	void awaitNoOlderTransactions(Instant instant, Duration atMost) {
		String sql = """
				SELECT coalesce(string_agg(pid || ' (' || application_name || ', ' || state || ', since '
				                           || xact_start || ')', '; '), '')
				FROM pg_stat_activity
				WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
				  AND xact_start < ? AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL)""";
		String[] holders = { "" };
		try {
			await().atMost(atMost)
				.pollInterval(Duration.ofMillis(500))
				.until(() -> (holders[0] = jdbc().queryForObject(sql, String.class, Timestamp.from(instant))).isEmpty());
		}
		catch (ConditionTimeoutException ex) {
			throw new AssertionError("Other sessions of database " + TestDatabase.get().jdbcUrl() + " kept transactions "
					+ "older than " + instant + " open for " + atMost + ": " + holders[0] + ". This scenario measures "
					+ "what vacuum can remove and needs them to end.", ex);
		}
	}

	/** Vacuums the jobs table and returns the dead tuples it could not remove. */
	long vacuum() {
		jdbc().execute("VACUUM " + this.table);
		return deadTuples();
	}

	/** Waits until every job has completed, failing after {@code atMost}. */
	void awaitDrained(Duration atMost) {
		long total = jdbc().queryForObject("SELECT count(*) FROM " + this.allJobs, Long.class);
		await().atMost(atMost)
			.pollInterval(Duration.ofMillis(250))
			.ignoreExceptions()
			.alias("all " + total + " jobs of " + this.schema.name() + " completed")
			.until(() -> completed() == total);
	}

	/**
	 * Work the worker holds right now: in transactional mode its open batches (backends holding a
	 * lock on the jobs table), in leased mode the jobs running under its leases.
	 */
	int inFlight(Worker worker, QueueMode mode) throws SQLException {
		String sql = (mode == QueueMode.TRANSACTIONAL) ? """
				SELECT count(DISTINCT l.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
				WHERE l.relation = ?::regclass AND l.granted AND a.application_name = ?
				""" : "SELECT count(*) FROM " + this.table + " WHERE state = 'running' AND lease_owner LIKE ?";
		try (Connection connection = TestDatabase.get().connect();
				PreparedStatement statement = connection.prepareStatement(sql)) {
			if (mode == QueueMode.TRANSACTIONAL) {
				statement.setString(1, this.table);
				statement.setString(2, WorkerProcess.applicationName(schemaName(), worker.name()));
			}
			else {
				statement.setString(1, worker.pid() + "@%");
			}
			try (ResultSet rs = statement.executeQuery()) {
				rs.next();
				return rs.getInt(1);
			}
		}
	}

	/** The jobs leased to the worker's process and still running, as stored. */
	List<UUID> leasedTo(Worker worker) {
		return jdbc().queryForList("SELECT public_id FROM " + this.table
				+ " WHERE state = 'running' AND lease_owner LIKE ?", UUID.class, worker.pid() + "@%");
	}

	/** When each of the jobs finished, as stored. */
	Map<UUID, Timestamp> finishedAt(Collection<UUID> ids) {
		Map<UUID, Timestamp> finished = new HashMap<>();
		jdbc().query("SELECT public_id, finished_at FROM " + this.allJobs + " WHERE public_id = ANY(?::uuid[])",
				(ResultSet rs) -> {
					finished.put(rs.getObject(1, UUID.class), rs.getTimestamp(2));
				}, Scenarios.uuidArray(ids));
		return finished;
	}

	/** Ledger rows by the process id of the worker that wrote them. */
	Map<Long, Long> ledgerRowsPerWorker() {
		Map<Long, Long> rows = new TreeMap<>();
		jdbc().query("SELECT worker_pid, count(*) FROM ledger GROUP BY worker_pid",
				(ResultSet rs) -> {
					rows.put(rs.getLong(1), rs.getLong(2));
				});
		return rows;
	}

	/**
	 * What became of every job. {@code log} is what the workers' logs name as reasons to run a job
	 * again.
	 */
	Tally tally(WorkerLog log) {
		Map<String, Object> row = jdbc().queryForMap("""
				WITH runs AS (
				    SELECT job_id, sum(runs) AS runs, max(runs) AS same_attempt FROM ledger GROUP BY job_id)
				SELECT count(*) AS jobs,
				       count(*) FILTER (WHERE j.state <> 'completed' OR r.job_id IS NULL) AS lost,
				       coalesce(sum(r.runs - 1), 0) AS duplicates,
				       count(*) FILTER (WHERE r.same_attempt > 1) AS same_attempt_twice,
				       count(*) FILTER (WHERE r.runs > j.attempt) AS runs_beyond_attempts,
				       coalesce(sum(j.attempt - 1), 0) AS extra_attempts,
				       coalesce(sum((SELECT count(*) FROM jsonb_array_elements(j.attempts) e
				                     WHERE e->>'outcome' = 'expired')), 0) AS expired_leases,
				       (SELECT count(*) FROM ledger l WHERE NOT EXISTS (
				           SELECT 1 FROM %1$s k WHERE k.public_id = l.job_id)) AS unknown
				FROM %1$s j LEFT JOIN runs r ON r.job_id = j.public_id
				""".formatted(this.allJobs));
		List<UUID> duplicated = jdbc().queryForList(
				"SELECT job_id FROM ledger GROUP BY job_id HAVING sum(runs) > 1", UUID.class);
		// The table's attempt history is the record of each expired lease: the rescue writes it in the
		// statement that returns the job. A rescuer's log line can be missing, when its process is
		// killed between that commit and the line (or while the statement runs on the server).
		Set<UUID> expired = new HashSet<>(jdbc().queryForList("SELECT public_id FROM " + this.allJobs
				+ " j WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(j.attempts) e WHERE e->>'outcome' = 'expired')",
				UUID.class));
		Set<UUID> explained = new HashSet<>(expired);
		explained.addAll(log.retried());
		long unexplained = duplicated.stream().filter((id) -> !explained.contains(id)).count();
		long loggedNotRecorded = log.rescued().stream().filter((id) -> !expired.contains(id)).count();
		return new Tally(number(row, "jobs"), number(row, "lost"), number(row, "duplicates"),
				number(row, "same_attempt_twice"), number(row, "runs_beyond_attempts"), unexplained,
				number(row, "expired_leases"), log.rescued().size(), loggedNotRecorded, log.retried().size(),
				log.released(), number(row, "extra_attempts"), number(row, "unknown"));
	}

	private static long number(Map<String, Object> row, String column) {
		return ((Number) row.get(column)).longValue();
	}

	@Override
	public void close() {
		this.engines.forEach(QueueEngine::close);
		this.schema.close();
	}

	/**
	 * What became of the jobs.
	 * @param jobs jobs in the table
	 * @param lost jobs not completed, or completed without their ledger row
	 * @param duplicates ledger runs beyond the first of each job
	 * @param sameAttemptTwice jobs one of whose attempts ran to the end twice
	 * @param runsBeyondAttempts jobs that ran to the end more often than attempts were counted
	 * @param duplicatedUnexplained jobs that ran twice with neither an expired lease in their attempt
	 * history nor a failed attempt named in the logs
	 * @param rescued expired leases the jobs' attempt histories record (one entry per rescue)
	 * @param rescuesLogged expired leases the workers' rescuers reported in their logs
	 * @param rescuesLoggedNotRecorded jobs a rescuer's log names whose history records no expired lease
	 * @param retried failed attempts the workers reported
	 * @param released jobs the workers returned unfinished at shutdown
	 * @param extraAttempts attempts counted beyond the first of each job
	 * @param unknownLedgerRows ledger rows of no enqueued job
	 */
	record Tally(long jobs, long lost, long duplicates, long sameAttemptTwice, long runsBeyondAttempts,
			long duplicatedUnexplained, long rescued, long rescuesLogged, long rescuesLoggedNotRecorded, long retried,
			long released, long extraAttempts, long unknownLedgerRows) {
	}

}
