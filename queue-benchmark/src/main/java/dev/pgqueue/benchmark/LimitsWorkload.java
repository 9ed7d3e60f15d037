package dev.pgqueue.benchmark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.settings.ConcurrencyLimits;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * What concurrency limits cost: the same no-op jobs, spread over {@value #KEYS} concurrency keys,
 * drained by the same queue without limits and with one job per key at a time, beside the raw
 * drain of the same table, in each mode. No-op jobs make the limited claim's extra statements as
 * visible as they can be; real work hides them.
 */
final class LimitsWorkload implements Workload {

	static final int KEYS = 100;

	private static final int CONCURRENCY = 4;

	private static final int BATCH_SIZE = 10;

	@Override
	public String name() {
		return "limits";
	}

	@Override
	public List<Result> run(Context context) {
		Profile profile = context.profile();
		int jobs = Math.max(2_000, profile.warmUpJobs() * 8);
		List<Result> results = new ArrayList<>();
		try (BenchSchema schema = context.database().createSchema("limits")) {
			DrainWorkload.warmUp(schema, profile);
			for (QueueMode mode : DrainWorkload.MODES) {
				results.addAll(measure(context, schema, mode, jobs));
			}
		}
		return results;
	}

	private List<Result> measure(Context context, BenchSchema schema, QueueMode mode, int jobs) {
		HikariDataSource pool = schema.pool("limits", CONCURRENCY + 3);
		Duration cap = context.profile().drainTimeCap().multipliedBy(4);
		QueueSettings plain = DrainWorkload.settings(mode, CONCURRENCY, BATCH_SIZE);
		QueueSettings limited = plain.withLimits(new ConcurrencyLimits(1, false, 0));
		List<Double> plainRates = new ArrayList<>();
		List<Double> limitedRates = new ArrayList<>();
		List<Double> rawRates = new ArrayList<>();
		try {
			for (int round = 0; round < context.profile().rounds(); round++) {
				load(schema, jobs);
				plainRates.add(Drains.pgqueue(schema, pool, plain, DrainWorkload.deletes(mode), 1, jobs,
						QueueMetrics.NONE, cap)
					.rate());
				load(schema, jobs);
				limitedRates.add(Drains.pgqueue(schema, pool, limited, DrainWorkload.deletes(mode), 1, jobs,
						QueueMetrics.NONE, cap)
					.rate());
				load(schema, jobs);
				rawRates.add(Drains.raw(schema, pool, mode, CONCURRENCY, BATCH_SIZE, jobs, null, Long.MAX_VALUE, cap)
					.rate());
			}
		}
		finally {
			schema.release(pool);
		}
		String variant = mode.name().toLowerCase(Locale.ROOT) + " b=" + BATCH_SIZE + " c=" + CONCURRENCY;
		double plainRate = Profile.median(plainRates);
		double limitedRate = Profile.median(limitedRates);
		double rawRate = Profile.median(rawRates);
		context.progress("%-24s without limits %,8.0f jobs/s %-26s per-key 1 of %d keys %,8.0f jobs/s %-26s (%.2f of "
				+ "without) raw %,8.0f jobs/s %s", variant, plainRate, Profile.rounds(plainRates), KEYS, limitedRate,
				Profile.rounds(limitedRates), limitedRate / plainRate, rawRate, Profile.rounds(rawRates));
		return List.of(
				Result.higher(name(), variant + " without limits", "throughput", "jobs/s", plainRate, rawRate, null),
				Result.higher(name(), variant + " per-key 1, " + KEYS + " keys", "throughput", "jobs/s", limitedRate,
						rawRate, null));
	}

	private static void load(BenchSchema schema, int jobs) {
		schema.truncate();
		schema.loadAvailable(jobs);
		schema.assignConcurrencyKeys(KEYS);
	}

}
