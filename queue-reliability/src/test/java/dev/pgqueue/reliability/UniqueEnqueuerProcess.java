package dev.pgqueue.reliability;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;

/**
 * One process of the unique-key scenario, in a JVM of its own: an application that only enqueues
 * ({@link QueueEngine} with processing off, on a HikariCP pool), whose threads all enqueue the same
 * keys, {@code rounds} times each, as {@link #KIND} jobs with that unique key, an hour ahead in a
 * queue nobody polls, so that every key stays held. Even threads call {@link JobClient#enqueue} once
 * per key, odd threads {@link JobClient#enqueueAll} in batches of {@code batch}; each thread goes
 * through the keys in an order of its own, shuffled again every round. The payload names the thread
 * that enqueued the job, so that the job that holds a key tells who won its race.
 *
 * <p>Once its pool holds a connection per thread and it has run both calls a few hundred times on
 * keys of its own ({@link #WARM_UP_KIND}), it prints {@link WorkerProcess#READY}, then waits for
 * the {@code start-file} the test writes once every process is ready; the file holds the instant (epoch
 * milliseconds) at which all of them start. At the end each thread writes, for every key, each id its
 * calls got and how many calls got it, into {@link #RESULTS_DDL}; calls that failed go into
 * {@link #ERRORS_DDL}. The process prints {@link #SUMMARY} and exits.
 *
 * <p>Arguments are {@code key=value} pairs: {@code url}, {@code schema}, {@code name}, {@code threads}
 * (8), {@code keys} (1 000), {@code rounds} (10), {@code batch} (50), {@code start-file}.
 */
public final class UniqueEnqueuerProcess {

	public static final String KIND = "unique.race";

	/** The kind of the jobs each process enqueues before the start, on keys of its own. */
	public static final String WARM_UP_KIND = "unique.warm-up";

	/** A queue no process polls: the jobs stay scheduled, their keys held. */
	public static final String QUEUE = "unique-race";

	public static final String SUMMARY = "enqueuer summary:";

	/** Starts the line that says when the process started enqueueing: {@code enqueueing from <epoch millis>}. */
	public static final String STARTED = "enqueueing from ";

	/** One row per process, thread, key and id the thread's calls for the key got. */
	public static final String RESULTS_DDL = """
			CREATE TABLE unique_results (
			    process text NOT NULL,
			    thread int NOT NULL,
			    api text NOT NULL,
			    key text NOT NULL,
			    id uuid NOT NULL,
			    calls int NOT NULL)""";

	/** One row per call that threw. */
	public static final String ERRORS_DDL = """
			CREATE TABLE unique_errors (
			    process text NOT NULL,
			    thread int NOT NULL,
			    api text NOT NULL,
			    error text NOT NULL)""";

	private UniqueEnqueuerProcess() {
	}

	/** The unique key of the key numbered {@code n}. */
	public static String key(int n) {
		return String.format("key-%04d", n);
	}

