package dev.pgqueue.benchmark;

import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * What two-phase commit costs: no-op jobs drained by a transactional queue of batch size 1 whose
 * every job returns an (empty) external effect, so that each is prepared, then committed, against
 * the same queue without two-phase commit, in the same run. The baseline is pgqueue itself; the
 * ratio is the price of {@code PREPARE TRANSACTION} and {@code COMMIT PREPARED} (each a WAL flush),
 * the worker's lock and its release, and the savepoint around each job.
 */
final class TwoPhaseWorkload implements Workload {

	static final String BASELINE = "one-phase";

	static final int[] CONCURRENCY = { 1, 4 };

	@Override
	public String name() {
		return "two-phase";
	}

	@Override
	public List<Result> run(Context context) {
		Profile profile = context.profile();
		int jobs = profile.drainJobs(1);
		List<Result> results = new ArrayList<>();
		try (BenchSchema schema = context.database().createSchema("twophase")) {
			DrainWorkload.warmUp(schema, profile);
			for (int concurrency : CONCURRENCY) {
				HikariDataSource pool = schema.pool("two-phase", concurrency + 2);
				List<Double> twoPhase = new ArrayList<>();
				List<Double> onePhase = new ArrayList<>();
				try {
					for (int round = 0; round < profile.rounds(); round++) {
						onePhase.add(drain(schema, pool, settings(concurrency, false), jobs, profile));
						twoPhase.add(drain(schema, pool, settings(concurrency, true), jobs, profile));
					}
				}
				finally {
					schema.release(pool);
				}
				String variant = "transactional b=1 c=" + concurrency;
				double twoPhaseRate = Profile.median(twoPhase);
				double onePhaseRate = Profile.median(onePhase);
				context.progress("%-24s two-phase %,8.0f jobs/s %-28s one-phase %,8.0f jobs/s %-28s %5.2f", variant,
						twoPhaseRate, Profile.rounds(twoPhase), onePhaseRate, Profile.rounds(onePhase),
						twoPhaseRate / onePhaseRate);
				results.add(new Result(name(), variant, "throughput", "jobs/s", twoPhaseRate, onePhaseRate, BASELINE,
						true, null));
			}
		}
		return results;
	}

	private static double drain(BenchSchema schema, HikariDataSource pool, QueueSettings settings, int jobs,
			Profile profile) {
		schema.truncate();
		schema.loadAvailable(jobs);
		return Drains.pgqueue(schema, pool, settings, true, 1, jobs, QueueMetrics.NONE, profile.drainTimeCap()).rate();
	}

	private static QueueSettings settings(int concurrency, boolean twoPhase) {
		return DrainWorkload.settings(QueueMode.TRANSACTIONAL, concurrency, 1).withTwoPhaseCommit(twoPhase);
	}

}
