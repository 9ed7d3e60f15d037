package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.QueueMode;
import dev.pgqueue.benchmark.Drains.Drained;
import dev.pgqueue.benchmark.RawQueue.RawJob;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * Diagnostics, not part of the default run ({@code --workloads what-if}): the drain at a few
 * settings with raw loops changed one way at a time, to size the engine changes that would close
 * the gaps. Each variant runs three times, interleaved, and its median is printed; it returns no
 * results for the table.
 */
final class WhatIfWorkload implements Workload {

	static final int CONCURRENCY = 4;

	/** Each variant runs this many times, interleaved with the others, against a shared machine's noise. */
	static final int ROUNDS = 3;

	@Override
	public String name() {
		return "what-if";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		Profile profile = context.profile();
		try (BenchSchema schema = context.database().createSchema("whatif")) {
			HikariDataSource pool = schema.pool("what-if", CONCURRENCY + 2);
			DrainWorkload.warmUp(schema, profile);
			for (int batchSize : new int[] { 10, 100 }) {
				int jobs = profile.drainJobs(largestUpTo(profile, batchSize));
				String at = "transactional b=" + batchSize + " c=" + CONCURRENCY + ": ";
				Map<String, Variant> variants = new LinkedHashMap<>();
				variants.put(at + "pgqueue as is",
						() -> pgqueue(schema, pool, QueueMode.TRANSACTIONAL, batchSize, jobs, profile));
				variants.put(at + "raw claim-and-delete",
						() -> raw(schema, pool, jobs, profile, (queue) -> locked(queue, batchSize, false)));
				variants.put(at + "raw + a SAVEPOINT per job (the engine's path after a failure)",
						() -> raw(schema, pool, jobs, profile, (queue) -> locked(queue, batchSize, true)));
				compare(context, variants);
			}
			for (int batchSize : new int[] { 1, 10, 100 }) {
				int jobs = profile.drainJobs(largestUpTo(profile, 10));
				String at = "leased b=" + batchSize + " c=" + CONCURRENCY + ": ";
				Map<String, Variant> variants = new LinkedHashMap<>();
				variants.put(at + "pgqueue as is", () -> pgqueue(schema, pool, QueueMode.LEASED, batchSize, jobs, profile));
				variants.put(at + "raw, one batched completion per claim (the baseline)",
						() -> raw(schema, pool, jobs, profile, (queue) -> leased(queue, batchSize, true)));
				variants.put(at + "raw, a completion per job (no completer)",
						() -> raw(schema, pool, jobs, profile, (queue) -> leased(queue, batchSize, false)));
				variants.put(at + "pgqueue, lease index WHERE lease_until IS NOT NULL", () -> {
					leaseIndex(schema, "lease_until IS NOT NULL");
					try {
						return pgqueue(schema, pool, QueueMode.LEASED, batchSize, jobs, profile);
					}
					finally {
						leaseIndex(schema, "state = 'running'");
					}
				});
				variants.put(at + "raw, a completion per job, same index", () -> {
					leaseIndex(schema, "lease_until IS NOT NULL");
					try {
						return raw(schema, pool, jobs, profile, (queue) -> leased(queue, batchSize, false));
					}
					finally {
						leaseIndex(schema, "state = 'running'");
					}
				});
				compare(context, variants);
			}
			int workers = profile.slowWorkers().get(profile.slowWorkers().size() - 1);
			long backlog = (long) (workers * 1000.0 / profile.slowJobDuration().toMillis()
					* (profile.warmUp().plus(profile.measure()).toMillis() / 1000.0 + 1) * 1.3) + 1_000;
			HikariDataSource slowPool = schema.pool("what-if-slow", Math.min(workers, SlowJobsWorkload.MAX_POOL) + 1);
			String at = "leased, " + workers + " workers x " + profile.slowJobDuration().toMillis() + " ms: ";
			Map<String, Variant> slow = new LinkedHashMap<>();
			slow.put(at + "pgqueue as is", () -> slowJobs(schema, slowPool, workers, backlog, profile, false));
			slow.put(at + "pgqueue, lease index WHERE lease_until IS NOT NULL", () -> {
				leaseIndex(schema, "lease_until IS NOT NULL");
				try {
					return slowJobs(schema, slowPool, workers, backlog, profile, false);
				}
				finally {
					leaseIndex(schema, "state = 'running'");
				}
			});
			slow.put(at + "raw as is", () -> slowJobs(schema, slowPool, workers, backlog, profile, true));
			slow.put(at + "raw, lease index WHERE lease_until IS NOT NULL", () -> {
				leaseIndex(schema, "lease_until IS NOT NULL");
				try {
					return slowJobs(schema, slowPool, workers, backlog, profile, true);
				}
				finally {
					leaseIndex(schema, "state = 'running'");
				}
			});
			compare(context, slow);
		}
		return List.of();
	}