	public static void main(String[] args) throws Exception {
		Map<String, String> options = new HashMap<>(Map.of("name", "enqueuer", "threads", "8", "keys", "1000",
				"rounds", "10", "batch", "50"));
		for (String arg : args) {
			int eq = arg.indexOf('=');
			if (eq < 1) {
				throw new IllegalArgumentException("Expected key=value, got '" + arg + "'");
			}
			options.put(arg.substring(0, eq), arg.substring(eq + 1));
		}
		String name = options.get("name");
		String schema = options.get("schema");
		int threads = Integer.parseInt(options.get("threads"));
		int keys = Integer.parseInt(options.get("keys"));
		int rounds = Integer.parseInt(options.get("rounds"));
		int batch = Integer.parseInt(options.get("batch"));
		Path startFile = Paths.get(options.get("start-file"));

		HikariDataSource pool = pool(options.get("url"), schema, name, threads + 2);
		QueueEngine engine = QueueEngine.builder(pool)
			.settings(EngineSettings.defaults(SchemaName.of(schema))
				.withNotifications(false, EngineSettings.DEFAULT_NOTIFY_INTERVAL))
			.processing(false)
			.build();
		JobClient client = engine.client();
		warm(pool, threads, client, name);
		System.out.println(WorkerProcess.READY + ": " + name + " pid " + ProcessHandle.current().pid() + ", " + threads
				+ " threads");

		while (!Files.exists(startFile) || Files.size(startFile) == 0) {
			Thread.sleep(2);
		}
		long startAt = Long.parseLong(Files.readString(startFile, StandardCharsets.UTF_8).strip());
		long wait = startAt - System.currentTimeMillis();
		if (wait > 0) {
			Thread.sleep(wait);
		}
		long started = System.currentTimeMillis();
		System.out.println(STARTED + started);

		List<Thread> running = new ArrayList<>();
		List<Caller> callers = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			Caller caller = new Caller(client, name, t, keys, rounds, (t % 2 == 0) ? 1 : batch);
			callers.add(caller);
			Thread thread = new Thread(caller, name + "-" + t);
			running.add(thread);
			thread.start();
		}
		for (Thread thread : running) {
			thread.join();
		}
		long took = System.currentTimeMillis() - started;
		long calls = 0;
		long errors = 0;
		Map<String, List<Long>> millis = new TreeMap<>();
		for (Caller caller : callers) {
			caller.write(pool);
			calls += caller.calls.get();
			errors += caller.errors.size();
			millis.computeIfAbsent(caller.api(), (api) -> new ArrayList<>()).add(caller.millis);
		}
		StringBuilder threadsTook = new StringBuilder();
		millis.forEach((api, each) -> threadsTook.append(' ').append(api).append("-threads-ms=")
			.append(Collections.min(each)).append("..").append(Collections.max(each)));
		System.out.println(SUMMARY + " " + name + " calls=" + calls + " errors=" + errors + " enqueueing-ms=" + took
				+ threadsTook);
		engine.close();
		pool.close();
	}

	private static HikariDataSource pool(String url, String schema, String name, int size) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url);
		String username = System.getenv(TestDatabase.USERNAME_VARIABLE);
		String password = System.getenv(TestDatabase.PASSWORD_VARIABLE);
		if (username != null && !username.isBlank()) {
			config.setUsername(username);
		}
		if (password != null && !password.isBlank()) {
			config.setPassword(password);
		}
		config.setSchema(schema);
		config.setMaximumPoolSize(size);
		config.setMinimumIdle(size);
		config.setPoolName("enqueuer-" + name);
		config.addDataSourceProperty("ApplicationName", WorkerProcess.applicationName(schema, name));
		return new HikariDataSource(config);
	}

	/**
	 * Opens a connection per thread and runs both calls a few hundred times on keys of another kind
	 * before the start, so that the race is not one of connecting or of compiling.
	 */
	private static void warm(HikariDataSource pool, int threads, JobClient client, String name) throws SQLException {
		for (int n = 0; n < 200; n++) {
			client.enqueue(JobRequest.of(WARM_UP_KIND, null).queue(QUEUE).uniqueKey(name + "-" + (n % 50))
				.delay(Duration.ofHours(1)));
		}
		for (int n = 0; n < 20; n++) {
			List<JobRequest> batch = new ArrayList<>();
			for (int k = 0; k < 50; k++) {
				batch.add(JobRequest.of(WARM_UP_KIND, null).queue(QUEUE).uniqueKey(name + "-" + k).delay(Duration.ofHours(1)));
			}
			client.enqueueAll(batch);
		}
		List<Connection> connections = new ArrayList<>();
		try {
			for (int i = 0; i < threads; i++) {
				connections.add(pool.getConnection());
			}
		}
		finally {
			for (Connection connection : connections) {
				connection.close();
			}
		}
	}

	/** One thread's calls: every key, {@code rounds} times, one by one or in batches. */
	private static final class Caller implements Runnable {

		private final JobClient client;

		private final String process;

		private final int thread;

		private final int keys;

		private final int rounds;

		private final int batch;

		/** Per key, the ids its calls got and how many got each. */
		private final Map<String, Map<UUID, Integer>> ids = new HashMap<>();

		private final List<String> errors = new ArrayList<>();

		private final AtomicLong calls = new AtomicLong();

		/** How long the thread took for all its calls. */
		private volatile long millis;

		Caller(JobClient client, String process, int thread, int keys, int rounds, int batch) {
			this.client = client;
			this.process = process;
			this.thread = thread;
			this.keys = keys;
			this.rounds = rounds;
			this.batch = batch;
		}

		String api() {
			return (this.batch == 1) ? "enqueue" : "enqueueAll";
		}

		@Override
		public void run() {
			long start = System.nanoTime();
			Random random = new Random((this.process + "/" + this.thread).hashCode());
			List<String> order = new ArrayList<>(this.keys);
			for (int n = 0; n < this.keys; n++) {
				order.add(key(n));
			}
			for (int round = 0; round < this.rounds; round++) {
				Collections.shuffle(order, random);
				for (int from = 0; from < order.size(); from += this.batch) {
					List<String> chunk = order.subList(from, Math.min(order.size(), from + this.batch));
					try {
						List<UUID> got = (this.batch == 1) ? List.of(this.client.enqueue(request(chunk.get(0))))
								: this.client.enqueueAll(chunk.stream().map(this::request).toList());
						for (int i = 0; i < chunk.size(); i++) {
							this.ids.computeIfAbsent(chunk.get(i), (k) -> new HashMap<>()).merge(got.get(i), 1, Integer::sum);
						}
						this.calls.addAndGet(chunk.size());
					}
					catch (RuntimeException ex) {
						this.errors.add(ex.toString());
						System.out.println("enqueue failed in " + this.process + "/" + this.thread + " (" + api() + ", "
								+ chunk.size() + " keys): " + ex);
					}
				}
			}
			this.millis = (System.nanoTime() - start) / 1_000_000;
		}

		private JobRequest request(String key) {
			return JobRequest.of(KIND, Map.of("key", key, "by", this.process + "/" + this.thread))
				.queue(QUEUE)
				.uniqueKey(key)
				.delay(Duration.ofHours(1));
		}

		void write(HikariDataSource pool) throws SQLException {
			try (Connection connection = pool.getConnection()) {
				try (PreparedStatement insert = connection.prepareStatement(
						"INSERT INTO unique_results (process, thread, api, key, id, calls) VALUES (?, ?, ?, ?, ?, ?)")) {
					for (Map.Entry<String, Map<UUID, Integer>> key : this.ids.entrySet()) {
						for (Map.Entry<UUID, Integer> id : key.getValue().entrySet()) {
							insert.setString(1, this.process);
							insert.setInt(2, this.thread);
							insert.setString(3, api());
							insert.setString(4, key.getKey());
							insert.setObject(5, id.getKey());
							insert.setInt(6, id.getValue());
							insert.addBatch();
						}
					}
					insert.executeBatch();
				}
				try (PreparedStatement insert = connection
					.prepareStatement("INSERT INTO unique_errors (process, thread, api, error) VALUES (?, ?, ?, ?)")) {
					for (String error : this.errors) {
						insert.setString(1, this.process);
						insert.setInt(2, this.thread);
						insert.setString(3, api());
						insert.setString(4, error);
						insert.addBatch();
					}
					insert.executeBatch();
				}
			}
		}

	}

}
