package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.pgqueue.QueueAssignment;

/**
 * Shared claims against bucket assignment as worker instances are added: 1, 2, 4 worker processes
 * (real JVMs, {@link QueueWorkerMain}), each with one transactional poller (concurrency 2, batch 100,
 * polling every 10 ms when idle), drain jobs that land at once with one commit. Reports jobs per
 * second, each process's efficiency (jobs per second per process relative to one process of the
 * same assignment), and jobs per CPU-second of the server, which carries to machines with more
 * cores than this one better than the jobs per second do.
 *
 * <p>The processes are started, and for buckets given their shares, before the jobs land; the time
 * runs from the insert's commit until no job is left. At each process count both assignments' processes
 * run side by side, each on its own schema; each drains once unmeasured (the workers' JIT), then every
 * round drains one assignment and then the other, so that the ratio of a round compares drains
 * seconds apart on the same machine. The medians are reported.
 */
final class ScalingWorkload implements Workload {

	static final int CONCURRENCY = 2;

	static final int BATCH_SIZE = 100;

	static final Duration POLL_INTERVAL = Duration.ofMillis(10);

	/** How long after a drain its claims' counts reach the statistics views. */
	private static final long STATISTICS_DELAY_MILLIS = 1_100;

	@Override
	public String name() {
		return "scaling";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		Profile profile = context.profile();
		Profile.Buckets sizes = profile.buckets();
		Map<QueueAssignment, Map<Integer, Figures>> figures = new LinkedHashMap<>();
		try (BenchSchema shared = context.database().createSchema("scaling_shared");
				BenchSchema buckets = context.database().createSchema("scaling_buckets");
				Connection observer = context.database().connect();
				CpuNeighbours neighbours = CpuNeighbours.start(sizes.scalingNeighbours())) {
			if (neighbours.count() > 0) {
				context.progress("%d CPU-bound neighbour process(es) running beside every drain", neighbours.count());
			}
			buckets.bucketClaims();
			Map<QueueAssignment, BenchSchema> schemas = new EnumMap<>(QueueAssignment.class);
			schemas.put(QueueAssignment.SHARED, shared);
			schemas.put(QueueAssignment.BUCKETS, buckets);
			for (int processes : sizes.processes()) {
				measure(context, schemas, observer, processes).forEach((assignment, measured) -> figures
					.computeIfAbsent(assignment, (a) -> new LinkedHashMap<>()).put(processes, measured));
			}
		}
		List<Result> results = new ArrayList<>();
		Map<Integer, Figures> shared = figures.get(QueueAssignment.SHARED);
		Map<Integer, Figures> buckets = figures.get(QueueAssignment.BUCKETS);
		int first = sizes.processes().get(0);
		for (int processes : sizes.processes()) {
			Figures s = shared.get(processes);
			Figures b = buckets.get(processes);
			String variant = processes + " process" + ((processes > 1) ? "es" : "") + ", "
					+ GrowthWorkload.label(sizes.scalingJobs()) + " jobs at once";
			results.add(new Result(name(), variant, "throughput, buckets vs shared", "jobs/s", b.rate(), s.rate(),
					"shared claims", true, null));
			double bEfficiency = b.rate() / processes / (buckets.get(first).rate() / first);
			double sEfficiency = s.rate() / processes / (shared.get(first).rate() / first);
			results.add(new Result(name(), variant, "per-process efficiency", "×", bEfficiency, sEfficiency,
					"shared claims", true, null));
			results.add(new Result(name(), variant, "claim index entries read per claim of " + BATCH_SIZE, "entries",
					b.entriesPerClaim(), s.entriesPerClaim(), "shared claims", false, null));
			if (Double.isFinite(b.jobsPerServerSecond()) && Double.isFinite(s.jobsPerServerSecond())) {
				results.add(new Result(name(), variant, "jobs per server CPU-second", "jobs", b.jobsPerServerSecond(),
						s.jobsPerServerSecond(), "shared claims", true, null));
			}
			context.progress("%d process(es): shared %,.0f jobs/s %s (efficiency %.2f, %,.0f jobs per server "
					+ "CPU-second, server %.2f cores, workers %.2f cores, %,.0f entries read per claim %s); buckets "
					+ "%,.0f jobs/s %s (efficiency %.2f, %,.0f jobs per server CPU-second, server %.2f cores, workers "
					+ "%.2f cores, %,.0f entries read per claim %s); shared ÷ buckets %.2f, rounds %s, worst round %.2f; "
					+ "read the other way, buckets ÷ shared, worst round %.2f",
					processes, s.rate(), Profile.rounds(s.rates()), sEfficiency, s.jobsPerServerSecond(),
					s.serverCores(), s.workerCores(), s.entriesPerClaim(), Profile.rounds(s.entries()), b.rate(),
					Profile.rounds(b.rates()), bEfficiency, b.jobsPerServerSecond(), b.serverCores(), b.workerCores(),
					b.entriesPerClaim(), Profile.rounds(b.entries()), s.rate() / b.rate(),
					roundRatios(s, b).stream().map((r) -> String.format(java.util.Locale.ROOT, "%.2f", r)).toList(),
					worstRatio(s, b), worstRatio(b, s));
		}
		return results;
	}

