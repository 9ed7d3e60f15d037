package dev.pgqueue.benchmark;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.QueueAssignment;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.buckets.BucketScope;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.SchemaName;

/**
 * A worker instance in a JVM of its own, for the scaling and rebalance workloads: one transactional
 * poller of the benchmark queue, wired as {@link PgqueueEngine} wires it, on a pool of its own, and
 * the statistics refresher an application runs beside it.
 * Prints {@code OWNER <member>} once started and {@code BUCKETS <n>} whenever the number of buckets it
 * owns changes; stops softly when its stdin says {@code stop} or closes (it may also be killed).
 *
 * <p>Arguments: JDBC URL, user (or {@code -}), schema, {@code shared} or {@code buckets}, heartbeat
 * in ms, concurrency, batch size, poll interval in ms. The password, if any, comes from
 * {@code PGQUEUE_BENCH_PASSWORD}.
 */
public final class QueueWorkerMain {

	private QueueWorkerMain() {
	}

	public static void main(String[] args) throws Exception {
		String url = args[0];
		String user = args[1];
		SchemaName schema = SchemaName.of(args[2]);
		QueueAssignment assignment = QueueAssignment.valueOf(args[3].toUpperCase(java.util.Locale.ROOT));
		Duration heartbeat = Duration.ofMillis(Long.parseLong(args[4]));
		int concurrency = Integer.parseInt(args[5]);
		int batchSize = Integer.parseInt(args[6]);
		Duration pollInterval = Duration.ofMillis(Long.parseLong(args[7]));

		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url);
		if (!"-".equals(user)) {
			config.setUsername(user);
		}
		config.setPassword(System.getenv("PGQUEUE_BENCH_PASSWORD"));
		config.setSchema(schema.value());
		config.setMaximumPoolSize(concurrency + 2);
		config.setMinimumIdle(concurrency + 2);
		config.setPoolName("worker");
		config.addDataSourceProperty("ApplicationName", QueueWorkerProcess.APPLICATION_NAME);
		QueueSettings settings = PgqueueEngine
			.settings(QueueMode.TRANSACTIONAL, concurrency, batchSize, pollInterval)
			.withAssignment(assignment);
		try (HikariDataSource pool = new HikariDataSource(config);
				PgqueueEngine engine = new PgqueueEngine(pool, schema, settings, true, QueueMetrics.NONE, (job) -> {
				}).withHeartbeatInterval(heartbeat)) {
			JobPoller poller = engine.poller();
			poller.start();
			// As in an application: without it, a drain that lands on a table vacuumed empty runs on
			// plans made for an empty table until the next analyze.
			engine.statisticsRefresher().start();
			System.out.println("OWNER " + poller.owner());
			System.out.flush();
			Thread reporter = new Thread(() -> reportBuckets(poller), "bucket-reporter");
			reporter.setDaemon(true);
			if (assignment == QueueAssignment.BUCKETS) {
				reporter.start();
			}
			BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			for (String line = commands.readLine(); line != null && !line.equals("stop"); line = commands.readLine()) {
				// Nothing else is asked of a worker.
			}
		}
		System.exit(0);
	}

	private static void reportBuckets(JobPoller poller) {
		int last = -1;
		while (true) {
			int now = ((BucketScope) poller.scope()).buckets().length;
			if (now != last) {
				System.out.println("BUCKETS " + now);
				System.out.flush();
				last = now;
			}
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				return;
			}
		}
	}

}
