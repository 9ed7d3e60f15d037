package dev.pgqueue.benchmark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.settings.KeyFairness;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * What fairness across keys costs: the same no-op jobs, spread round robin over {@value #TENANTS}
 * concurrency keys, drained by the same queue in its plain order and with {@code fair-by-key}, beside
 * the raw drain of the same table, in each mode, at the queue defaults (which most queues run). The
 * two pgqueue drains swap places every other round. A fair claim reads each key's next jobs from the
 * index of due jobs by key, one lateral read per key in its turn, and reads the ring of keys again
 * after every round; no-op jobs make that as visible as it can be.
 */
final class FairnessWorkload implements Workload {

	static final int TENANTS = 100;

	private static final int CONCURRENCY = QueueSettings.DEFAULT_CONCURRENCY;

	@Override
	public String name() {
		return "fairness";
	}

	@Override
	public List<Result> run(Context context) {
		Profile profile = context.profile();
		int jobs = Math.max(2_000, profile.warmUpJobs() * 8);
		List<Result> results = new ArrayList<>();
		try (BenchSchema schema = context.database().createSchema("fair")) {
			DrainWorkload.warmUp(schema, profile);
			warmUpFair(schema, profile);
			for (QueueMode mode : DrainWorkload.MODES) {
				results.addAll(measure(context, schema, mode, jobs));
			}
		}
		return results;
	}

	private static void warmUpFair(BenchSchema schema, Profile profile) {
		int jobs = profile.warmUpJobs();
		HikariDataSource pool = schema.pool("fair-warm-up", CONCURRENCY + 3);
		try {
			for (int round = 0; round < 2; round++) {
				for (QueueMode mode : DrainWorkload.MODES) {
					load(schema, jobs);
					Drains.pgqueue(schema, pool, fair(mode), DrainWorkload.deletes(mode), 1, jobs, QueueMetrics.NONE,
							profile.drainTimeCap());
				}
			}
		}
		finally {
			schema.release(pool);
		}
	}

	private List<Result> measure(Context context, BenchSchema schema, QueueMode mode, int jobs) {
		HikariDataSource pool = schema.pool("fair", CONCURRENCY + 3);
		Duration cap = context.profile().drainTimeCap().multipliedBy(4);
		boolean deletes = DrainWorkload.deletes(mode);
		QueueSettings plain = QueueSettings.defaults(BenchSchema.QUEUE).withMode(mode);
		QueueSettings fair = fair(mode);
		List<Double> plainRates = new ArrayList<>();
		List<Double> fairRates = new ArrayList<>();
		List<Double> rawRates = new ArrayList<>();
		try {
			for (int round = 0; round < context.profile().rounds(); round++) {
				boolean fairFirst = round % 2 == 1;
				if (fairFirst) {
					fairRates.add(drain(schema, pool, fair, deletes, jobs, cap));
				}
				plainRates.add(drain(schema, pool, plain, deletes, jobs, cap));
				if (!fairFirst) {
					fairRates.add(drain(schema, pool, fair, deletes, jobs, cap));
				}
				load(schema, jobs);
				rawRates.add(Drains.raw(schema, pool, mode, CONCURRENCY, QueueSettings.DEFAULT_BATCH_SIZE, jobs, null,
						Long.MAX_VALUE, cap).rate());
			}
		}
		finally {
			schema.release(pool);
		}
		String variant = DrainWorkload.variant(mode, QueueSettings.DEFAULT_BATCH_SIZE, CONCURRENCY) + " (defaults)";
		double plainRate = Profile.median(plainRates);
		double fairRate = Profile.median(fairRates);
		double rawRate = Profile.median(rawRates);
		context.progress("%-32s plain order %,8.0f jobs/s %-30s fair over %d keys %,8.0f jobs/s %-30s (%.2f of plain) "
				+ "raw %,8.0f jobs/s %s", variant, plainRate, Profile.rounds(plainRates), TENANTS, fairRate,
				Profile.rounds(fairRates), fairRate / plainRate, rawRate, Profile.rounds(rawRates));
		String fairVariant = variant + ", fair-by-key over " + TENANTS + " keys";
		return List.of(Result.higher(name(), variant + ", plain order", "throughput", "jobs/s", plainRate, rawRate, null),
				Result.higher(name(), fairVariant, "throughput", "jobs/s", fairRate, rawRate, null),
				new Result(name(), fairVariant, "throughput", "jobs/s", fairRate, plainRate, "pgqueue in plain order",
						true, Target.ratioAtLeast(0.7)));
	}

	private static double drain(BenchSchema schema, HikariDataSource pool, QueueSettings settings, boolean deletes,
			int jobs, Duration cap) {
		load(schema, jobs);
		return Drains.pgqueue(schema, pool, settings, deletes, 1, jobs, QueueMetrics.NONE, cap).rate();
	}

	private static QueueSettings fair(QueueMode mode) {
		return QueueSettings.defaults(BenchSchema.QUEUE).withMode(mode).withFairness(KeyFairness.EQUAL);
	}

	private static void load(BenchSchema schema, int jobs) {
		schema.truncate();
		schema.loadAvailable(jobs);
		schema.assignConcurrencyKeys(TENANTS);
	}

}
