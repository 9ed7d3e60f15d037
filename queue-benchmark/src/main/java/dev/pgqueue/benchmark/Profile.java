package dev.pgqueue.benchmark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.pgqueue.engine.settings.EngineSettings;

/**
 * How big each workload is. {@code smoke} exercises every workload in well under a minute (for CI,
 * so the harness never rots); {@code full} is the run the targets are judged on and takes minutes,
 * most of them loading ten million rows for the growth and admin workloads.
 *
 * @param name profile name
 * @param warmUpJobs jobs drained (both modes, both implementations) before anything is measured, so
 * that neither side pays for JIT compilation in the figures
 * @param drainBatchSizes batch sizes of the drain workload
 * @param drainConcurrency concurrency levels of the drain workload
 * @param drainJobsPerBatchSize jobs drained per run, indexed like {@code drainBatchSizes} (bigger
 * batches drain faster, so they get more jobs to stay measurable)
 * @param drainTimeCap longest a drain run may take: a slow configuration is measured on the jobs
 * finished by then rather than holding up the whole run
 * @param slowWorkers worker counts of the 20 ms workload
 * @param slowJobDuration how long each job of that workload sleeps
 * @param enqueueThreads producer threads of the enqueue workload
 * @param enqueueBatchSizes jobs per call of the many-per-call enqueue
 * @param steadyRate jobs per second enqueued by the steady-state producers
 * @param growthRunnable runnable-row counts of the growth workload
 * @param growthFinished finished rows kept beside 10 k runnable ones in the growth workload
 * @param growthClaims claim statements timed per growth run
 * @param burstJobs jobs due at the same instant in the burst workload
 * @param burstPollers pollers (as if separate instances) draining the burst
 * @param roundTripJobs jobs drained while counting round trips
 * @param rounds how many times each pair (pgqueue and raw: throughputs, or pickup latencies) is measured; the median of
 * each side is reported, so that a burst of load from elsewhere on a shared machine moves one round
 * rather than the result
 * @param warmUp unmeasured time at the start of a timed run
 * @param measure measured time of a timed run
 * @param userPath sizes of the user-path workload
 * @param soak sizes of the soak workload
 * @param buckets sizes of the bucket workloads (and of the burst's timing)
 * @param ticks sizes of the unique workload's tick pass
 * @param adminFinishedRows finished jobs (completed, failed, cancelled) the admin workload searches
 * @param finishedLayouts sizes of the finished-layouts workload
 */
