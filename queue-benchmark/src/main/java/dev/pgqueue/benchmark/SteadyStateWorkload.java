package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobClient;
import dev.pgqueue.QueueMode;
import dev.pgqueue.benchmark.RawQueue.RawJob;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * Workload 4: producers enqueue at a fixed rate while pollers run, and the latency from each
 * enqueue's commit to its handler's start is recorded.
 *
 * <p>pgqueue is measured four ways: polling alone at the default interval and every 100 ms; as the
 * starter runs by default with producers in the same application (the client wakes the poller
 * in-process after commit, and inserts notify too); and with producers in another application, so
 * that only LISTEN/NOTIFY wakes the poller. The baseline is raw loops that poll
 * again 1 ms after an empty claim: the best that polling can do, at a database cost no application
 * would accept. Each variant runs the profile's number of rounds, interleaved with the baseline, and
 * each percentile is the median over those rounds: a single stall of the machine (a slow fsync, a
 * descheduled thread) lands in one round's p99 rather than in the figure.
 */
final class SteadyStateWorkload implements Workload {

	static final int CONCURRENCY = 4;

	static final int BATCH_SIZE = 10;

	static final int PRODUCERS = 2;

	@Override
	public String name() {
		return "steady-state";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		Profile profile = context.profile();
		List<Result> results = new ArrayList<>();
		try (BenchSchema schema = context.database().createSchema("steady")) {
			HikariDataSource consumers = schema.pool("steady-consumers", CONCURRENCY + 2);
			HikariDataSource producers = schema.pool("steady-producers", PRODUCERS);
			HikariDataSource listener = schema.pool("steady-listener", 1);
			for (QueueMode mode : DrainWorkload.MODES) {
				// Rounds interleave the variants with their baseline; each percentile reported is the
				// median over the rounds, so that a stall of the machine decides one round, not the figure.
				List<Latencies> raw = new ArrayList<>();
				Map<Pickup, List<Latencies>> pgqueue = new EnumMap<>(Pickup.class);
				for (int round = 1; round <= profile.rounds(); round++) {
					schema.truncate();
					Latencies rawRound = raw(schema, consumers, producers, mode, profile);
					raw.add(rawRound);
					for (Pickup pickup : Pickup.values()) {
						schema.truncate();
						Latencies pgqueueRound = pgqueue(schema, consumers, producers, listener, mode, pickup, profile);
						pgqueue.computeIfAbsent(pickup, (key) -> new ArrayList<>()).add(pgqueueRound);
						context.progress("%-40s round %d: pgqueue p50 %7.2f p99 %7.2f ms   raw p50 %5.2f p99 %5.2f ms",
								variant(mode, pickup, profile), round, pgqueueRound.percentileMillis(50),
								pgqueueRound.percentileMillis(99), rawRound.percentileMillis(50),
								rawRound.percentileMillis(99));
					}
				}
				for (Pickup pickup : Pickup.values()) {
					for (double p : new double[] { 50, 95, 99 }) {
						results.add(Result.lower(name(), variant(mode, pickup, profile), "pickup p" + (int) p, "ms",
								medianMillis(pgqueue.get(pickup), p), medianMillis(raw, p),
								(p == 99 && pickup.targeted) ? Target.valueAtMost(10) : null));
					}
				}
			}
		}
		return results;
	}

	private static String variant(QueueMode mode, Pickup pickup, Profile profile) {
		return mode.name().toLowerCase(Locale.ROOT) + ", " + pickup.label + " @ " + profile.steadyRate() + "/s";
	}

	/** The median over rounds of one percentile. */
	private static double medianMillis(List<Latencies> rounds, double percentile) {
		return Profile.median(rounds.stream().map((round) -> round.percentileMillis(percentile)).toList());
	}

