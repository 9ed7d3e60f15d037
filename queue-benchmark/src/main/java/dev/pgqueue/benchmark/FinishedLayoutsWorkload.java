package dev.pgqueue.benchmark;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where finished jobs should go (the question of keeping them in the table claims read): the five
 * layouts of {@link FinishedLayout}, in raw SQL, each in a fresh schema, measured in the same run
 * with their rounds interleaved. Each round enqueues N jobs (multi-row inserts of 500) and drains
 * them with T threads, each loop claiming 100 with {@code FOR UPDATE SKIP LOCKED} and completing them
 * in the same transaction, as transactional mode does; finished jobs stay for the whole run (a
 * retention longer than the run), each round's in an hour of its own. Then, with every round's
 * finished jobs kept, a single thread times the claim statement and the look-up by public id, and
 * one retention cleanup removes the oldest round.
 *
 * <p>Vacuum: the layouts' tables have autovacuum disabled, and the workload runs {@code VACUUM}, then
 * {@code ANALYZE}, of the layout's tables where autovacuum would: after each enqueue, each drain and
 * the cleanup, outside the timed windows, the vacuum timed and its WAL counted apart. A checkpoint precedes each
 * round's enqueue (a drain then runs in the checkpoint cycle its jobs were enqueued in, as jobs that
 * run soon after they are enqueued do) and the cleanup (whose rows are old, so every page it touches
 * pays a full-page image, as on a real server). WAL is the server's: run it on a quiet one.
 */
final class FinishedLayoutsWorkload implements Workload {

	static final String NAME = "finished-layouts";

	/** Every round finishes its jobs in an hour of its own, from here; the claim probes in the hour after the last. */
	private static final OffsetDateTime FIRST_HOUR = OffsetDateTime.of(2030, 1, 1, 1, 0, 0, 0, ZoneOffset.UTC);

	private static final String KEPT_NAME = "kept in the jobs table";

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		Profile.FinishedLayouts sizes = context.profile().finishedLayouts();
		int rounds = sizes.rounds();
		List<OffsetDateTime> hours = new ArrayList<>();
		for (int hour = 0; hour <= rounds; hour++) {
			hours.add(FIRST_HOUR.plusHours(hour));
		}
		context.progress("%,d jobs a round, %d rounds, %d threads claiming %d; finished jobs kept through the run",
				sizes.jobs(), rounds, sizes.threads(), FinishedLayoutRun.CLAIM_BATCH);
		Map<FinishedLayout, FinishedLayoutRun> runs = new EnumMap<>(FinishedLayout.class);
		try {
			for (FinishedLayout layout : FinishedLayout.values()) {
				FinishedLayoutRun run = new FinishedLayoutRun(layout, context.database().createSchema("finished_" + layout.name().toLowerCase(Locale.ROOT)));
				runs.put(layout, run);
				context.progress("%s: autovacuum %s on the server; the layout's tables have it off, VACUUM runs after "
						+ "each enqueue, drain and cleanup", layout.label(), run.setting("autovacuum"));
				run.create(hours, sizes.threads());
				run.probeEmpty(sizes, hours.get(rounds));
			}
			List<FinishedLayout> order = new ArrayList<>(runs.keySet());
			for (int round = 1; round <= rounds; round++) {
				for (FinishedLayout layout : order) {
					runs.get(layout).round(context, round, sizes.jobs(), hours.get(round - 1));
				}
				Collections.rotate(order, 1);
			}
			for (FinishedLayoutRun run : runs.values()) {
				run.afterRounds(context, sizes, hours.get(rounds), hours.get(1));
			}
			return results(context, runs, sizes);
		}
		finally {
			for (FinishedLayoutRun run : runs.values()) {
				run.close();
			}
		}
	}

	private List<Result> results(Context context, Map<FinishedLayout, FinishedLayoutRun> runs, Profile.FinishedLayouts sizes) {
		FinishedLayoutRun kept = runs.get(FinishedLayout.KEPT);
		List<Result> results = new ArrayList<>();
		context.progress("");
		context.progress("%-16s %-22s %-9s %-9s %-9s %-7s %-7s %-7s %-9s %-10s %-10s %-11s %s", "layout", "drain jobs/s",
				"WAL enq", "WAL done", "WAL vac", "vac ms", "heap", "index", "hot MB", "claim µs", "find µs", "cleanup ms",
				"cleanup WAL, vacuum after");
		for (FinishedLayoutRun run : runs.values()) {
			FinishedLayoutRun.Figures f = run.figures(sizes);
			context.progress("%-16s %-22s %-9.0f %-9.0f %-9.0f %-7.0f %-7.0f %-7.0f %-9.1f %-10s %-10s %-11.0f %.1f B/job, %.0f ms + %.1f B/job",
					run.layout.label(), String.format(Locale.ROOT, "%,.0f (%,.0f-%,.0f)", f.drainMedian(), f.drainMin(),
							f.drainMax()), f.enqueueWal(), f.completionWal(), f.vacuumWal(), f.vacuumAfterDrainMillis(), f.heap(), f.index(), f.hotMegabytes(),
					String.format(Locale.ROOT, "%.0f→%.0f", f.claimEmpty(), f.claimKept()),
					Double.isNaN(f.find()) ? "n/a" : String.format(Locale.ROOT, "%.0f", f.find()), f.cleanupMillis(),
					f.cleanupWal(), f.vacuumAfterCleanupMillis(), f.vacuumAfterCleanupWal());
			FinishedLayoutRun.Figures k = kept.figures(sizes);
			String variant = run.layout.label();
			results.add(result(variant, "drain", "jobs/s", f.drainMedian(), k.drainMedian(), true));
			results.add(result(variant, "WAL at enqueue", "B/job", f.enqueueWal(), k.enqueueWal(), false));
			results.add(result(variant, "WAL at completion", "B/job", f.completionWal(), k.completionWal(), false));
			results.add(result(variant, "WAL of vacuums", "B/job", f.vacuumWal(), k.vacuumWal(), false));
			results.add(result(variant, "vacuum after the last drain", "ms", f.vacuumAfterDrainMillis(),
					k.vacuumAfterDrainMillis(), false));
			results.add(result(variant, "hot table after drain", "MB", f.hotMegabytes(), k.hotMegabytes(), false));
			results.add(result(variant, "claim p50, finished kept", "µs", f.claimKept(), k.claimKept(), false));
			results.add(result(variant, "cleanup of N", "ms", f.cleanupMillis(), k.cleanupMillis(), false));
			results.add(result(variant, "cleanup WAL", "B/job", f.cleanupWal(), k.cleanupWal(), false));
			if (!Double.isNaN(f.find())) {
				results.add(result(variant, "find finished by public id p50", "µs", f.find(), k.find(), false));
			}
		}
		context.progress("WAL per job (enqueue, completion, the vacuums of a round); vac ms: the vacuum after the last drain; heap and index: net growth per "
				+ "job kept, after the last vacuum; hot MB: what a claim reads, with its indexes, after the last drain; "
				+ "claim: p50 of the claim statement before the rounds → with every round's finished jobs kept; "
				+ "cleanup: one retention pass over one round's %,d jobs, then the vacuum after it", sizes.jobs());
		return results;
	}

	private static Result result(String variant, String metric, String unit, double value, double kept,
			boolean higherIsBetter) {
		return new Result(NAME, variant, metric, unit, value, kept, KEPT_NAME, higherIsBetter, null);
	}

}
