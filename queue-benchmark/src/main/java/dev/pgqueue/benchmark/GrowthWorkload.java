package dev.pgqueue.benchmark;

import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * Workload 5: how the claim statement's cost grows with the table: 10 k, 1 M and 10 M runnable
 * rows, and 10 k runnable beside millions of finished rows kept by a completed retention.
 *
 * <p>One transactional poller (batch 10, claim-and-delete) runs until it has claimed a fixed number
 * of batches; the engine's own poll-cycle timing (the claim statement, from the
 * {@link QueueMetrics#pollCycle} hook) is compared with the same statement timed in the raw loop.
 * Rows are generated in SQL; the table is vacuumed after every load and run, so each side starts
 * from the same clean index.
 */
final class GrowthWorkload implements Workload {

	static final int BATCH_SIZE = 10;

	@Override
	public String name() {
		return "growth";
	}

	@Override
	public List<Result> run(Context context) {
		Profile profile = context.profile();
		List<Result> results = new ArrayList<>();
		List<Integer> sizes = profile.growthRunnable();
		try (BenchSchema schema = context.database().createSchema("growth")) {
			HikariDataSource pool = schema.pool("growth", 3);
			DrainWorkload.warmUp(schema, profile);
			schema.truncate();
			double[] smallest = null;
			double[] largest = null;
			for (int i = 0; i < sizes.size(); i++) {
				int size = sizes.get(i);
				long start = System.nanoTime();
				topUp(schema, size);
				context.progress("%,d runnable rows ready in %.0f s", size, (System.nanoTime() - start) / 1e9);
				double[] claim = measure(context, schema, pool, size, label(size) + " runnable", results);
				if (i == 0) {
					smallest = claim;
					start = System.nanoTime();
					schema.loadCompleted(profile.growthFinished());
					context.progress("%,d finished rows loaded in %.0f s", profile.growthFinished(),
							(System.nanoTime() - start) / 1e9);
					measure(context, schema, pool, size,
							label(size) + " runnable + " + label(profile.growthFinished()) + " finished", results);
					schema.truncate();
				}
				largest = claim;
			}
			results.add(new Result(name(),
					"claim p50 at " + label(sizes.get(sizes.size() - 1)) + " ÷ at " + label(sizes.get(0)),
					"growth factor", "×", largest[0] / smallest[0], largest[1] / smallest[1], Result.RAW, false,
					Target.valueAtMost(2.0)));
		}
		return results;
	}

	/** Loads runnable rows until {@code size} are there. */
	private static void topUp(BenchSchema schema, long size) {
		long missing = size - schema.unfinished();
		if (missing > 0) {
			schema.loadAvailable(missing);
		}
	}

	/**
	 * Times the claim both ways, each starting with {@code size} runnable rows; returns pgqueue's
	 * and the raw p50 in milliseconds.
	 */
	private double[] measure(Context context, BenchSchema schema, HikariDataSource pool, long size, String variant,
			List<Result> results) {
		int claims = context.profile().growthClaims();
		// The first tenth warms the plan cache and the index pages touched.
		int skip = claims / 10;
		Latencies pgqueue = new Latencies();
		QueueMetrics timing = new QueueMetrics() {
			@Override
			public void pollCycle(String queue, long nanos, int claimed) {
				if (claimed > 0) {
					pgqueue.add(nanos);
				}
			}
		};
		QueueSettings settings = PgqueueEngine.settings(QueueMode.TRANSACTIONAL, 1, BATCH_SIZE,
				QueueSettings.DEFAULT_POLL_INTERVAL);
		topUp(schema, size);
		try (PgqueueEngine engine = new PgqueueEngine(pool, schema.name(), settings, true, timing, (job) -> {
		})) {
			JobPoller poller = engine.poller();
			poller.start();
			Drains.awaitTrue(() -> pgqueue.size() >= claims, () -> pgqueue.size() + " of " + claims + " claims");
		}
		schema.vacuum();
		topUp(schema, size);
		Latencies raw = new Latencies();
		Drains.raw(schema, pool, QueueMode.TRANSACTIONAL, 1, BATCH_SIZE, size, raw, claims, Drains.TIMEOUT);
		schema.vacuum();
		topUp(schema, size);
		double[] p50 = { pgqueue.percentileMillis(50, skip), raw.percentileMillis(50, skip) };
		double[] p99 = { pgqueue.percentileMillis(99, skip), raw.percentileMillis(99, skip) };
		context.progress("%-36s claim p50 pgqueue %6.3f ms raw %6.3f ms   p99 pgqueue %6.3f raw %6.3f", variant,
				p50[0], p50[1], p99[0], p99[1]);
		results.add(Result.lower(name(), variant, "claim p50", "ms", p50[0], p50[1], null));
		results.add(Result.lower(name(), variant, "claim p99", "ms", p99[0], p99[1], null));
		return p50;
	}

	static String label(long rows) {
		if (rows >= 1_000_000) {
			return (rows / 1_000_000) + " M";
		}
		if (rows >= 1_000) {
			return (rows / 1_000) + " k";
		}
		return Long.toString(rows);
	}

}
