package dev.pgqueue.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueAssignment;
import dev.pgqueue.QueueMode;
import dev.pgqueue.ShardUnavailableException;
import dev.pgqueue.embedded.EmbeddedPostgresServer;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.QueueEngineBuilder;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.shards.ShardLayout;
import dev.pgqueue.engine.shards.ShardWatch;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scenarios 29 and 30: queues over three shards, each its own PostgreSQL server (three clusters this
 * test creates and owns, so that one can be stopped alone), drained by two application instances of
 * their own JVMs ({@link ShardedWorkerProcess}), each with an engine per shard. Every job's ledger row
 * is written on its shard in its transaction, with the shard the job tells.
 */
class ShardsTests {

	private static final List<EmbeddedPostgresServer> servers = new ArrayList<>();

	private static final Map<String, HikariDataSource> pools = new LinkedHashMap<>();

	private static ShardLayout layout;

	@BeforeAll
	static void startServers() {
		List<String> urls = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			EmbeddedPostgresServer server = EmbeddedPostgresServer.start();
			servers.add(server);
			urls.add(server.jdbcUrl("postgres"));
		}
		layout = ShardLayout.of(ShardedWorkerProcess.shardNames(urls));
		for (int i = 0; i < 3; i++) {
			HikariDataSource pool = pool(urls.get(i), layout.shards().get(i));
			pools.put(layout.shards().get(i), pool);
			new QueueMigrator(pool, SchemaName.of(ShardedWorkerProcess.SCHEMA), true).afterPropertiesSet();
			new JdbcTemplate(pool).execute(ShardedWorkerProcess.LEDGER_DDL);
		}
	}

	@AfterAll
	static void stopServers() {
		pools.values().forEach(HikariDataSource::close);
		servers.forEach(EmbeddedPostgresServer::close);
	}

	@BeforeEach
	void emptyTables() {
		pools.values().forEach((pool) -> new JdbcTemplate(pool)
			.execute("TRUNCATE shards.pgqueue_jobs, shards.pgqueue_finished_jobs, shards.ledger; DELETE FROM shards.pgqueue_queue_pauses"));
	}

	static Stream<Arguments> modesAndAssignments() {
		return Stream.of(QueueMode.values())
			.flatMap((mode) -> Stream.of(QueueAssignment.values()).map((assignment) -> Arguments.of(mode, assignment)));
	}

	@ParameterizedTest(name = "{0}, {1}")
	@MethodSource("modesAndAssignments")
	void twoInstancesDrainThreeShardsRunningEveryJobOnItsShard(QueueMode mode, QueueAssignment assignment)
			throws Exception {
		int perShard = 20_000;
		try (Clients clients = new Clients(); Fleet fleet = new Fleet("29_" + mode + "_" + assignment)) {
			fleet.startReady(2, Map.of("mode", name(mode), "assignment", name(assignment), "concurrency",
					(mode == QueueMode.TRANSACTIONAL) ? "2" : "8", "batch-size", "50"));
			long start = System.nanoTime();
			List<UUID> ids = new ArrayList<>();
			for (int chunk = 0; chunk < perShard * 3 / 1_000; chunk++) {
				List<JobRequest> requests = new ArrayList<>();
				for (int i = 0; i < 1_000; i++) {
					requests.add(JobRequest.of(WorkerProcess.KIND, chunk * 1_000 + i).queue(WorkerProcess.QUEUE));
				}
				ids.addAll(clients.client.enqueueAll(requests));
			}
			Map<String, Set<UUID>> byShard = byShard(ids);
			byShard.forEach((shard, jobs) -> assertThat(jobs).as("jobs of shard %s", shard).hasSize(perShard));
			await().atMost(Duration.ofMinutes(3))
				.pollInterval(Duration.ofMillis(500))
				.until(() -> layout.shards().stream().allMatch((shard) -> unfinished(shard) == 0));
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			Tally tally = tally(byShard);
			Figures.print("29. three shards, two instances, " + name(mode) + ", " + name(assignment),
					tally + " duration=" + Figures.seconds(took));
			assertThat(tally.lost).as("jobs with no ledger row on their shard").isZero();
			assertThat(tally.elsewhere).as("ledger rows on a shard other than their job's, or naming another").isZero();
			assertThat(tally.unacknowledged).as("ledger rows of jobs no enqueue returned, with no enqueue failing").isZero();
			if (mode == QueueMode.TRANSACTIONAL) {
				assertThat(tally.duplicates).as("jobs that ran more than once").isZero();
			}
			assertThat(tally.perWorker).as("jobs each instance ran").hasSize(2).allSatisfy((pid, count) -> assertThat(count)
				.isPositive());
		}
	}

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void aShardStoppedMidDrainStopsOnlyItsOwnKeys(QueueMode mode) throws Exception {
		int perSecond = 200;
		Map<String, List<String>> keys = keysByShard(20);
		try (Clients clients = new Clients(); Fleet fleet = new Fleet("30_" + mode)) {
			clients.start();
			fleet.startReady(2, Map.of("mode", name(mode), "concurrency", (mode == QueueMode.TRANSACTIONAL) ? "2" : "8",
					"batch-size", "20"));
			List<UUID> accepted = new CopyOnWriteArrayList<>();
			Map<String, AtomicLong> refused = new ConcurrentHashMap<>();
			List<String> refusals = new CopyOnWriteArrayList<>();
			AtomicLong firstFailure = new AtomicLong();
			AtomicLong killedAt = new AtomicLong();
			Thread producer = new Thread(() -> {
				long started = System.nanoTime();
				long sent = 0;
				while (System.nanoTime() - started < Duration.ofSeconds(50).toNanos()) {
					long due = (System.nanoTime() - started) * perSecond * 3 / 1_000_000_000L;
					for (; sent < due; sent++) {
						String shard = layout.shards().get((int) (sent % 3));
						String key = keys.get(shard).get((int) ((sent / 3) % keys.get(shard).size()));
						try {
							accepted.add(clients.client
								.enqueue(JobRequest.of(WorkerProcess.KIND, sent).queue(WorkerProcess.QUEUE).shardKey(key)));
						}
						catch (ShardUnavailableException ex) {
							refused.computeIfAbsent(ex.shard(), (name) -> new AtomicLong()).incrementAndGet();
							firstFailure.compareAndSet(0, System.nanoTime());
							if (refusals.size() < 3) {
								refusals.add(ex.getMessage());
							}
						}
						catch (RuntimeException ex) {
							// An enqueue under way when the server stops fails as the pool says, after its
							// connection timeout; the job is not enqueued.
							refused.computeIfAbsent("failed at the stop", (name) -> new AtomicLong()).incrementAndGet();
							firstFailure.compareAndSet(0, System.nanoTime());
						}
					}
					sleep(20);
				}
			}, "sharded-producer");
			producer.start();
			sleep(15_000);
			killedAt.set(System.nanoTime());
			servers.get(1).kill();
			sleep(30_000);
			servers.get(1).restart();
			long restarted = System.nanoTime();
			producer.join();
			// Right after its restart the server may still refuse this test's own connections for a moment.
			await().atMost(Duration.ofMinutes(2))
				.pollInterval(Duration.ofMillis(500))
				.ignoreExceptions()
				.until(() -> layout.shards().stream().allMatch((shard) -> unfinished(shard) == 0));
			Map<String, Set<UUID>> byShard = byShard(accepted);
			Tally tally = tally(byShard);
			Map<String, long[]> windows = new LinkedHashMap<>();
			for (String shard : List.of("s1", "s3")) {
				windows.put(shard, completionsPerWindow(shard, 5));
			}
			Duration refusedAfter = Duration.ofNanos(firstFailure.get() - killedAt.get());
			Figures.print("30. a shard stopped for 30 s, " + name(mode), tally + " refused=" + refused
					+ " first-failure-after=" + refusedAfter.toMillis() + "ms completions-per-5s s1="
					+ java.util.Arrays.toString(windows.get("s1")) + " s3=" + java.util.Arrays.toString(windows.get("s3"))
					+ " back-after-restart=" + Figures.seconds(Duration.ofNanos(System.nanoTime() - restarted)));
			assertThat(refused).as("keyed enqueues refused while s2 was down").containsKey("s2");
			assertThat(refusedAfter).as("first failed enqueue to s2 after the stop").isLessThan(Duration.ofSeconds(1));
			assertThat(refusals).allSatisfy((message) -> assertThat(message).contains("shard 's2'"));
			assertThat(tally.lost).as("accepted jobs with no ledger row on their shard").isZero();
			assertThat(tally.elsewhere).as("ledger rows on a shard other than their job's, or naming another").isZero();
			// An enqueue cut off by the stop may have committed: its job runs though the call failed. Never
			// more of them than calls that failed so.
			assertThat(tally.unacknowledged).as("jobs that ran though their enqueue failed at the stop")
				.isLessThanOrEqualTo(refused.getOrDefault("failed at the stop", new AtomicLong()).get());
			if (mode == QueueMode.TRANSACTIONAL) {
				assertThat(tally.duplicates).as("jobs that ran more than once").isZero();
				assertThat(tally.unacknowledgedTwice).as("jobs no enqueue returned that ran more than once").isZero();
			}
			// The windows of 5 s, on the server's clock from the first completion: the stop falls in the
			// third or fourth, the restart eight windows later. The other shards keep pace through it.
			for (Map.Entry<String, long[]> entry : windows.entrySet()) {
				long[] counts = entry.getValue();
				double before = (counts[1] + counts[2]) / 2.0;
				for (int w = 4; w <= 8; w++) {
					assertThat((double) counts[w]).as("completions on %s in window %d against %s before (%s)",
							entry.getKey(), w, before, java.util.Arrays.toString(counts))
						.isGreaterThanOrEqualTo(0.8 * before);
				}
			}
		}
	}

	/** Completions (first ledger rows) of a shard per window of {@code seconds}, from its first. */
	private static long[] completionsPerWindow(String shard, int seconds) {
		List<Long> counts = jdbc(shard).queryForList("""
				WITH firsts AS (SELECT min(written_at) AS at FROM shards.ledger GROUP BY job_id),
				     windows AS (SELECT floor(extract(epoch FROM at - min(at) OVER ()) / ?)::int AS w FROM firsts)
				SELECT count(windows.w) FROM generate_series(0, (SELECT max(w) FROM windows)) AS s(w)
				LEFT JOIN windows ON windows.w = s.w GROUP BY s.w ORDER BY s.w""", Long.class, seconds);
		return counts.stream().mapToLong(Long::longValue).toArray();
	}

	private static Map<String, Set<UUID>> byShard(List<UUID> ids) {
		Map<String, Set<UUID>> byShard = new LinkedHashMap<>();
		layout.shards().forEach((shard) -> byShard.put(shard, ConcurrentHashMap.newKeySet()));
		ids.forEach((id) -> byShard.get(layout.shardOf(id).orElseThrow()).add(id));
		return byShard;
	}

	private static Tally tally(Map<String, Set<UUID>> byShard) {
		Tally tally = new Tally();
		byShard.forEach((shard, ids) -> {
			Map<UUID, Integer> runs = new LinkedHashMap<>();
			jdbc(shard).query("SELECT job_id, sum(runs), bool_and(shard = ?), min(worker_pid) FROM shards.ledger GROUP BY job_id",
					(rs) -> {
						UUID id = rs.getObject(1, UUID.class);
						runs.put(id, rs.getInt(2));
						if (!rs.getBoolean(3) || !layout.shardOf(id).orElseThrow().equals(shard)) {
							tally.elsewhere++;
						}
						else if (!ids.contains(id)) {
							// Its enqueue failed as the server stopped, after the commit the answer never came
							// back from: a job the caller does not know of, on its own shard.
							tally.unacknowledged++;
							if (rs.getInt(2) > 1) {
								tally.unacknowledgedTwice++;
							}
						}
					}, shard);
			jdbc(shard).query("SELECT worker_pid, count(*) FROM shards.ledger GROUP BY worker_pid",
					(rs) -> {
						tally.perWorker.merge(rs.getLong(1), rs.getLong(2), Long::sum);
					});
			for (UUID id : ids) {
				Integer ran = runs.get(id);
				if (ran == null) {
					tally.lost++;
				}
				else if (ran > 1) {
					tally.duplicates++;
				}
			}
			tally.jobs += ids.size();
		});
		return tally;
	}

	private static long unfinished(String shard) {
		return jdbc(shard).queryForObject(
				"SELECT count(*) FROM shards.pgqueue_jobs WHERE state NOT IN ('completed', 'failed', 'cancelled')",
				Long.class);
	}

	private static Map<String, List<String>> keysByShard(int each) {
		Map<String, List<String>> keys = new LinkedHashMap<>();
		layout.shards().forEach((shard) -> keys.put(shard, new ArrayList<>()));
		for (int i = 0; keys.values().stream().anyMatch((list) -> list.size() < each); i++) {
			List<String> list = keys.get(layout.shardOfKey("tenant-" + i));
			if (list.size() < each) {
				list.add("tenant-" + i);
			}
		}
		return keys;
	}

	private static JdbcTemplate jdbc(String shard) {
		return new JdbcTemplate(pools.get(shard));
	}

	private static HikariDataSource pool(String url, String name) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url);
		config.setMaximumPoolSize(4);
		config.setMinimumIdle(0);
		// As pgqueue.shards.<name>.connection-timeout=500ms: an enqueue under way at the stop fails after it.
		config.setConnectionTimeout(500);
		config.setPoolName("test-" + name);
		return new HikariDataSource(config);
	}

	private static String name(Enum<?> value) {
		return value.name().toLowerCase(java.util.Locale.ROOT);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** What the ledgers of the shards say about the jobs enqueued on them. */
	private static final class Tally {

		long jobs;

		long lost;

		long duplicates;

		long elsewhere;

		/** Jobs that ran on their own shard though their enqueue call failed (its commit's answer lost). */
		long unacknowledged;

		/** Of those, the ones that ran more than once. */
		long unacknowledgedTwice;

		final Map<Long, Long> perWorker = new LinkedHashMap<>();

		@Override
		public String toString() {
			return "jobs=" + this.jobs + " lost=" + this.lost + " duplicates=" + this.duplicates + " elsewhere="
					+ this.elsewhere + " unacknowledged=" + this.unacknowledged + " per-instance="
					+ this.perWorker.values();
		}

	}

	/** The client side, as an application that only enqueues: an engine over the shards that does not poll. */
	private static final class Clients implements AutoCloseable {

		final QueueEngine engine;

		final JobClient client;

		Clients() {
			QueueEngineBuilder builder = QueueEngine.builder()
				.settings(EngineSettings.defaults(SchemaName.of(ShardedWorkerProcess.SCHEMA)))
				.processing(false);
			pools.forEach((shard, pool) -> builder.shard(shard, pool, (database) -> {
			}));
			this.engine = builder.build();
			this.client = this.engine.client();
		}

		/** Starts the engine, and with it the watch over the shards that the client asks. */
		void start() {
			this.engine.start();
		}

		@Override
		public void close() {
			this.engine.close();
		}

	}

	/** Two application instances, each a JVM of its own with an engine per shard. */
	private static final class Fleet implements AutoCloseable {

		private final Path logs;

		private final List<Worker> workers = new ArrayList<>();

		Fleet(String scenario) {
			this.logs = Paths.get("target", "reliability", scenario);
			try {
				Files.createDirectories(this.logs);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		void startReady(int count, Map<String, String> options) throws IOException {
			String urls = String.join(",", servers.stream().map((server) -> server.jdbcUrl("postgres")).toList());
			for (int i = 1; i <= count; i++) {
				List<String> command = new ArrayList<>(List.of(
						Paths.get(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
						"-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
						ShardedWorkerProcess.class.getName(), "shard-urls=" + urls, "name=i" + i));
				options.forEach((key, value) -> command.add(key + "=" + value));
				Path log = this.logs.resolve("i" + i + ".log");
				Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
				this.workers.add(new Worker("i" + i, process, log));
			}
			this.workers.forEach(Worker::awaitReady);
		}

		@Override
		public void close() {
			this.workers.forEach(Worker::stopQuietly);
			this.workers.forEach(Worker::destroy);
		}

	}

}
