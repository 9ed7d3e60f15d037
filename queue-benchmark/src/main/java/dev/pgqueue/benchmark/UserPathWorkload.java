package dev.pgqueue.benchmark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

import dev.pgqueue.QueueMode;
import dev.pgqueue.benchmark.UserPathProcess.Setting;
import dev.pgqueue.benchmark.userpath.UserPathApplication;

/**
 * Workload {@code user-path}: the drain as a user runs it, a Spring Boot application with the
 * starter, Actuator metrics on and a {@code @JobListener} that takes a Jackson-mapped record, in a
 * JVM of its own ({@link UserPathProcess}), against pgbench draining the same table with one
 * fused statement per batch ({@link PgbenchBaseline}).
 *
 * <p>Per mode, pgbench runs at every client count of the profile and the application at every
 * setting of the grid, each on a freshly loaded table of the profile's job count, the median of the
 * profile's rounds; the best of each side is compared, ≥ 50 % being the target. CPU time per job is printed for both sides: the
 * application's JVM, pgbench's process and the PostgreSQL server (every {@code postgres} process,
 * less other applications' sessions), to say where the remaining gap goes.
 *
 * <p>Set {@code PGQUEUE_BENCH_JFR} to a directory to record each measured drain of the application
 * with JFR's {@code profile} settings, one file per setting; with {@code -Dpgqueue.bench.user-path.jfr-cold=true}
 * the cold JVM's first drain (the first warm-up round) instead.
 */
final class UserPathWorkload implements Workload {

	/** The payload the application's record maps: {@code {"account": "acct-00000042", "n": 42}}. */
	static final String PAYLOAD = "jsonb_build_object('account', 'acct-' || lpad(g::text, 8, '0'), 'n', g)";

	static final String JFR_VARIABLE = "PGQUEUE_BENCH_JFR";

	static final String JFR_COLD_PROPERTY = "pgqueue.bench.user-path.jfr-cold";

	@Override
	public String name() {
		return "user-path";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		PgbenchBaseline.requireInstalled();
		if (!BenchSchema.QUEUE.equals(UserPathApplication.QUEUE)) {
			throw new IllegalStateException("The application's queue must be the one jobs are loaded into");
		}
		Profile.UserPath sizes = context.profile().userPath();
		Path jfr = jfrDirectory();
		List<Result> results = new ArrayList<>();
		try (BenchSchema appSchema = context.database().createSchema("userpath");
				BenchSchema pgbenchSchema = context.database().createSchema("userpath_pgbench");
				Connection cpuProbe = context.database().connect();
				PgbenchBaseline pgbench = new PgbenchBaseline(context.database(), pgbenchSchema, cpuProbe)) {
			if (!CpuTimes.server(cpuProbe).ticks().isEmpty()) {
				context.progress("CPU per job: JVM of the application, pgbench's process, and PostgreSQL = every postgres "
						+ "process (background ones included) less other applications' sessions");
			}
			else {
				context.progress("CPU of PostgreSQL is unknown here: no postgres process is visible in /proc (a remote "
						+ "server, or not Linux); JVM and pgbench figures only");
			}
			for (QueueMode mode : DrainWorkload.MODES) {
				List<Setting> settings = grid(mode, sizes);
				if (settings.isEmpty()) {
					continue;
				}
				List<PgbenchBaseline.Run> baseline = new ArrayList<>();
				for (int clients : listed("pgqueue.bench.user-path.pgbench-clients", sizes.pgbenchClients())) {
					List<PgbenchBaseline.Run> rounds = new ArrayList<>();
					for (int round = 0; round < context.profile().rounds(); round++) {
						rounds.add(pgbench.run(mode, clients, sizes.jobs(), PAYLOAD));
					}
					PgbenchBaseline.Run run = median(rounds, PgbenchBaseline.Run::rate);
					baseline.add(run);
					context.progress("%-31s %,9.0f jobs/s %s  %,7d jobs in %6.2f s   CPU µs/job: pgbench %6.1f, PostgreSQL %s",
							"pgbench " + mode.name().toLowerCase(Locale.ROOT) + " " + clients + " client"
									+ (clients > 1 ? "s" : ""),
							run.rate(), rates(rounds, PgbenchBaseline.Run::rate), run.drained(), run.seconds(),
							perJob(run.clientCpuSeconds(), run.drained()), server(run.server(), run.drained()));
				}
				List<Measured> grid = new ArrayList<>();
				for (Setting setting : settings) {
					grid.add(measure(context, appSchema, cpuProbe, setting, sizes, jfr));
				}
				results.addAll(compare(context, mode, grid, baseline));
			}
		}
		return results;
	}

	/** The values {@code -Dproperty=1,2} lists, or the profile's. */
	private static List<Integer> listed(String property, List<Integer> values) {
		String listed = System.getProperty(property);
		if (listed == null || listed.isBlank()) {
			return values;
		}
		return java.util.Arrays.stream(listed.split(",")).map(String::trim).map(Integer::valueOf).toList();
	}