	private static Latencies pgqueue(BenchSchema schema, HikariDataSource consumers, HikariDataSource producers,
			HikariDataSource listener, QueueMode mode, Pickup pickup, Profile profile) throws InterruptedException {
		Map<UUID, Long> started = new ConcurrentHashMap<>();
		QueueSettings settings = PgqueueEngine.settings(mode, CONCURRENCY, BATCH_SIZE, pickup.pollInterval);
		try (PgqueueEngine engine = new PgqueueEngine(consumers, schema.name(), settings,
				DrainWorkload.deletes(mode), QueueMetrics.NONE, (job) -> started.putIfAbsent(job.id(), System.nanoTime()))) {
			JobPoller poller = engine.poller();
			poller.start();
			JobClient client = switch (pickup) {
				case DEFAULT_POLL, FAST_POLL -> engine.client(producers, null);
				case SAME_INSTANCE -> engine.localClient(producers, poller);
				case OTHER_INSTANCE -> engine.client(producers, EngineSettings.DEFAULT_NOTIFY_INTERVAL);
				case OTHER_INSTANCE_EVERY_ENQUEUE -> engine.client(producers, Duration.ZERO);
			};
			if (pickup.listens) {
				engine.listen(listener, poller);
			}
			return produce(profile, started, pickup.pollInterval,
					() -> client.enqueue(BenchSchema.KIND, new EnqueueWorkload.Payload(1)), null);
		}
	}

	private static Latencies raw(BenchSchema schema, HikariDataSource consumers, HikariDataSource producers,
			QueueMode mode, Profile profile) throws Exception {
		Map<UUID, Long> started = new ConcurrentHashMap<>();
		AtomicBoolean running = new AtomicBoolean(true);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		List<Thread> loops = new ArrayList<>();
		for (int i = 0; i < CONCURRENCY; i++) {
			String owner = "raw-" + UUID.randomUUID().toString().substring(0, 8);
			Thread loop = new Thread(() -> {
				try (Connection connection = consumers.getConnection()) {
					RawQueue queue = new RawQueue(connection, schema.name());
					connection.setAutoCommit(mode == QueueMode.LEASED);
					while (running.get()) {
						List<RawJob> jobs = (mode == QueueMode.TRANSACTIONAL) ? queue.claimLocked(BATCH_SIZE)
								: queue.claimLeased(BATCH_SIZE, owner, Drains.LEASE_MILLIS);
						long now = System.nanoTime();
						jobs.forEach((job) -> started.putIfAbsent(job.publicId(), now));
						if (mode == QueueMode.TRANSACTIONAL) {
							if (!jobs.isEmpty()) {
								queue.deleteLocked(jobs);
							}
							connection.commit();
						}
						else if (!jobs.isEmpty()) {
							queue.completeLeasedMany(jobs);
						}
						if (jobs.isEmpty()) {
							LockSupport.parkNanos(1_000_000);
						}
					}
					connection.setAutoCommit(true);
					queue.close();
				}
				catch (Throwable ex) {
					failure.compareAndSet(null, ex);
				}
			}, "raw-steady-" + i);
			loop.start();
			loops.add(loop);
		}
		try {
			return produce(profile, started, Duration.ofMillis(1), null, () -> {
				Connection connection = producers.getConnection();
				RawQueue queue = new RawQueue(connection, schema.name());
				return new Producer() {
					@Override
					public UUID enqueue() throws Exception {
						UUID id = UUID.randomUUID();
						queue.insertOne(id, EnqueueWorkload.PAYLOAD_JSON);
						return id;
					}

					@Override
					public void close() throws SQLException {
						queue.close();
						connection.close();
					}
				};
			});
		}
		finally {
			running.set(false);
			for (Thread loop : loops) {
				loop.join();
			}
			if (failure.get() != null) {
				throw new IllegalStateException("Raw consumer failed: " + failure.get(), failure.get());
			}
		}
	}