	/**
	 * Both assignments at one process count, their rounds paired: the two groups of worker processes
	 * run side by side, each on its own schema, and every round drains one, then the other (which
	 * goes first alternates), so that the two drains of a round see the same machine. With
	 * {@code --scaling-drains N} a round drains each assignment N times, mirrored (A B B A …), and its
	 * figures are the sums of those drains. The group that is not draining polls its empty queue
	 * meanwhile, for both alike.
	 */
	private Map<QueueAssignment, Figures> measure(Context context, Map<QueueAssignment, BenchSchema> schemas,
			Connection observer, int processes) throws Exception {
		Profile profile = context.profile();
		Profile.Buckets sizes = profile.buckets();
		int jobs = sizes.scalingJobs();
		Map<QueueAssignment, List<QueueWorkerProcess>> groups = new EnumMap<>(QueueAssignment.class);
		Map<QueueAssignment, Rounds> rounds = new EnumMap<>(QueueAssignment.class);
		try {
			for (Map.Entry<QueueAssignment, BenchSchema> side : schemas.entrySet()) {
				QueueAssignment assignment = side.getKey();
				BenchSchema schema = side.getValue();
				schema.truncate();
				schema.resetCoordination();
				List<QueueWorkerProcess> workers = new ArrayList<>();
				groups.put(assignment, workers);
				rounds.put(assignment, new Rounds());
				for (int i = 0; i < processes; i++) {
					workers.add(QueueWorkerProcess.start(context.database(), schema, assignment, sizes.heartbeat(),
							CONCURRENCY, BATCH_SIZE, POLL_INTERVAL));
				}
				if (assignment == QueueAssignment.BUCKETS) {
					RebalanceWorkload.awaitShares(workers);
				}
				// Unmeasured: the workers' JIT compiles the claim path during the first drain. Its table is
				// analyzed full: with statistics of an empty table (this server runs without autovacuum)
				// the planner chose plans that drained 200 000 jobs at 2 000 jobs/s, the server's CPU busy.
				schema.insertAvailable(jobs);
				schema.analyze();
				awaitDrained(schema, observer);
			}
			for (int round = 0; round < profile.rounds(); round++) {
				List<QueueAssignment> order = new ArrayList<>(schemas.keySet());
				if (round % 2 == 1) {
					Collections.reverse(order);
				}
				// With several drains of each assignment a round runs them mirrored (A B B A A B …): a
				// machine getting faster or slower through the round weighs on both alike.
				Map<QueueAssignment, Drained> drained = new EnumMap<>(QueueAssignment.class);
				for (int d = 0; d < 2 * sizes.scalingDrains(); d++) {
					QueueAssignment assignment = order.get(((d + 1) / 2) % 2);
					BenchSchema schema = schemas.get(assignment);
					List<QueueWorkerProcess> workers = groups.get(assignment);
					schema.vacuumKeepingStatistics();
					double workersBefore = workerCpu(workers);
					long readBefore = claimEntriesRead(schema, observer);
					schema.insertAvailable(jobs);
					long start = System.nanoTime();
					CpuTimes.ServerSnapshot serverBefore = CpuTimes.server(observer);
					awaitDrained(schema, observer);
					long end = System.nanoTime();
					CpuTimes.ServerUsage server = CpuTimes.server(observer).since(serverBefore);
					double workerSeconds = workerCpu(workers) - workersBefore;
					// Backends report their counts at most once a second, when idle: the drain's last second
					// arrives after it. The idle polls of that second are counted too.
					Drains.sleep(STATISTICS_DELAY_MILLIS);
					long read = claimEntriesRead(schema, observer) - readBefore;
					drained.computeIfAbsent(assignment, (a) -> new Drained()).add(jobs, (end - start) / 1e9,
							server.known() ? server.ownSeconds() : Double.NaN, workerSeconds, read);
				}
				for (QueueAssignment assignment : order) {
					Drained d = drained.get(assignment);
					Rounds measured = rounds.get(assignment);
					int roundJobs = jobs * d.drains;
					measured.rates.add(roundJobs / d.wall);
					measured.walls.add(d.wall / d.drains);
					measured.serverSeconds.add(d.serverSeconds / d.drains);
					measured.workerSeconds.add(d.workerSeconds / d.drains);
					measured.entries.add(d.entriesRead * (double) BATCH_SIZE / roundJobs);
					context.progress("%-7s %d process(es) round %d: %,.0f jobs/s, server CPU %.2f s, workers' CPU %.2f s "
							+ "over %.2f s, %,.0f claim index entries read per claim of %d%s", assignment.name()
								.toLowerCase(java.util.Locale.ROOT), processes, round + 1, roundJobs / d.wall,
							d.serverSeconds, d.workerSeconds, d.wall, measured.entries.get(round), BATCH_SIZE,
							(d.drains > 1) ? String.format(java.util.Locale.ROOT, " (%d drains %s)", d.drains,
									Profile.rounds(d.rates)) : "");
				}
			}
		}
		finally {
			groups.values().forEach((workers) -> workers.forEach(QueueWorkerProcess::close));
		}
		Map<QueueAssignment, Figures> figures = new EnumMap<>(QueueAssignment.class);
		rounds.forEach((assignment, measured) -> figures.put(assignment, measured.figures(jobs)));
		return figures;
	}

