package dev.pgqueue.benchmark;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs pgqueue and a raw-JDBC baseline of the same SQL on the same database, workload by workload,
 * prints a table of pgqueue ÷ baseline and writes results.json, results.csv, table.md and PNG
 * charts. See docs/benchmarks.md.
 *
 * <pre>
 * ./mvnw -q -B -pl queue-benchmark -am package -DskipTests
 * java -jar queue-benchmark/target/queue-benchmark.jar --profile full
 * </pre>
 */
public final class Benchmark {

	/** Every workload, in the order they run: the long loads (admin, growth) last. */
	static final List<Workload> WORKLOADS = List.of(new DrainWorkload(), new DeepBacklogWorkload(), new SlowJobsWorkload(),
			new EnqueueWorkload(), new UniqueWorkload(), new SteadyStateWorkload(), new BurstWorkload(), new ScalingWorkload(),
			new RebalanceWorkload(), new LimitsWorkload(), new RateLimitsWorkload(), new FairnessWorkload(),
			new RoundTripWorkload(),
			new TwoPhaseWorkload(), new UserPathWorkload(), new SoakWorkload(), new AdminWorkload(), new GrowthWorkload(),
			new ShardsWorkload(), new WriteCostWorkload(), new FinishedLayoutsWorkload());

	/** Run only when named: they explain figures rather than produce them. */
	static final List<Workload> DIAGNOSTICS = List.of(new WhatIfWorkload());

	static final String DEFAULT_JDBC_URL = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";

	private static final String USAGE = """
			Usage: java -jar queue-benchmark/target/queue-benchmark.jar [options]

			  --profile smoke|full   sizes: smoke takes under a minute, full takes tens of minutes (default smoke)
			  --jdbc-url URL         PostgreSQL to run against (default: $PGQUEUE_BENCH_JDBC_URL, else
			                         $PGQUEUE_TEST_JDBC_URL, else %s)
			  --user NAME            user name, when the URL has none
			  --password SECRET      password, when the URL has none
			  --workloads a,b        only these workloads, of: %s
			                         (what-if: diagnostics that size possible engine changes; only when named;
			                         user-path needs pgbench on PATH, and records its drains with JFR into
			                         the directory $PGQUEUE_BENCH_JFR names, when set)
			  --soak-variants 1,2    only these variants of the soak workload: 1 transactional, 2 transactional
			                         with retention.completed 0, 3 leased, 4 the snapshot held on the app's pool
			  --rounds N             measure every setting N times (default: the profile's, 1 for smoke, 3 for full)
			  --scaling-processes 1,2,4,8
			                         worker process counts of the scaling workload (default: the profile's)
			  --soak-phases B,H,A    seconds of the soak's phases: before the snapshot, held, after it (default:
			                         the profile's; full: 30,300,60); a longer clean phase to compare the hold with
			  --scaling-drains N     drains of each assignment per round of the scaling workload, in mirrored
			                         order (2: shared, buckets, buckets, shared; default 1)
			  --neighbours N         run N CPU-bound busy loops beside the scaling workload's drains and the soak
			                         (default 0)
			  --output DIR           where results go, in a sub-directory named after the time (default benchmark-results)
			  --fail-fast            stop at the first workload that fails
			  --redraw DIR           only redraw the charts of an earlier run from DIR/results.json
			""";

	private Benchmark() {
	}

	public static void main(String[] args) throws Exception {
		System.setProperty("java.awt.headless", "true");
		Options options;
		try {
			options = Options.parse(args);
		}
		catch (IllegalArgumentException ex) {
			System.err.println(ex.getMessage());
			System.err.println();
			System.err.print(usage());
			System.exit(2);
			return;
		}
		if (options == null) {
			System.out.print(usage());
			return;
		}
		if (options.redraw() != null) {
			Report report = ResultWriter.read(options.redraw());
			System.out.println("Redrew " + Charts.write(report));
			return;
		}
		Report report = run(options, System.out);
		System.exit(report.failures().isEmpty() ? 0 : 1);
	}

	private static String usage() {
		return USAGE.formatted(DEFAULT_JDBC_URL, String.join(",", WORKLOADS.stream().map(Workload::name).toList()));
	}

