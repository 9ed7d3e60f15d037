package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.Job;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueAssignment;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.QueueEngineBuilder;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.shards.ShardLayout;
import dev.pgqueue.schema.SchemaName;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * One application instance of the shard scenarios, in a JVM of its own: one engine per shard, as the
 * starter builds them for {@code pgqueue.shards} (each on its own HikariCP pool and jobs table, its
 * jobs' ids telling the shard), all polling {@link WorkerProcess#QUEUE}. The handler writes the
 * ledger of its job's shard in the job's transaction, with the shard the job tells.
 *
 * <p>Arguments are {@code key=value} pairs: {@code shard-urls} (the shards' JDBC URLs, comma-separated,
 * named {@code s1}, {@code s2}… in that order), {@code name}, {@code mode}, {@code assignment},
 * {@code concurrency}, {@code batch-size}, {@code work-ms}, {@code lease-ms}.
 */
public final class ShardedWorkerProcess {

	/** The schema of pgqueue's tables and the ledger on every shard. */
	public static final String SCHEMA = "shards";

	/** The ledger of every shard: one row per attempt that finished its work there. */
	public static final String LEDGER_DDL = """
			CREATE TABLE IF NOT EXISTS shards.ledger (
			    job_id uuid NOT NULL,
			    attempt int NOT NULL,
			    worker_pid bigint NOT NULL,
			    shard text NOT NULL,
			    runs int NOT NULL DEFAULT 1,
			    written_at timestamptz NOT NULL DEFAULT clock_timestamp(),
			    PRIMARY KEY (job_id, attempt))""";

	private static final String LEDGER_INSERT = """
			INSERT INTO shards.ledger (job_id, attempt, worker_pid, shard) VALUES (?, ?, ?, ?)
			ON CONFLICT (job_id, attempt) DO UPDATE SET runs = ledger.runs + 1""";

	private static final long PID = ProcessHandle.current().pid();

	private ShardedWorkerProcess() {
	}

	/** The shards' names, {@code s1}… in the order of their URLs. */
	static Map<String, String> shardNames(List<String> urls) {
		Map<String, String> names = new LinkedHashMap<>();
		for (int i = 0; i < urls.size(); i++) {
			names.put("s" + (i + 1), null);
		}
		return names;
	}

	public static void main(String[] args) throws Exception {
		Map<String, String> options = new LinkedHashMap<>();
		for (String arg : args) {
			int eq = arg.indexOf('=');
			options.put(arg.substring(0, eq), arg.substring(eq + 1));
		}
		List<String> urls = List.of(options.get("shard-urls").split(","));
		String name = options.get("name");
		ShardLayout layout = ShardLayout.of(shardNames(urls));
		QueueSettings queue = QueueSettings.defaults(WorkerProcess.QUEUE)
			.withMode(QueueMode.valueOf(options.getOrDefault("mode", "transactional").toUpperCase(Locale.ROOT)))
			.withConcurrency(Integer.parseInt(options.getOrDefault("concurrency", "2")))
			.withBatchSize(Integer.parseInt(options.getOrDefault("batch-size", "20")))
			.withPollInterval(Duration.ofMillis(200))
			.withLeaseDuration(Duration.ofMillis(Long.parseLong(options.getOrDefault("lease-ms", "3000"))))
			.withAssignment(QueueAssignment.valueOf(options.getOrDefault("assignment", "shared").toUpperCase(Locale.ROOT)));
		Duration work = Duration.ofMillis(Long.parseLong(options.getOrDefault("work-ms", "0")));
		Map<String, JdbcTemplate> ledgers = new LinkedHashMap<>();
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		QueueEngineBuilder builder = QueueEngine.builder()
			.settings(EngineSettings.defaults(SchemaName.of(SCHEMA))
				.withWorkers(new WorkerSettings(Duration.ofSeconds(10), false, false)))
			.queues(new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE), List.of(queue)))
			.handlers(handlers);
		for (int i = 0; i < urls.size(); i++) {
			String shard = layout.shards().get(i);
			HikariDataSource pool = pool(urls.get(i), name, shard, queue.concurrency() + 4);
			ledgers.put(shard, new JdbcTemplate(pool));
			builder.shard(shard, pool, (database) -> database.transactionManager(new DataSourceTransactionManager(pool))
				.closeWith(pool));
		}
		// One handler for every shard: it writes to the ledger of its job's shard, in the job's transaction when it has one.
		handlers.register(new ShardLedgerHandler(ledgers, work));
		QueueEngine engine = builder.build();
		Runtime.getRuntime().addShutdownHook(new Thread(engine::close, "worker-shutdown"));
		engine.start();
		System.out.println(WorkerProcess.READY + ": " + name + " pid " + PID + ", " + urls.size() + " shards, " + queue);
		ProcessHandle.current().parent().ifPresent((parent) -> parent.onExit().thenRun(() -> System.exit(0)));
		new CountDownLatch(1).await();
	}

	private static HikariDataSource pool(String url, String worker, String shard, int size) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url);
		config.setMaximumPoolSize(size);
		config.setMinimumIdle(0);
		config.setConnectionTimeout(2_000);
		config.setPoolName("worker-" + worker + "-" + shard);
		config.addDataSourceProperty("ApplicationName", "shards/" + worker);
		return new HikariDataSource(config);
	}

	/** Records each attempt in the ledger of the job's shard, in the job's transaction when it has one. */
	private record ShardLedgerHandler(Map<String, JdbcTemplate> ledgers, Duration work) implements JobHandler {

		@Override
		public String kind() {
			return WorkerProcess.KIND;
		}

		@Override
		public String queue() {
			return WorkerProcess.QUEUE;
		}

		@Override
		public void handle(Job job) throws InterruptedException {
			if (!this.work.isZero()) {
				Thread.sleep(this.work.toMillis());
			}
			this.ledgers.get(job.shard()).update(LEDGER_INSERT, job.id(), job.attempt(), PID, job.shard());
		}

		@Override
		public String description() {
			return "shard ledger handler";
		}

	}

}
