package dev.pgqueue.benchmark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * Workload 1: drain pre-enqueued no-op jobs in both modes across batch sizes and concurrency.
 *
 * <p>A run ends when every job is finished or the profile's time cap has passed, whichever comes
 * first; the figure is committed outcomes per second either way, the median of the profile's
 * rounds.
 *
 * <p>Transactional mode deletes each completed job (claim-and-delete: a completed retention of
 * zero); leased mode marks it completed (claim, then the completer's guarded batch completion).
 * Both sides get a pool of concurrency + 2 connections, the least the engine asks for (its poller,
 * completer and background services share the pool with the batches).
 */
final class DrainWorkload implements Workload {

	static final QueueMode[] MODES = { QueueMode.TRANSACTIONAL, QueueMode.LEASED };

	@Override
	public String name() {
		return "drain";
	}

	@Override
	public List<Result> run(Context context) {
		Profile profile = context.profile();
		List<Result> results = new ArrayList<>();
		try (BenchSchema schema = context.database().createSchema("drain")) {
			warmUp(schema, profile);
			for (QueueMode mode : MODES) {
				// -Dpgqueue.bench.drain.modes=transactional drains one mode only.
				String only = System.getProperty("pgqueue.bench.drain.modes");
				if (only != null && !only.contains(mode.name().toLowerCase(Locale.ROOT))) {
					continue;
				}
				// -Dpgqueue.bench.drain.batch-sizes=10 and -Dpgqueue.bench.drain.concurrency=4 narrow the grid.
				for (int batchSize : Profile.only("pgqueue.bench.drain.batch-sizes", profile.drainBatchSizes())) {
					for (int concurrency : Profile.only("pgqueue.bench.drain.concurrency", profile.drainConcurrency())) {
						results.addAll(measure(context, schema, mode, batchSize, concurrency,
								profile.drainJobs(batchSize)));
					}
				}
			}
		}
		return results;
	}

	/** The values of the profile that the system property lists (comma-separated), or all of them. */
	/** Drains a few thousand jobs each way, unmeasured, so that neither side pays for the JIT. */
	static void warmUp(BenchSchema schema, Profile profile) {
		int jobs = profile.warmUpJobs();
		HikariDataSource pool = schema.pool("warm-up", 4);
		for (int round = 0; round < 2; round++) {
			for (QueueMode mode : MODES) {
				schema.truncate();
				schema.loadAvailable(jobs);
				Drains.pgqueue(schema, pool, settings(mode, 2, 10), deletes(mode), 1, jobs, QueueMetrics.NONE,
						profile.drainTimeCap());
				schema.truncate();
				schema.loadAvailable(jobs);
				Drains.raw(schema, pool, mode, 2, 10, jobs, null, Long.MAX_VALUE, profile.drainTimeCap());
			}
		}
		schema.release(pool);
	}

	private List<Result> measure(Context context, BenchSchema schema, QueueMode mode, int batchSize, int concurrency,
			int jobs) {
		// With -Dpgqueue.bench.drain.fixed=true, transactional settings whose batches adapt are also
		// drained at their fixed batch size, as the engine did before batches adapted, in the same rounds.
		QueueSettings settings = settings(mode, concurrency, batchSize);
		boolean compareFixed = Boolean.getBoolean("pgqueue.bench.drain.fixed") && settings.adaptsBatchSize();
		List<Double> fixed = new ArrayList<>();
		// With -Dpgqueue.bench.drain.events=true, the same drain with job events published to a listener
		// and one interceptor around each attempt, in the same rounds.
		boolean compareEvents = Boolean.getBoolean("pgqueue.bench.drain.events");
		List<Double> withEvents = new ArrayList<>();
		HikariDataSource pool = schema.pool("drain", concurrency + 2);
		Duration cap = context.profile().drainTimeCap();
		List<Double> pgqueue = new ArrayList<>();
		List<Double> raw = new ArrayList<>();
		try {
			for (int round = 0; round < context.profile().rounds(); round++) {
				schema.truncate();
				schema.loadAvailable(jobs);
				pgqueue.add(Drains.pgqueue(schema, pool, settings, deletes(mode), 1, jobs, QueueMetrics.NONE, cap).rate());
				if (compareFixed) {
					schema.truncate();
					schema.loadAvailable(jobs);
					fixed.add(Drains.pgqueue(schema, pool, settings.withMaxBatchSize(batchSize), deletes(mode), 1, jobs,
							QueueMetrics.NONE, cap).rate());
				}
				if (compareEvents) {
					schema.truncate();
					schema.loadAvailable(jobs);
					withEvents.add(Drains.pgqueue(schema, pool, settings, deletes(mode), 1, jobs, QueueMetrics.NONE, cap,
							true).rate());
				}
				schema.truncate();
				schema.loadAvailable(jobs);
				raw.add(Drains.raw(schema, pool, mode, concurrency, batchSize, jobs, null, Long.MAX_VALUE, cap).rate());
			}
		}
		finally {
			schema.release(pool);
		}
		String variant = variant(mode, batchSize, concurrency);
		double pgqueueRate = Profile.median(pgqueue);
		double rawRate = Profile.median(raw);
		context.progress("%-24s pgqueue %,8.0f jobs/s %-28s raw %,8.0f jobs/s %-30s %5.2f", variant, pgqueueRate,
				Profile.rounds(pgqueue), rawRate, Profile.rounds(raw), pgqueueRate / rawRate);
		List<Result> results = new ArrayList<>();
		results.add(Result.higher(name(), variant, "throughput", "jobs/s", pgqueueRate, rawRate,
				Target.ratioAtLeast(0.5)));
		if (compareFixed) {
			double fixedRate = Profile.median(fixed);
			context.progress("%-24s fixed batch (before) %,8.0f jobs/s %-28s adaptive ÷ fixed %5.2f", variant, fixedRate,
					Profile.rounds(fixed), pgqueueRate / fixedRate);
			results.add(Result.higher(name(), variant + ", fixed batch (before)", "throughput", "jobs/s", fixedRate,
					rawRate, null));
		}
		if (compareEvents) {
			double eventsRate = Profile.median(withEvents);
			context.progress("%-24s events + interceptor %,8.0f jobs/s %-28s ÷ without %5.2f", variant, eventsRate,
					Profile.rounds(withEvents), eventsRate / pgqueueRate);
			results.add(Result.higher(name(), variant + ", events + interceptor", "throughput", "jobs/s", eventsRate,
					pgqueueRate, Target.ratioAtLeast(0.9)));
		}
		return results;
	}

	static String variant(QueueMode mode, int batchSize, int concurrency) {
		return mode.name().toLowerCase(Locale.ROOT) + " b=" + batchSize + " c=" + concurrency;
	}

	/** The drain's settings: batches start at the batch size and adapt, as an application's do. */
	static QueueSettings settings(QueueMode mode, int concurrency, int batchSize) {
		return PgqueueEngine.settings(mode, concurrency, batchSize, QueueSettings.DEFAULT_POLL_INTERVAL)
			.withMaxBatchSize(Math.max(batchSize, QueueSettings.DEFAULT_MAX_BATCH_SIZE));
	}

	/** Transactional mode is measured against claim-and-delete, leased against claim-then-complete. */
	static boolean deletes(QueueMode mode) {
		return mode == QueueMode.TRANSACTIONAL;
	}

}