	/** One assignment's drains in one round, summed. */
	private static final class Drained {

		int drains;

		double wall;

		double serverSeconds;

		double workerSeconds;

		long entriesRead;

		final List<Double> rates = new ArrayList<>();

		void add(int jobs, double wall, double serverSeconds, double workerSeconds, long entriesRead) {
			this.drains++;
			this.wall += wall;
			this.serverSeconds += serverSeconds;
			this.workerSeconds += workerSeconds;
			this.entriesRead += entriesRead;
			this.rates.add(jobs / wall);
		}

	}

	/** One assignment's rounds at one process count, in the order they ran. */
	private static final class Rounds {

		final List<Double> rates = new ArrayList<>();

		final List<Double> serverSeconds = new ArrayList<>();

		final List<Double> workerSeconds = new ArrayList<>();

		final List<Double> walls = new ArrayList<>();

		final List<Double> entries = new ArrayList<>();

		Figures figures(int jobs) {
			double server = Profile.median(this.serverSeconds);
			double wall = Profile.median(this.walls);
			return new Figures(Profile.median(this.rates), this.rates, jobs / server, server / wall,
					Profile.median(this.workerSeconds) / wall, Profile.median(this.entries), this.entries);
		}

	}

	/**
	 * Entries read so far by every scan of the claim indexes (shared and buckets), as the statistics
	 * views have them: the claims' reads, and the few of {@link #awaitDrained}'s probe.
	 */
	private static long claimEntriesRead(BenchSchema schema, Connection observer) throws SQLException {
		String sql = "SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE schemaname = '"
				+ schema.name().value() + "' AND indexrelname IN ('pgqueue_jobs_claim_idx', "
				+ "'pgqueue_jobs_bucket_claim_idx')";
		try (var statement = observer.createStatement(); var rs = statement.executeQuery(sql)) {
			rs.next();
			return rs.getLong(1);
		}
	}