	/** Runs the selected workloads, prints the table and writes the files. */
	public static Report run(Options options, PrintStream out) throws Exception {
		Instant startedAt = Instant.now();
		long start = System.nanoTime();
		BenchDatabase database = new BenchDatabase(options.jdbcUrl(), options.user(), options.password());
		Map<String, Object> environment = Environment.read(database);
		out.printf("pgqueue benchmark, %s profile, on %s%n", options.profile().name(), environment.get("postgresql"));
		out.printf("%s CPUs, %s, %s; load average %s%n", environment.get("cpus"), environment.get("memory"),
				environment.get("jdk"), environment.get("loadAverageAtStart"));
		Workload.Context context = new Workload.Context(database, options.profile(), out);
		List<Result> results = new ArrayList<>();
		Map<String, String> failures = new LinkedHashMap<>();
		List<Workload> selected = new ArrayList<>(WORKLOADS);
		selected.addAll(DIAGNOSTICS);
		for (Workload workload : selected) {
			boolean named = options.workloads().contains(workload.name());
			if (options.workloads().isEmpty() ? DIAGNOSTICS.contains(workload) : !named) {
				continue;
			}
			long workloadStart = System.nanoTime();
			out.printf("%n== %s%n", workload.name());
			try {
				results.addAll(runRetryingOnce(workload, context));
			}
			catch (Exception | AssertionError ex) {
				if (options.failFast()) {
					throw ex;
				}
				failures.put(workload.name(), ex.toString());
				out.printf("  FAILED: %s%n", ex);
				ex.printStackTrace(out);
			}
			out.printf("  (%s took %.0f s)%n", workload.name(), (System.nanoTime() - workloadStart) / 1e9);
		}
		environment.put("loadAverageAtEnd", Environment.loadAverage());
		String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
		Report report = new Report(options.profile(), startedAt, Duration.ofNanos(System.nanoTime() - start),
				environment, results, failures, options.output().resolve(stamp));
		out.printf("%n%s%n", ResultWriter.table(results));
		ResultWriter.write(report);
		List<Path> charts = Charts.write(report);
		out.printf("Wrote %s (results.json, results.csv, table.md%s) in %d s%n", report.directory(),
				charts.isEmpty() ? "" : ", " + String.join(", ", charts.stream().map((p) -> p.getFileName().toString()).toList()),
				report.took().toSeconds());
		if (!failures.isEmpty()) {
			out.printf("Failed workloads: %s%n", failures.keySet());
		}
		return report;
	}

	/**
	 * Runs a workload, and once more if the server dropped its connections (a restart or an
	 * administrator's termination on a shared server): a lost connection says nothing about pgqueue.
	 */
	private static List<Result> runRetryingOnce(Workload workload, Workload.Context context) throws Exception {
		try {
			return workload.run(context);
		}
		catch (Exception ex) {
			if (!lostConnection(ex)) {
				throw ex;
			}
			context.log().printf("  lost the connection (%s); running %s again%n", ex.getMessage(), workload.name());
			return workload.run(context);
		}
	}

