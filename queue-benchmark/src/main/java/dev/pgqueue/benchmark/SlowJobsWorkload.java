package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.QueueMode;
import dev.pgqueue.benchmark.RawQueue.RawJob;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * Workload 2: jobs that take 20 ms, at 10, 50 and 200 concurrent workers, in leased mode (the mode
 * for jobs that run a while: a transactional slot would hold a connection per running job).
 *
 * <p>The figure is completed jobs per second once running, against the ideal (workers ÷ job
 * duration) and against raw loops: as many threads as workers, each claiming one job, sleeping and
 * completing it. Both sides share a pool of at most 21 connections, since 200 connections would
 * exceed a default server's {@code max_connections}.
 */
final class SlowJobsWorkload implements Workload {

	static final int MAX_POOL = 20;

	static final int BATCH_SIZE = 100;

	@Override
	public String name() {
		return "slow-jobs";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		Profile profile = context.profile();
		List<Result> results = new ArrayList<>();
		long jobMillis = profile.slowJobDuration().toMillis();
		try (BenchSchema schema = context.database().createSchema("slow")) {
			for (int workers : profile.slowWorkers()) {
				double ideal = workers * 1000.0 / jobMillis;
				double seconds = (profile.warmUp().plus(profile.measure()).toMillis() / 1000.0) + 1;
				long backlog = (long) (ideal * seconds * 1.3) + 1_000;
				HikariDataSource pool = schema.pool("slow", Math.min(workers, MAX_POOL) + 1);
				List<Double> pgqueueRounds = new ArrayList<>();
				List<Double> rawRounds = new ArrayList<>();
				for (int round = 0; round < profile.rounds(); round++) {
					schema.truncate();
					schema.loadAvailable(backlog);
					pgqueueRounds.add(pgqueue(schema, pool, workers, profile));
					schema.truncate();
					schema.loadAvailable(backlog);
					rawRounds.add(raw(schema, pool, workers, profile));
				}
				schema.release(pool);
				double pgqueue = Profile.median(pgqueueRounds);
				double raw = Profile.median(rawRounds);
				String variant = "leased, " + workers + " workers × " + jobMillis + " ms";
				context.progress("%-28s pgqueue %,8.0f jobs/s %s   raw %,8.0f %s   ideal %,8.0f   %5.1f %% of ideal",
						variant, pgqueue, Profile.rounds(pgqueueRounds), raw, Profile.rounds(rawRounds), ideal,
						pgqueue / ideal * 100);
				results.add(Result.higher(name(), variant, "throughput", "jobs/s", pgqueue, raw, null));
				results.add(new Result(name(), variant, "fraction of ideal", "jobs/s", pgqueue, ideal, Result.IDEAL,
						true, Target.ratioAtLeast(0.95)));
			}
		}
		return results;
	}

	static double pgqueue(BenchSchema schema, HikariDataSource pool, int workers, Profile profile) {
		AtomicLong done = new AtomicLong();
		long jobMillis = profile.slowJobDuration().toMillis();
		QueueSettings settings = PgqueueEngine.settings(QueueMode.LEASED, workers, Math.min(workers, BATCH_SIZE),
				QueueSettings.DEFAULT_POLL_INTERVAL);
		try (PgqueueEngine engine = new PgqueueEngine(pool, schema.name(), settings, false, QueueMetrics.NONE,
				(job) -> {
					Thread.sleep(jobMillis);
					done.incrementAndGet();
				})) {
			JobPoller poller = engine.poller();
			poller.start();
			return rate(done, profile);
		}
	}

	static double raw(BenchSchema schema, HikariDataSource pool, int workers, Profile profile)
			throws InterruptedException {
		AtomicLong done = new AtomicLong();
		AtomicBoolean running = new AtomicBoolean(true);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		long jobMillis = profile.slowJobDuration().toMillis();
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < workers; i++) {
			String owner = "raw-" + UUID.randomUUID().toString().substring(0, 8);
			Thread thread = new Thread(() -> {
				try {
					while (running.get()) {
						List<RawJob> jobs;
						// A connection per statement, as the engine's workers take one per completion.
						try (Connection connection = pool.getConnection()) {
							jobs = new RawQueue(connection, schema.name()).claimLeased(1, owner,
									Drains.LEASE_MILLIS);
						}
						if (jobs.isEmpty()) {
							Thread.sleep(1);
							continue;
						}
						Thread.sleep(jobMillis);
						try (Connection connection = pool.getConnection()) {
							new RawQueue(connection, schema.name()).completeLeasedMany(jobs);
						}
						done.incrementAndGet();
					}
				}
				catch (Throwable ex) {
					failure.compareAndSet(null, ex);
				}
			}, "raw-slow-" + i);
			thread.start();
			threads.add(thread);
		}
		double rate = rate(done, profile);
		running.set(false);
		for (Thread thread : threads) {
			thread.join();
		}
		if (failure.get() != null) {
			throw new IllegalStateException("Raw slow-job loop failed: " + failure.get(), failure.get());
		}
		return rate;
	}

	/** Completions per second over the measured window, after the warm-up. */
	static double rate(AtomicLong done, Profile profile) {
		Drains.sleep(profile.warmUp().toMillis());
		long before = done.get();
		long start = System.nanoTime();
		Drains.sleep(profile.measure().toMillis());
		long after = done.get();
		return (after - before) / ((System.nanoTime() - start) / 1e9);
	}

}