	/**
	 * Until no job is available: in transactional mode a job stays {@code available} (locked) until
	 * the delete of its batch commits, so the lowest id still available only grows, and each probe reads
	 * the primary key from the last one found, every 5 ms. Its plan is pinned to that index scan: planned
	 * on the statistics of an empty table (which the claims meet at every burst until an analyze), a
	 * probe of the claim index read every entry of it by a bitmap scan, and its reads counted among the
	 * claims'. A last probe of the claim index confirms the end.
	 */
	private static void awaitDrained(BenchSchema schema, Connection observer) throws SQLException {
		String next = "SELECT id FROM " + schema.table() + " WHERE id >= ? AND queue = '" + BenchSchema.QUEUE
				+ "' AND state = 'available' ORDER BY id LIMIT 1";
		String any = "SELECT 1 FROM " + schema.table() + " WHERE queue = '" + BenchSchema.QUEUE
				+ "' AND state = 'available' LIMIT 1";
		long deadline = System.nanoTime() + Drains.TIMEOUT.toNanos();
		try (var settings = observer.createStatement()) {
			settings.execute("SET enable_bitmapscan = off; SET enable_seqscan = off; SET enable_sort = off");
		}
		try (var probe = observer.prepareStatement(next); var statement = observer.createStatement()) {
			long from = Long.MIN_VALUE;
			while (true) {
				probe.setLong(1, from);
				try (var rs = probe.executeQuery()) {
					if (rs.next()) {
						from = rs.getLong(1);
					}
					else {
						try (var last = statement.executeQuery(any)) {
							if (!last.next()) {
								return;
							}
						}
						from = Long.MIN_VALUE;
					}
				}
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("Jobs left after " + Drains.TIMEOUT);
				}
				Drains.sleep(5);
			}
		}
		finally {
			try (var settings = observer.createStatement()) {
				settings.execute("RESET enable_bitmapscan; RESET enable_seqscan; RESET enable_sort");
			}
		}
	}

	/**
	 * Each paired round's {@code one ÷ other}, in the order the rounds ran. Read both ways, the worst
	 * rounds show how far the machine's noise alone moves one round: on an idle machine both are near
	 * 1, beside busy loops both fall.
	 */
	private static List<Double> roundRatios(Figures one, Figures other) {
		List<Double> ratios = new ArrayList<>();
		for (int i = 0; i < Math.min(one.rates().size(), other.rates().size()); i++) {
			ratios.add(one.rates().get(i) / other.rates().get(i));
		}
		return ratios;
	}

	/** The lowest of the paired rounds' {@code one ÷ other}. */
	private static double worstRatio(Figures one, Figures other) {
		return roundRatios(one, other).stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
	}

	/** User and kernel CPU seconds the workers have used so far. */
	private static double workerCpu(List<QueueWorkerProcess> workers) {
		double total = 0;
		for (QueueWorkerProcess worker : workers) {
			double[] cpu = CpuTimes.process(worker.pid());
			total += (cpu != null) ? cpu[0] + cpu[1] : Double.NaN;
		}
		return total;
	}

	/**
	 * One setting's medians.
	 *
	 * @param rate jobs per second
	 * @param rates every round's
	 * @param jobsPerServerSecond jobs per CPU-second of the server ({@code NaN} when it is not local)
	 * @param serverCores the server's CPU over the drain, in cores
	 * @param workerCores the worker processes' CPU over the drain, in cores
	 * @param entriesPerClaim claim index entries read per full claim ({@value #BATCH_SIZE} jobs)
	 * @param entries every round's entries read per full claim
	 */
	private record Figures(double rate, List<Double> rates, double jobsPerServerSecond, double serverCores,
			double workerCores, double entriesPerClaim, List<Double> entries) {
	}

}