	private static boolean lostConnection(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof java.sql.SQLException sql && BenchSchema.isConnectionLost(sql)) {
				return true;
			}
			for (Throwable suppressed : cause.getSuppressed()) {
				if (lostConnection(suppressed)) {
					return true;
				}
			}
		}
		return false;
	}

	/**
	 * What to run.
	 *
	 * @param profile sizes
	 * @param jdbcUrl server
	 * @param user user name, or {@code null}
	 * @param password password, or {@code null}
	 * @param workloads names of the workloads to run; empty for all
	 * @param output directory under which a timestamped directory of results is written
	 * @param failFast whether a failing workload stops the run
	 * @param redraw directory of an earlier run whose charts to redraw instead of running, or
	 * {@code null}
	 */
	public record Options(Profile profile, String jdbcUrl, String user, String password, List<String> workloads,
			Path output, boolean failFast, Path redraw) {

		/** Parses the command line; {@code null} when help was asked for. */
		static Options parse(String[] args) {
			Profile profile = Profile.smoke();
			String jdbcUrl = firstSet(System.getenv("PGQUEUE_BENCH_JDBC_URL"), System.getenv("PGQUEUE_TEST_JDBC_URL"),
					DEFAULT_JDBC_URL);
			String user = null;
			String password = null;
			List<String> workloads = List.of();
			Path output = Path.of("benchmark-results");
			boolean failFast = false;
			Path redraw = null;
			List<Integer> soakVariants = null;
			List<Duration> soakPhases = null;
			Integer rounds = null;
			List<Integer> scalingProcesses = null;
			int neighbours = 0;
			int scalingDrains = 1;
			for (int i = 0; i < args.length; i++) {
				String arg = args[i];
				switch (arg) {
					case "--profile" -> profile = Profile.named(value(args, ++i, arg));
					case "--jdbc-url" -> jdbcUrl = value(args, ++i, arg);
					case "--user" -> user = value(args, ++i, arg);
					case "--password" -> password = value(args, ++i, arg);
					case "--workloads" -> workloads = Arrays.asList(value(args, ++i, arg).split(","));
					case "--soak-variants" -> soakVariants = Arrays.stream(value(args, ++i, arg).split(","))
						.map(String::trim).map(Integer::valueOf).toList();
					case "--soak-phases" -> soakPhases = Arrays.stream(value(args, ++i, arg).split(","))
						.map(String::trim).map((seconds) -> Duration.ofSeconds(Long.parseLong(seconds))).toList();
					case "--rounds" -> rounds = positive(value(args, ++i, arg), arg);
					case "--scaling-processes" -> scalingProcesses = Arrays.stream(value(args, ++i, arg).split(","))
						.map((count) -> positive(count, arg)).toList();
					case "--scaling-drains" -> scalingDrains = positive(value(args, ++i, arg), arg);
					case "--neighbours" -> neighbours = Integer.parseInt(value(args, ++i, arg).trim());
					case "--output" -> output = Path.of(value(args, ++i, arg));
					case "--fail-fast" -> failFast = true;
					case "--redraw" -> redraw = Path.of(value(args, ++i, arg));
					case "--help", "-h" -> {
						return null;
					}
					default -> throw new IllegalArgumentException("Unknown option '" + arg + "'");
				}
			}
			List<String> known = new ArrayList<>(WORKLOADS.stream().map(Workload::name).toList());
			DIAGNOSTICS.forEach((workload) -> known.add(workload.name()));
			for (String workload : workloads) {
				if (!known.contains(workload)) {
					throw new IllegalArgumentException("Unknown workload '" + workload + "'; use some of " + known);
				}
			}
			if (soakVariants != null) {
				for (int variant : soakVariants) {
					if (variant < 1 || variant > SoakWorkload.VARIANTS.size()) {
						throw new IllegalArgumentException("Unknown soak variant " + variant + "; use 1 to "
								+ SoakWorkload.VARIANTS.size());
					}
				}
				profile = profile.withSoakVariants(soakVariants);
			}
			if (rounds != null) {
				profile = profile.withRounds(rounds);
			}
			if (neighbours < 0) {
				throw new IllegalArgumentException("--neighbours must be 0 or more, not " + neighbours);
			}
			if (scalingProcesses != null || neighbours != 0 || scalingDrains != 1) {
				profile = profile.withScaling(scalingProcesses, neighbours, scalingDrains);
			}
			if (soakPhases != null || neighbours != 0) {
				Profile.Soak soak = profile.soak();
				if (soakPhases != null && soakPhases.size() != 3) {
					throw new IllegalArgumentException("--soak-phases takes three durations in seconds (before, hold, "
							+ "after), not " + soakPhases.size());
				}
				List<Duration> phases = (soakPhases != null) ? soakPhases : List.of(soak.before(), soak.hold(), soak.after());
				profile = profile.withSoak(phases.get(0), phases.get(1), phases.get(2), neighbours);
			}
			return new Options(profile, jdbcUrl, user, password, workloads, output, failFast, redraw);
		}

		private static int positive(String value, String option) {
			int parsed;
			try {
				parsed = Integer.parseInt(value.trim());
			}
			catch (NumberFormatException ex) {
				parsed = 0;
			}
			if (parsed < 1) {
				throw new IllegalArgumentException("Option " + option + " takes whole numbers of 1 or more, not '"
						+ value + "'");
			}
			return parsed;
		}

		private static String value(String[] args, int index, String option) {
			if (index >= args.length) {
				throw new IllegalArgumentException("Option " + option + " needs a value");
			}
			return args[index];
		}

		private static String firstSet(String... values) {
			for (String value : values) {
				if (value != null && !value.isBlank()) {
					return value.trim();
				}
			}
			return null;
		}

	}

}
