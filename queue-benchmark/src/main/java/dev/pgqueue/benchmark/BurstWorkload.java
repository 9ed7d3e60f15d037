package dev.pgqueue.benchmark;

import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.QueueMode;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * Workload 6: a burst of jobs all due at the same instant (the nightly-renewals case), drained by
 * several pollers at once, as if by as many application instances: how long each claim takes while
 * they compete for the same index range, and how long the whole burst takes to drain.
 *
 * <p>Each poller runs in transactional mode with one slot and batches of 100; the raw side runs as
 * many loops with the same batch size.
 */
final class BurstWorkload implements Workload {

	static final int BATCH_SIZE = 100;

	@Override
	public String name() {
		return "burst";
	}

	@Override
	public List<Result> run(Context context) {
		Profile profile = context.profile();
		int jobs = profile.burstJobs();
		int pollers = profile.burstPollers();
		List<Result> results = new ArrayList<>();
		try (BenchSchema schema = context.database().createSchema("burst")) {
			HikariDataSource pool = schema.pool("burst", pollers + 2);
			Latencies pgqueueClaims = new Latencies();
			QueueMetrics timing = new QueueMetrics() {
				@Override
				public void pollCycle(String queue, long nanos, int claimed) {
					// The raw side times only claims that found jobs too.
					if (claimed > 0) {
						pgqueueClaims.add(nanos);
					}
				}
			};
			schema.truncate();
			schema.loadAvailable(jobs);
			double pgqueue = Drains.pgqueue(schema, pool,
					DrainWorkload.settings(QueueMode.TRANSACTIONAL, 1, BATCH_SIZE), true, pollers, jobs, timing,
					Drains.TIMEOUT)
				.seconds();
			schema.truncate();
			schema.loadAvailable(jobs);
			Latencies rawClaims = new Latencies();
			double raw = Drains.raw(schema, pool, QueueMode.TRANSACTIONAL, pollers, BATCH_SIZE, jobs, rawClaims,
					Long.MAX_VALUE, Drains.TIMEOUT)
				.seconds();
			String variant = GrowthWorkload.label(jobs) + " due at once, " + pollers + " pollers b=" + BATCH_SIZE;
			context.progress("%-36s drain pgqueue %.2f s raw %.2f s   poll-cycle p99 pgqueue %.2f ms raw %.2f ms",
					variant, pgqueue, raw, pgqueueClaims.percentileMillis(99), rawClaims.percentileMillis(99));
			results.add(Result.lower(name(), variant, "poll-cycle p50", "ms", pgqueueClaims.percentileMillis(50),
					rawClaims.percentileMillis(50), null));
			results.add(Result.lower(name(), variant, "poll-cycle p99", "ms", pgqueueClaims.percentileMillis(99),
					rawClaims.percentileMillis(99), null));
			results.add(Result.lower(name(), variant, "drain time", "s", pgqueue, raw, null));
		}
		return results;
	}

}