	/**
	 * The settings of the mode to measure: the profile's grid, or those that
	 * {@code -Dpgqueue.bench.user-path.settings=transactional:10:4,leased:10:4} lists (mode, batch size,
	 * concurrency; {@code 10:4} is the defaults), such as the defaults alone, whose first warm-up drain
	 * is a cold JVM's.
	 */
	private static List<Setting> grid(QueueMode mode, Profile.UserPath sizes) {
		String listed = System.getProperty("pgqueue.bench.user-path.settings");
		if (listed != null && !listed.isBlank()) {
			List<Setting> chosen = new ArrayList<>();
			for (String entry : listed.split(",")) {
				String[] parts = entry.trim().split(":");
				if (parts.length != 3) {
					throw new IllegalArgumentException("pgqueue.bench.user-path.settings takes mode:batch:concurrency "
							+ "entries, such as leased:10:4, not '" + entry + "'");
				}
				if (QueueMode.valueOf(parts[0].toUpperCase(Locale.ROOT)) == mode) {
					chosen.add(new Setting(mode, Integer.parseInt(parts[1]), Integer.parseInt(parts[2])));
				}
			}
			return chosen;
		}
		List<Setting> grid = new ArrayList<>();
		boolean transactional = mode == QueueMode.TRANSACTIONAL;
		for (int batchSize : transactional ? sizes.transactionalBatchSizes() : sizes.leasedBatchSizes()) {
			for (int concurrency : transactional ? sizes.transactionalConcurrency() : sizes.leasedConcurrency()) {
				grid.add(new Setting(mode, batchSize, concurrency));
			}
		}
		return grid;
	}

	/**
	 * Starts the application, lets it drain the warm-up rounds, then the measured ones, each on a
	 * freshly loaded table, and returns the median measured round. The server's CPU is read around
	 * each measured drain, from this side; JFR records the first.
	 */
	private Measured measure(Context context, BenchSchema schema, Connection cpuProbe, Setting setting,
			Profile.UserPath sizes, Path jfr) throws Exception {
		schema.truncate();
		Path recording = (jfr != null) ? jfr.resolve("user-path-" + setting.toString().replace(' ', '-') + ".jfr") : null;
		try (UserPathProcess application = UserPathProcess.start(context.database(), schema, setting, recording)) {
			int meters = application.awaitReady();
			List<Double> rates = new ArrayList<>();
			List<Long> jit = new ArrayList<>();
			boolean recordCold = Boolean.getBoolean(JFR_COLD_PROPERTY);
			for (int round = 0; round < sizes.warmUpRounds(); round++) {
				schema.truncate();
				schema.loadAvailable(sizes.warmUpJobs(), UserPathApplication.KIND, PAYLOAD);
				UserPathProcess.Drain warmUp = application.drain(sizes.warmUpJobs(), round == 0 && recordCold);
				rates.add(sizes.warmUpJobs() / warmUp.seconds());
				jit.add(warmUp.jitMillis());
				if (round == 0) {
					context.progress("%-31s the cold JVM's first drain, JVM µs/job by thread: %s", setting,
							threads(warmUp, sizes.warmUpJobs()));
				}
			}
			context.progress("%-31s warm-up %d × %,d jobs: %s jobs/s, JIT %s ms", setting, sizes.warmUpRounds(),
					sizes.warmUpJobs(), Profile.rounds(rates), jit);
			List<Measured> rounds = new ArrayList<>();
			for (int round = 0; round < context.profile().rounds(); round++) {
				schema.truncate();
				schema.loadAvailable(sizes.jobs(), UserPathApplication.KIND, PAYLOAD);
				CpuTimes.ServerSnapshot before = CpuTimes.server(cpuProbe);
				double[] jvmBefore = CpuTimes.process(application.pid());
				UserPathProcess.Drain drain = application.drain(sizes.jobs(), round == 0 && !recordCold);
				double[] jvmAfter = CpuTimes.process(application.pid());
				CpuTimes.ServerUsage server = CpuTimes.server(cpuProbe).since(before);
				long unfinished = schema.unfinished();
				if (drain.handled() != sizes.jobs() || unfinished != 0) {
					throw new IllegalStateException(setting + ": the application ran " + drain.handled() + " of "
							+ sizes.jobs() + " jobs and left " + unfinished + " unfinished");
				}
				rounds.add(new Measured(setting, drain, server, sizes.jobs(), kernelShare(jvmBefore, jvmAfter, sizes.jobs())));
			}
			Measured measured = median(rounds, Measured::rate);
			UserPathProcess.Drain drain = measured.drain();
			context.progress("%-31s %,9.0f jobs/s %s  %,7d jobs in %6.2f s   CPU µs/job: JVM %6.1f, PostgreSQL %s   "
					+ "(%d pgqueue.* meters at start, pgqueue.jobs.completed +%,.0f%s)", setting, measured.rate(),
					rates(rounds, Measured::rate), sizes.jobs(), drain.seconds(), perJob(drain.cpuSeconds(), sizes.jobs()),
					server(measured.server(), sizes.jobs()), meters, drain.completedMeter(),
					(recording != null) ? ", JFR of the " + (recordCold ? "cold JVM's first drain " : "first round ") + recording : "");
			context.progress("%31s JVM µs/job: %s; by thread: %s; JIT %d ms, %d GCs %d ms", "", measured.kernelShare(),
					threads(drain, sizes.jobs()), drain.jitMillis(), drain.gcCount(), drain.gcMillis());
			return measured;
		}
	}

