package dev.pgqueue.benchmark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * What a rate limit costs when it holds nothing back: the same no-op jobs drained by the same queue
 * without a limit and with a limit of {@value #STARTS} starts a second, far above any rate a drain
 * reaches here, beside the raw drain of the same table, in each mode. Under a limit every claim first
 * reserves starts from the limit's window row, in a short transaction of its own, and gives back in
 * another those it did not use; the claims record the grant's instant as their jobs' start. No-op jobs
 * make that work as visible as it can be; real work hides it.
 *
 * <p>A third side sets the same limit per concurrency key instead, over jobs spread round robin over
 * {@value #KEYS} keys (all three sides drain the same keyed jobs): its claims read their candidates,
 * reserve every key's window at one instant, and take the jobs chosen, the path of every limit that
 * depends on the job (per kind, per key, weights).
 *
 * <p>Measured at the queue defaults (concurrency {@value QueueSettings#DEFAULT_CONCURRENCY}, batch
 * size {@value QueueSettings#DEFAULT_BATCH_SIZE}), which most queues run, and at batch size
 * {@value #LARGE_BATCH}, where one reservation can cover more jobs. The order of the drains with and
 * without a limit alternates from round to round. After the measured rounds, an untimed drain of each side counts the calls that wait
 * on the server per job.
 */
final class RateLimitsWorkload implements Workload {

	/** Starts per {@link #PERIOD}: the limit's window never refuses a claim of these drains. */
	static final int STARTS = 10_000_000;

	static final Duration PERIOD = Duration.ofSeconds(1);

	static final int LARGE_BATCH = 100;

	static final String WITHOUT_LIMIT = "pgqueue without limit";

	private static final String LIMITED = "rate limit 10 M/s";

	private static final String PER_KEY = "per-key rate limit 10 M/s, 100 keys";

	static final int KEYS = 100;

	private static final int CONCURRENCY = QueueSettings.DEFAULT_CONCURRENCY;

	@Override
	public String name() {
		return "rate-limits";
	}

	@Override
	public List<Result> run(Context context) {
		Profile profile = context.profile();
		int jobs = Math.max(2_000, profile.warmUpJobs() * 8);
		List<Result> results = new ArrayList<>();
		try (BenchSchema schema = context.database().createSchema("rate")) {
			DrainWorkload.warmUp(schema, profile);
			warmUpLimited(schema, profile);
			for (QueueMode mode : DrainWorkload.MODES) {
				for (int batchSize : new int[] { QueueSettings.DEFAULT_BATCH_SIZE, LARGE_BATCH }) {
					results.addAll(measure(context, schema, mode, batchSize, jobs));
				}
			}
		}
		return results;
	}

	/** The plain drains are warmed by the drain workload's warm-up; the reservations' path here. */
	private static void warmUpLimited(BenchSchema schema, Profile profile) {
		int jobs = profile.warmUpJobs();
		HikariDataSource pool = schema.pool("rate-warm-up", CONCURRENCY + 3);
		try {
			for (int round = 0; round < 2; round++) {
				for (QueueMode mode : DrainWorkload.MODES) {
					QueueSettings limited = limited(settings(mode, QueueSettings.DEFAULT_BATCH_SIZE));
					for (QueueSettings settings : List.of(limited, limited.withRateLimit(null)
						.withPerKeyRateLimit(new RateLimit(STARTS, PERIOD)))) {
						load(schema, jobs);
						Drains.pgqueue(schema, pool, settings, DrainWorkload.deletes(mode), 1, jobs, QueueMetrics.NONE,
								profile.drainTimeCap());
					}
				}
			}
		}
		finally {
			schema.release(pool);
		}
	}

	private List<Result> measure(Context context, BenchSchema schema, QueueMode mode, int batchSize, int jobs) {
		Profile profile = context.profile();
		HikariDataSource pool = schema.pool("rate", CONCURRENCY + 3);
		Duration cap = profile.drainTimeCap().multipliedBy(4);
		boolean deletes = DrainWorkload.deletes(mode);
		QueueSettings plain = settings(mode, batchSize);
		QueueSettings limited = limited(plain);
		QueueSettings perKey = plain.withPerKeyRateLimit(new RateLimit(STARTS, PERIOD));
		List<Double> plainRates = new ArrayList<>();
		List<Double> limitedRates = new ArrayList<>();
		List<Double> perKeyRates = new ArrayList<>();
		List<Double> rawRates = new ArrayList<>();
		String calls;
		try {
			for (int round = 0; round < profile.rounds(); round++) {
				boolean limitedFirst = round % 2 == 1;
				if (limitedFirst) {
					limitedRates.add(drain(schema, pool, limited, deletes, jobs, cap));
					perKeyRates.add(drain(schema, pool, perKey, deletes, jobs, cap));
				}
				plainRates.add(drain(schema, pool, plain, deletes, jobs, cap));
				if (!limitedFirst) {
					limitedRates.add(drain(schema, pool, limited, deletes, jobs, cap));
					perKeyRates.add(drain(schema, pool, perKey, deletes, jobs, cap));
				}
				load(schema, jobs);
				rawRates.add(Drains.raw(schema, pool, mode, CONCURRENCY, batchSize, jobs, null, Long.MAX_VALUE, cap)
					.rate());
			}
			calls = calls(schema, pool, List.of(plain, limited, perKey), deletes, profile.roundTripJobs());
		}
		finally {
			schema.release(pool);
		}
		String variant = DrainWorkload.variant(mode, batchSize, CONCURRENCY)
				+ ((batchSize == QueueSettings.DEFAULT_BATCH_SIZE) ? " (defaults)" : "");
		double plainRate = Profile.median(plainRates);
		double limitedRate = Profile.median(limitedRates);
		double perKeyRate = Profile.median(perKeyRates);
		double rawRate = Profile.median(rawRates);
		context.progress("%-32s without limit %,8.0f jobs/s %-34s limit %,d/s %,8.0f jobs/s %-34s (%.2f of without) "
				+ "per key %,8.0f jobs/s %-34s (%.2f of without) raw %,8.0f jobs/s %s", variant, plainRate,
				range(plainRates), STARTS, limitedRate, range(limitedRates), limitedRate / plainRate, perKeyRate,
				range(perKeyRates), perKeyRate / plainRate, rawRate, range(rawRates));
		List<Result> results = new ArrayList<>();
		results.add(Result.higher(name(), variant + ", without limit", "throughput", "jobs/s", plainRate, rawRate, null));
		results.add(Result.higher(name(), variant + ", " + LIMITED, "throughput", "jobs/s", limitedRate,
				rawRate, null));
		results.add(new Result(name(), variant + ", " + LIMITED, "throughput", "jobs/s", limitedRate,
				plainRate, WITHOUT_LIMIT, true, Target.ratioAtLeast(0.8)));
		results.add(Result.higher(name(), variant + ", " + PER_KEY, "throughput", "jobs/s", perKeyRate, rawRate, null));
		results.add(new Result(name(), variant + ", " + PER_KEY, "throughput", "jobs/s", perKeyRate, plainRate,
				WITHOUT_LIMIT, true, Target.ratioAtLeast(0.8)));
		context.progress("%-32s %s", "", calls);
		return results;
	}

	private static double drain(BenchSchema schema, HikariDataSource pool, QueueSettings settings, boolean deletes,
			int jobs, Duration cap) {
		load(schema, jobs);
		return Drains.pgqueue(schema, pool, settings, deletes, 1, jobs, QueueMetrics.NONE, cap).rate();
	}

	/**
	 * Untimed: drains {@code jobs} jobs without and with the limit through a counting data source,
	 * and says how many calls wait on the server per job on each side.
	 */
	private static String calls(BenchSchema schema, HikariDataSource pool, List<QueueSettings> sides, boolean deletes,
			int jobs) {
		CountingDataSource counting = new CountingDataSource(pool);
		StringBuilder line = new StringBuilder("calls that wait on the server per job:");
		for (QueueSettings settings : sides) {
			load(schema, jobs);
			counting.reset();
			Drains.pgqueue(schema, counting, settings, deletes, 1, jobs, QueueMetrics.NONE, Drains.TIMEOUT);
			Map<String, Long> byMethod = counting.byMethod();
			String side = (settings.perKeyRateLimit() != null) ? "per key"
					: (settings.rateLimit() != null) ? "limited" : "without limit";
			line.append(String.format(Locale.ROOT, " %s %.2f %s;", side, counting.total() / (double) jobs, byMethod));
		}
		return line.substring(0, line.length() - 1);
	}

	/** Loads the jobs of one drain, spread round robin over the keys. */
	private static void load(BenchSchema schema, int jobs) {
		schema.truncate();
		schema.loadAvailable(jobs);
		schema.assignConcurrencyKeys(KEYS);
	}

	/** The queue's defaults but for the mode and the batch size. */
	private static QueueSettings settings(QueueMode mode, int batchSize) {
		QueueSettings defaults = QueueSettings.defaults(BenchSchema.QUEUE).withMode(mode);
		return (batchSize == defaults.batchSize()) ? defaults : defaults.withBatchSize(batchSize);
	}

	private static QueueSettings limited(QueueSettings settings) {
		return settings.withRateLimit(RateLimit.of(settings.name(), STARTS, PERIOD, settings.pollInterval()));
	}

	/** The lowest and the highest round, then every round in the order run. */
	private static String range(List<Double> rates) {
		double low = rates.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
		double high = rates.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
		return String.format(Locale.ROOT, "%,.0f–%,.0f %s", low, high, Profile.rounds(rates));
	}

}