	/** The 20 ms workload's measured window, as a drain result (jobs per second is what counts). */
	private static Drained slowJobs(BenchSchema schema, HikariDataSource pool, int workers, long backlog,
			Profile profile, boolean raw) throws Exception {
		schema.truncate();
		schema.loadAvailable(backlog);
		double rate = raw ? SlowJobsWorkload.raw(schema, pool, workers, profile)
				: SlowJobsWorkload.pgqueue(schema, pool, workers, profile);
		return new Drained(Math.round(rate), 1.0);
	}

	/** Runs the variants in turn, {@link #ROUNDS} times over, and prints each one's median. */
	private static void compare(Context context, Map<String, Variant> variants) throws Exception {
		Map<String, List<Double>> rates = new LinkedHashMap<>();
		for (int round = 0; round < ROUNDS; round++) {
			for (Map.Entry<String, Variant> variant : variants.entrySet()) {
				rates.computeIfAbsent(variant.getKey(), (key) -> new ArrayList<>()).add(variant.getValue().run().rate());
			}
		}
		rates.forEach((variant, measured) -> {
			List<Double> sorted = measured.stream().sorted().toList();
			context.progress("%-80s %,9.0f jobs/s (median of %s)", variant, sorted.get(sorted.size() / 2),
					sorted.stream().map((rate) -> String.format(java.util.Locale.ROOT, "%,.0f", rate)).toList());
		});
	}

	private static int largestUpTo(Profile profile, int batchSize) {
		return profile.drainBatchSizes().stream().filter((b) -> b <= batchSize).reduce((a, b) -> b).orElse(1);
	}

	private static void leaseIndex(BenchSchema schema, String predicate) {
		schema.execute("""
				DROP INDEX %1$s.pgqueue_jobs_lease_idx;
				CREATE INDEX pgqueue_jobs_lease_idx ON %1$s.pgqueue_jobs (lease_until) WHERE %2$s"""
			.formatted(schema.name().quoted(), predicate));
	}

	private static Drained pgqueue(BenchSchema schema, HikariDataSource pool, QueueMode mode, int batchSize, int jobs,
			Profile profile) {
		schema.truncate();
		schema.loadAvailable(jobs);
		return Drains.pgqueue(schema, pool, DrainWorkload.settings(mode, CONCURRENCY, batchSize),
				DrainWorkload.deletes(mode), 1, jobs, QueueMetrics.NONE, profile.drainTimeCap());
	}

	/** Runs {@link #CONCURRENCY} copies of {@code loop}, each on its own connection, until all end or the cap. */
	private static Drained raw(BenchSchema schema, HikariDataSource pool, int jobs, Profile profile, Loop loop)
			throws Exception {
		schema.truncate();
		schema.loadAvailable(jobs);
		long deadline = System.nanoTime() + profile.drainTimeCap().toNanos();
		CountDownLatch go = new CountDownLatch(1);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < CONCURRENCY; i++) {
			Thread thread = new Thread(() -> {
				try (Connection connection = pool.getConnection()) {
					RawQueue queue = new RawQueue(connection, schema.name());
					go.await();
					while (System.nanoTime() < deadline && loop.cycle(queue)) {
						// Next cycle.
					}
					connection.setAutoCommit(true);
					queue.close();
				}
				catch (Throwable ex) {
					failure.compareAndSet(null, ex);
				}
			}, "what-if-" + i);
			thread.start();
			threads.add(thread);
		}
		long start = System.nanoTime();
		go.countDown();
		for (Thread thread : threads) {
			thread.join(Duration.ofMinutes(10).toMillis());
		}
		double seconds = (System.nanoTime() - start) / 1e9;
		if (failure.get() != null) {
			throw new IllegalStateException("What-if loop failed: " + failure.get(), failure.get());
		}
		return new Drained(jobs - schema.unfinished(), seconds);
	}

	/** One transactional cycle: claim, a savepoint before each (no-op) job if asked, delete, commit. */
	private static boolean locked(RawQueue queue, int batchSize, boolean savepoints) throws Exception {
		Connection connection = queue.connection();
		connection.setAutoCommit(false);
		List<RawJob> jobs = queue.claimLocked(batchSize);
		if (jobs.isEmpty()) {
			connection.commit();
			return false;
		}
		if (savepoints) {
			for (int i = 0; i < jobs.size(); i++) {
				connection.setSavepoint();
			}
		}
		queue.deleteLocked(jobs);
		connection.commit();
		return true;
	}

	private static boolean leased(RawQueue queue, int batchSize, boolean batchedCompletion) throws Exception {
		List<RawJob> jobs = queue.claimLeased(batchSize, OWNER, Drains.LEASE_MILLIS);
		if (jobs.isEmpty()) {
			return false;
		}
		if (batchedCompletion) {
			queue.completeLeasedMany(jobs);
		}
		else {
			for (RawJob job : jobs) {
				queue.completeLeased(job);
			}
		}
		return true;
	}

	private static final String OWNER = "what-if-" + UUID.randomUUID().toString().substring(0, 8);

	@FunctionalInterface
	private interface Variant {

		Drained run() throws Exception;

	}

	@FunctionalInterface
	private interface Loop {

		/** Runs one claim cycle; false when the claim found nothing. */
		boolean cycle(RawQueue queue) throws Exception;

	}

}