	/**
	 * Enqueues at the profile's rate from {@link #PRODUCERS} threads for the warm-up and measured
	 * windows, waits until every job has started, and returns the pickup latencies of the jobs
	 * enqueued in the measured window.
	 */
	private static Latencies produce(Profile profile, Map<UUID, Long> started, Duration pollInterval,
			Producer shared, ProducerFactory perThread) throws InterruptedException {
		Map<UUID, Long> committed = new ConcurrentHashMap<>();
		AtomicReference<Throwable> failure = new AtomicReference<>();
		long intervalNanos = 1_000_000_000L / profile.steadyRate();
		long start = System.nanoTime() + 50_000_000;
		long measureFrom = start + profile.warmUp().toNanos();
		long end = measureFrom + profile.measure().toNanos();
		List<Thread> threads = new ArrayList<>();
		for (int p = 0; p < PRODUCERS; p++) {
			int offset = p;
			Thread thread = new Thread(() -> {
				try (Producer producer = (perThread != null) ? perThread.create() : shared) {
					for (long i = offset;; i += PRODUCERS) {
						long due = start + i * intervalNanos;
						if (due >= end) {
							return;
						}
						long wait;
						while ((wait = due - System.nanoTime()) > 0) {
							LockSupport.parkNanos(wait);
						}
						UUID id = producer.enqueue();
						committed.put(id, System.nanoTime());
					}
				}
				catch (Throwable ex) {
					failure.compareAndSet(null, ex);
				}
			}, "producer-" + p);
			thread.start();
			threads.add(thread);
		}
		for (Thread thread : threads) {
			thread.join();
		}
		if (failure.get() != null) {
			throw new IllegalStateException("Producer failed: " + failure.get(), failure.get());
		}
		long deadline = System.nanoTime() + pollInterval.toNanos() * 3 + 10_000_000_000L;
		while (!started.keySet().containsAll(committed.keySet()) && System.nanoTime() < deadline) {
			Drains.sleep(5);
		}
		Latencies latencies = new Latencies();
		committed.forEach((id, at) -> {
			Long begun = started.get(id);
			if (at >= measureFrom) {
				// A job never started counts as taking the whole wait: it must not vanish from p99.
				long latency = (begun != null) ? begun - at : deadline - at;
				// The handler can start before the producer's clock read after commit returns.
				latencies.add(Math.max(0, latency));
			}
		});
		return latencies;
	}

	/** How pgqueue's poller learns about new jobs. */
	enum Pickup {

		DEFAULT_POLL("poll " + QueueSettings.DEFAULT_POLL_INTERVAL.toMillis() + " ms",
				QueueSettings.DEFAULT_POLL_INTERVAL, false, false),

		FAST_POLL("poll 100 ms", Duration.ofMillis(100), false, false),

		/**
		 * The starter's default with producers in the same application: the client wakes the poller
		 * in-process after commit; inserts notify and a listener runs, as for other producers.
		 */
		SAME_INSTANCE("notify, same app", QueueSettings.DEFAULT_POLL_INTERVAL, true, true),

		/**
		 * The starter's default with producers in another application: only LISTEN/NOTIFY wakes the
		 * poller, and the producers notify the queue at most every 2 ms.
		 */
		OTHER_INSTANCE("notify, other app", QueueSettings.DEFAULT_POLL_INTERVAL, true, true),

		/**
		 * As {@link #OTHER_INSTANCE} but notifying on every enqueue
		 * ({@code pgqueue.notifications.min-interval=0}): shows what the throttle is for.
		 */
		OTHER_INSTANCE_EVERY_ENQUEUE("notify every enqueue, other app", QueueSettings.DEFAULT_POLL_INTERVAL, true,
				false);

		final String label;

		final Duration pollInterval;

		final boolean listens;

		final boolean targeted;

		Pickup(String label, Duration pollInterval, boolean listens, boolean targeted) {
			this.label = label;
			this.pollInterval = pollInterval;
			this.listens = listens;
			this.targeted = targeted;
		}

	}

	private interface Producer extends AutoCloseable {

		/** Enqueues one job and returns its public id once committed. */
		UUID enqueue() throws Exception;

		@Override
		default void close() throws SQLException {
		}

	}

	@FunctionalInterface
	private interface ProducerFactory {

		Producer create() throws Exception;

	}

}