public record Profile(String name, int warmUpJobs, List<Integer> drainBatchSizes, List<Integer> drainConcurrency,
		List<Integer> drainJobsPerBatchSize, Duration drainTimeCap, List<Integer> slowWorkers, Duration slowJobDuration,
		List<Integer> enqueueThreads, List<Integer> enqueueBatchSizes, int steadyRate, List<Integer> growthRunnable,
		int growthFinished, int growthClaims, int burstJobs, int burstPollers, int roundTripJobs, int rounds,
		Duration warmUp,
		Duration measure, UserPath userPath, Soak soak, Buckets buckets, Ticks ticks, int adminFinishedRows,
		FinishedLayouts finishedLayouts) {

	public static Profile smoke() {
		return new Profile("smoke", 500, List.of(1, 100), List.of(1, 4), List.of(300, 1_000), Duration.ofSeconds(2),
				List.of(10, 50), Duration.ofMillis(20), List.of(1, 4), List.of(100), 200, List.of(1_000, 20_000),
				20_000, 60, 3_000, 8, 300, 1, Duration.ofMillis(200), Duration.ofMillis(600),
				new UserPath(1, 500, 2_000, List.of(100), List.of(2), List.of(100), List.of(4), List.of(1, 2)),
				new Soak(200, Duration.ofSeconds(1), Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofSeconds(1),
						List.of(1), 0),
				new Buckets(Duration.ofSeconds(1), Duration.ofMillis(500), Duration.ofMillis(500), List.of(1, 2), 3_000,
						2, 1_000, List.of(Duration.ofMillis(500)), 1, 0, 1),
				new Ticks(2_000, 200), 200_000, new FinishedLayouts(2_000, 2, 2, 500));
	}

	public static Profile full() {
		return new Profile("full", 5_000, List.of(1, 10, 100, 500), List.of(1, 2, 4, 8),
				List.of(5_000, 20_000, 100_000, 200_000), Duration.ofSeconds(8), List.of(10, 50, 200),
				Duration.ofMillis(20), List.of(1, 4), List.of(100, 1_000), 1_000,
				List.of(10_000, 1_000_000, 10_000_000), 5_000_000, 500, 200_000, 8, 4_000, 3, Duration.ofSeconds(1),
				Duration.ofSeconds(5), new UserPath(4, 200_000, 200_000, List.of(100, 500), List.of(1, 2, 4),
						List.of(100, 500), List.of(4, 8, 16), List.of(1, 2, 4, 8)),
				new Soak(800, Duration.ofSeconds(30), Duration.ofMinutes(5), Duration.ofSeconds(60),
						Duration.ofSeconds(15), List.of(1, 2, 3, 4), 0),
				new Buckets(Duration.ofSeconds(8), Duration.ofSeconds(5), EngineSettings.DEFAULT_HEARTBEAT_INTERVAL,
						List.of(1, 2, 4), 200_000, 4, 20_000,
						List.of(Duration.ofMillis(500), EngineSettings.DEFAULT_HEARTBEAT_INTERVAL), 3, 0, 1),
				new Ticks(10_000, 1_000), 10_000_000, new FinishedLayouts(100_000, 5, 4, 5_000));
	}

	public static Profile named(String name) {
		return switch (name.toLowerCase(Locale.ROOT)) {
			case "smoke" -> smoke();
			case "full" -> full();
			default -> throw new IllegalArgumentException("Unknown profile '" + name + "'; use smoke or full");
		};
	}

	/** The median of a round's figures. */
	static double median(List<Double> figures) {
		List<Double> sorted = figures.stream().sorted().toList();
		int middle = sorted.size() / 2;
		return (sorted.size() % 2 == 1) ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
	}

	/** Figures of all rounds, for progress lines. */
	static String rounds(List<Double> figures) {
		return figures.stream().map((figure) -> String.format(Locale.ROOT, "%,.0f", figure)).toList().toString();
	}

	/**
	 * Sizes of the user-path workload: a Spring Boot application with the starter against pgbench.
	 *
	 * @param warmUpRounds drains the application runs, unmeasured, before the measured one, in the
	 * same JVM: its JIT keeps compiling for hundreds of thousands of jobs
	 * @param warmUpJobs jobs of each warm-up drain
	 * @param jobs jobs preloaded for every measured drain, by the application and by pgbench alike
	 * @param transactionalBatchSizes batch sizes tried in transactional mode
	 * @param transactionalConcurrency concurrency levels tried in transactional mode
	 * @param leasedBatchSizes batch sizes tried in leased mode
	 * @param leasedConcurrency concurrency levels tried in leased mode
	 * @param pgbenchClients client counts of the pgbench baselines
	 */
	public record UserPath(int warmUpRounds, int warmUpJobs, int jobs, List<Integer> transactionalBatchSizes,
			List<Integer> transactionalConcurrency, List<Integer> leasedBatchSizes, List<Integer> leasedConcurrency,
			List<Integer> pgbenchClients) {

	}

	/**
	 * Sizes of the soak workload: a steady load while another session holds a snapshot.
	 *
	 * @param rate jobs per second offered, by two producers, one job per transaction
	 * @param before time under load before the snapshot is taken
	 * @param hold how long the snapshot is held
	 * @param after time under load after it is released
	 * @param window length of each reported window
	 * @param variants which of the workload's variants run, by number from 1 (1 is the default
	 * transactional queue)
	 * @param neighbours CPU-bound processes (shell busy loops) running beside every run, as other work
	 * on the same machine would
	 */
	public record Soak(int rate, Duration before, Duration hold, Duration after, Duration window,
			List<Integer> variants, int neighbours) {

	}

	/**
	 * Sizes of the workloads that compare bucket assignment with shared claims, and of the burst.
	 *
	 * @param burstLead how far ahead of its common run-at the burst is enqueued (it must be loaded
	 * and vacuumed by then)
	 * @param burstJitter the jitter of the burst's jittered variant
	 * @param heartbeat heartbeat interval of the coordinator in the burst and scaling workloads
	 * @param processes worker process counts of the scaling workload
	 * @param scalingJobs jobs landing at once in each scaling drain
	 * @param rebalanceProcesses worker processes of the rebalance workload, one of which is killed
	 * @param rebalanceJobs jobs enqueued right after the kill
	 * @param rebalanceHeartbeats heartbeat intervals the rebalance workload tries
	 * @param rebalanceRounds kills per heartbeat interval
	 * @param scalingNeighbours CPU-bound processes (shell busy loops) running beside the scaling
	 * workload's drains, as other work on the same machine would
	 * @param scalingDrains drains of each assignment in one round of the scaling workload, in mirrored
	 * order (with 2: shared, buckets, buckets, shared), so that a drift of the machine over the round
	 * weighs on both alike
	 */
	public record Buckets(Duration burstLead, Duration burstJitter, Duration heartbeat, List<Integer> processes,
			int scalingJobs, int rebalanceProcesses, int rebalanceJobs, List<Duration> rebalanceHeartbeats,
			int rebalanceRounds, int scalingNeighbours, int scalingDrains) {

	}

	/**
	 * Sizes of the tick pass of the unique workload: schedules in the table, and how many of them are
	 * due (spread evenly among the others, whose next tick is a year away).
	 *
	 * @param schedules schedules in the table
	 * @param due schedules due when a round starts; divides {@code schedules}
	 */
	public record Ticks(int schedules, int due) {

		public Ticks {
			if (due < 1 || schedules % due != 0) {
				throw new IllegalArgumentException("due must divide schedules: " + due + " of " + schedules);
			}
		}

	}

	/**
	 * Sizes of the finished-layouts workload.
	 *
	 * @param jobs jobs enqueued and drained in each round, by each layout
	 * @param rounds rounds; every round's finished jobs are kept until the cleanup at the end
	 * @param threads threads draining, each on a connection of its own
	 * @param probeJobs jobs claimed by one thread when the claim statement is timed, before the rounds
	 * and after them
	 */
	public record FinishedLayouts(int jobs, int rounds, int threads, int probeJobs) {

		public FinishedLayouts {
			if (rounds < 2) {
				throw new IllegalArgumentException("finished-layouts needs 2 rounds or more (the cleanup removes the "
						+ "first), not " + rounds);
			}
		}

	}

	/**
	 * This profile with the scaling workload's process counts ({@code null}: the profile's), CPU-bound
	 * neighbours and drains of each assignment per round given.
	 */
	public Profile withScaling(List<Integer> processes, int neighbours, int drains) {
		Buckets b = this.buckets;
		return with(this.rounds, this.soak, new Buckets(b.burstLead(), b.burstJitter(), b.heartbeat(),
				(processes != null) ? processes : b.processes(), b.scalingJobs(), b.rebalanceProcesses(),
				b.rebalanceJobs(), b.rebalanceHeartbeats(), b.rebalanceRounds(), neighbours, drains));
	}

	/** This profile with every workload measured over the given number of rounds. */
	public Profile withRounds(int rounds) {
		return with(rounds, this.soak, this.buckets);
	}

	/** This profile with only the given soak variants. */
	public Profile withSoakVariants(List<Integer> variants) {
		Soak s = this.soak;
		return with(this.rounds,
				new Soak(s.rate(), s.before(), s.hold(), s.after(), s.window(), variants, s.neighbours()), this.buckets);
	}

	/**
	 * This profile with the soak's phases lasting as given (each a whole number of windows), and
	 * {@code neighbours} busy loops beside it.
	 */
	public Profile withSoak(Duration before, Duration hold, Duration after, int neighbours) {
		Soak s = this.soak;
		for (Duration phase : List.of(before, hold, after)) {
			if (phase.isNegative() || phase.toMillis() % s.window().toMillis() != 0) {
				throw new IllegalArgumentException("Each soak phase must be a whole number of "
						+ s.window().toSeconds() + " s windows, not " + phase.toSeconds() + " s");
			}
		}
		return with(this.rounds, new Soak(s.rate(), before, hold, after, s.window(), s.variants(), neighbours),
				this.buckets);
	}

	private Profile with(int rounds, Soak soak, Buckets buckets) {
		return new Profile(this.name, this.warmUpJobs, this.drainBatchSizes, this.drainConcurrency,
				this.drainJobsPerBatchSize, this.drainTimeCap, this.slowWorkers, this.slowJobDuration,
				this.enqueueThreads, this.enqueueBatchSizes, this.steadyRate, this.growthRunnable, this.growthFinished,
				this.growthClaims, this.burstJobs, this.burstPollers, this.roundTripJobs, rounds, this.warmUp,
				this.measure, this.userPath, soak, buckets, this.ticks, this.adminFinishedRows,
				this.finishedLayouts);
	}

	/** Jobs drained by one run of the drain workload at this batch size. */
	public int drainJobs(int batchSize) {
		return this.drainJobsPerBatchSize.get(this.drainBatchSizes.indexOf(batchSize));
	}

	/** How long the deep-backlog workload measures each side per round (after a fifth of it to settle). */
	Duration deepBacklogWindow() {
		return "smoke".equals(this.name) ? Duration.ofSeconds(1) : Duration.ofSeconds(10);
	}

	/**
	 * The values of a profile's grid that a system property keeps, for a narrower run: all of them
	 * when the property is unset, else those it lists (comma-separated) that the grid has.
	 */
	static List<Integer> only(String property, List<Integer> values) {
		String listed = System.getProperty(property);
		if (listed == null || listed.isBlank()) {
			return values;
		}
		List<Integer> kept = new ArrayList<>();
		for (String value : listed.split(",")) {
			int parsed = Integer.parseInt(value.trim());
			if (values.contains(parsed)) {
				kept.add(parsed);
			}
		}
		return kept;
	}

}