	/** Every setting and the best against the best pgbench figure of the mode; prints the CPU summary. */
	private List<Result> compare(Context context, QueueMode mode, List<Measured> grid,
			List<PgbenchBaseline.Run> baseline) {
		String modeName = mode.name().toLowerCase(Locale.ROOT);
		PgbenchBaseline.Run bestBaseline = baseline.stream()
			.max(Comparator.comparingDouble(PgbenchBaseline.Run::rate))
			.orElseThrow();
		Measured best = grid.stream().max(Comparator.comparingDouble(Measured::rate)).orElseThrow();
		String baselineName = "pgbench, " + bestBaseline.clients() + " client" + (bestBaseline.clients() > 1 ? "s" : "");
		List<Result> results = new ArrayList<>();
		for (Measured measured : grid) {
			results.add(new Result(name(), measured.setting().toString(), "throughput", "jobs/s", measured.rate(),
					bestBaseline.rate(), baselineName, true, null));
		}
		results.add(new Result(name(), modeName + ", best (" + best.setting().knobs() + ")", "throughput", "jobs/s",
				best.rate(), bestBaseline.rate(), baselineName, true, Target.ratioAtLeast(0.5)));
		double jvm = perJob(best.drain().cpuSeconds(), best.jobs());
		double appServer = perJob(best.server().ownSeconds(), best.jobs());
		double client = perJob(bestBaseline.clientCpuSeconds(), bestBaseline.drained());
		double baseServer = perJob(bestBaseline.server().ownSeconds(), bestBaseline.drained());
		context.progress("%s: best %s %,.0f jobs/s ÷ best %s %,.0f jobs/s = %.2f (target ≥ 0.50)", modeName,
				best.setting().knobs(), best.rate(), baselineName, bestBaseline.rate(), best.rate() / bestBaseline.rate());
		context.progress("%s CPU µs/job, best of each: pgqueue JVM %.1f + PostgreSQL %.1f = %.1f; pgbench %.1f + "
				+ "PostgreSQL %.1f = %.1f", modeName, jvm, appServer, jvm + appServer, client, baseServer,
				client + baseServer);
		return results;
	}

	/** User and kernel time of the JVM from /proc (clock ticks): the kernel's is mostly socket I/O. */
	private static String kernelShare(double[] before, double[] after, long jobs) {
		if (before == null || after == null) {
			return "(user and kernel unknown)";
		}
		return String.format(Locale.ROOT, "user %.1f, kernel %.1f", perJob(after[0] - before[0], jobs),
				perJob(after[1] - before[1], jobs));
	}

	/** The biggest thread groups of the JVM's CPU time, per job. */
	private static String threads(UserPathProcess.Drain drain, long jobs) {
		return String.join(", ", drain.threads()
			.entrySet()
			.stream()
			.limit(6)
			.map((group) -> String.format(Locale.ROOT, "%s %.1f", group.getKey(), perJob(group.getValue(), jobs)))
			.toList());
	}

	/** The median item by a figure (the upper one of an even count), so that its other figures go with it. */
	private static <T> T median(List<T> items, ToDoubleFunction<T> figure) {
		return items.stream().sorted(Comparator.comparingDouble(figure)).toList().get(items.size() / 2);
	}

	/** Every round's figure, for progress lines; nothing when there was only one. */
	private static <T> String rates(List<T> items, ToDoubleFunction<T> figure) {
		return (items.size() > 1) ? Profile.rounds(items.stream().map(figure::applyAsDouble).toList()) : "";
	}

	private static double perJob(double seconds, long jobs) {
		return seconds * 1e6 / jobs;
	}

	/** The server's CPU per job, and what other applications' sessions used, which is left out. */
	private static String server(CpuTimes.ServerUsage usage, long jobs) {
		if (!usage.known()) {
			return "unknown";
		}
		String figure = String.format(Locale.ROOT, "%6.1f", perJob(usage.ownSeconds(), jobs));
		return (usage.otherSessionsSeconds() > 0) ? figure
				+ String.format(Locale.ROOT, " (other sessions' %.2f s left out)", usage.otherSessionsSeconds())
				: figure;
	}

	private static Path jfrDirectory() throws java.io.IOException {
		String directory = System.getenv(JFR_VARIABLE);
		if (directory == null || directory.isBlank()) {
			return null;
		}
		return Files.createDirectories(Path.of(directory)).toAbsolutePath();
	}

	/**
	 * One setting's drain.
	 *
	 * @param setting the application's setting
	 * @param drain what the application measured
	 * @param server the server's CPU over the drain
	 * @param jobs jobs drained
	 * @param kernelShare the JVM's user and kernel time per job, as printed
	 */
	private record Measured(Setting setting, UserPathProcess.Drain drain, CpuTimes.ServerUsage server, long jobs,
			String kernelShare) {

		double rate() {
			return this.jobs / this.drain.seconds();
		}

	}

}
