package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.MicrometerQueueMetrics;
import dev.pgqueue.metrics.QueueMetrics;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * Workload: the public cross-queue benchmark's throughput cell. A producer keeps about
 * {@value #WAITING} jobs waiting (it tops the queue up with {@code enqueueAll} batches of at most
 * {@value #TOP_UP} whenever fewer wait), {@value #WORKERS} workers take them, each job sleeps 1 ms,
 * one process; pgqueue's settings are left at their defaults but for the workers (its concurrency).
 * The figure is jobs completed per second over the measured window, the median of the profile's
 * rounds.
 *
 * <p>Three sides, interleaved within each round: pgqueue with its defaults, pgqueue as it claimed
 * before batches adapted (a fixed batch of {@value #FIXED_BATCH}: the engine of the issue that
 * measured this cell), and the raw SQL loop ({@value #WORKERS} threads claiming batches of
 * {@value #FIXED_BATCH} with {@code FOR UPDATE SKIP LOCKED}, sleeping per job, deleting, committing).
 */
final class DeepBacklogWorkload implements Workload {

	static final int WAITING = 4_000;

	static final int TOP_UP = 128;

	static final int WORKERS = 64;

	static final int FIXED_BATCH = 10;

	static final Duration JOB = Duration.ofMillis(1);

	@Override
	public String name() {
		return "deep-backlog";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		Profile profile = context.profile();
		Duration window = profile.deepBacklogWindow();
		List<Double> adaptive = new ArrayList<>();
		List<Double> fixed = new ArrayList<>();
		List<Double> raw = new ArrayList<>();
		try (BenchSchema schema = context.database().createSchema("deep")) {
			HikariDataSource workers = schema.pool("deep-workers", WORKERS + 2);
			HikariDataSource producer = schema.pool("deep-producer", 2);
			for (int round = 1; round <= profile.rounds() + 1; round++) {
				// The first round warms the JIT and the table, unmeasured.
				boolean measured = round > 1;
				double a = pgqueue(schema, workers, producer, UnaryOperator.identity(), window);
				double f = pgqueue(schema, workers, producer,
						(settings) -> settings.withBatchSize(FIXED_BATCH).withMaxBatchSize(FIXED_BATCH), window);
				double r = raw(schema, workers, producer, window);
				if (measured) {
					adaptive.add(a);
					fixed.add(f);
					raw.add(r);
				}
				context.progress("deep backlog round %d%s: pgqueue defaults %,.0f  fixed batch of %d %,.0f  raw %,.0f jobs/s",
						round, measured ? "" : " (warm-up)", a, FIXED_BATCH, f, r);
			}
		}
		String variant = String.format(Locale.ROOT, "%,d waiting, %d workers, 1 ms jobs, transactional", WAITING,
				WORKERS);
		return List.of(
				Result.higher(name(), variant + ", defaults", "throughput", "jobs/s", Profile.median(adaptive),
						Profile.median(raw), null),
				Result.higher(name(), variant + ", fixed batch of " + FIXED_BATCH + " (before)", "throughput", "jobs/s",
						Profile.median(fixed), Profile.median(raw), null));
	}

	private static double pgqueue(BenchSchema schema, HikariDataSource workers, HikariDataSource producer,
			UnaryOperator<QueueSettings> variant, Duration window) throws InterruptedException {
		schema.truncate();
		AtomicLong done = new AtomicLong();
		QueueSettings settings = variant.apply(QueueSettings.defaults(BenchSchema.QUEUE).withConcurrency(WORKERS));
		// Completed jobs are kept (the default completed retention); the producer's client wakes the
		// poller in-process after each enqueue, as the starter's does in one application.
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		try (PgqueueEngine engine = new PgqueueEngine(workers, schema.name(), settings, false,
				new MicrometerQueueMetrics(registry, List.of(BenchSchema.QUEUE)),
				(job) -> {
					Thread.sleep(JOB.toMillis());
					done.incrementAndGet();
				})) {
			JobPoller poller = engine.poller();
			try (Producer filler = new Producer(schema, engine.localClient(producer, poller))) {
				filler.fill();
				poller.start();
				double rate = measure(done, window);
				DistributionSummary sizes = registry.get("pgqueue.claim.batch.size").summary();
				Timer claims = registry.get("pgqueue.poll.cycle").timer();
				System.out.printf(Locale.ROOT, "    max-batch-size %d: %,d claims of %.0f jobs on average, each %.2f ms%n",
						settings.maxBatchSize(), sizes.count(), sizes.mean(), claims.mean(TimeUnit.MILLISECONDS));
				return rate;
			}
		}
	}

	private static double raw(BenchSchema schema, HikariDataSource workers, HikariDataSource producer,
			Duration window) throws Exception {
		schema.truncate();
		AtomicLong done = new AtomicLong();
		AtomicBoolean running = new AtomicBoolean(true);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		List<Thread> loops = new ArrayList<>();
		try (PgqueueEngine engine = new PgqueueEngine(workers, schema.name(),
				QueueSettings.defaults(BenchSchema.QUEUE), true, QueueMetrics.NONE, (job) -> {
				});
				Producer filler = new Producer(schema, engine.client(producer))) {
			filler.fill();
			CountDownLatch ready = new CountDownLatch(WORKERS);
			for (int i = 0; i < WORKERS; i++) {
				Thread loop = new Thread(() -> {
					try (Connection connection = workers.getConnection()) {
						RawQueue queue = new RawQueue(connection, schema.name());
						connection.setAutoCommit(false);
						ready.countDown();
						while (running.get()) {
							List<RawQueue.RawJob> jobs = queue.claimLocked(FIXED_BATCH);
							for (int j = 0; j < jobs.size(); j++) {
								Thread.sleep(JOB.toMillis());
							}
							if (!jobs.isEmpty()) {
								queue.deleteLocked(jobs);
							}
							connection.commit();
							done.addAndGet(jobs.size());
							if (jobs.isEmpty()) {
								Thread.sleep(1);
							}
						}
						queue.close();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
					catch (SQLException | RuntimeException ex) {
						failure.compareAndSet(null, ex);
						ready.countDown();
					}
				}, "raw-deep-" + i);
				loop.start();
				loops.add(loop);
			}
			ready.await();
			double rate = measure(done, window);
			running.set(false);
			for (Thread loop : loops) {
				loop.join(Drains.TIMEOUT.toMillis());
			}
			if (failure.get() != null) {
				throw new IllegalStateException("Raw deep-backlog loop failed: " + failure.get(), failure.get());
			}
			return rate;
		}
	}

	/** Jobs done per second over {@code window}, after a fifth of it to settle. */
	private static double measure(AtomicLong done, Duration window) throws InterruptedException {
		Thread.sleep(window.toMillis() / 5);
		long from = done.get();
		long start = System.nanoTime();
		Thread.sleep(window.toMillis());
		return (done.get() - from) / ((System.nanoTime() - start) / 1e9);
	}

	/**
	 * Keeps about {@value #WAITING} jobs waiting: looks at how many wait, and tops up with batches of
	 * at most {@value #TOP_UP}, as fast as it can while fewer wait.
	 */
	private static final class Producer implements AutoCloseable {

		private final BenchSchema schema;

		private final JobClient client;

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final AtomicReference<Throwable> failure = new AtomicReference<>();

		private final Thread thread;

		Producer(BenchSchema schema, JobClient client) {
			this.schema = schema;
			this.client = client;
			this.thread = new Thread(this::run, "deep-producer");
		}

		/** Fills the queue to its level and starts keeping it there. */
		void fill() {
			while (this.schema.available() < WAITING) {
				topUp(TOP_UP);
			}
			this.thread.start();
		}

		private void run() {
			try {
				while (this.running.get()) {
					long missing = WAITING - this.schema.available();
					if (missing <= 0) {
						Thread.sleep(1);
						continue;
					}
					while (missing > 0 && this.running.get()) {
						int batch = (int) Math.min(TOP_UP, missing);
						topUp(batch);
						missing -= batch;
					}
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			catch (RuntimeException ex) {
				this.failure.compareAndSet(null, ex);
			}
		}

		private void topUp(int count) {
			List<JobRequest> requests = new ArrayList<>(count);
			for (int i = 0; i < count; i++) {
				requests.add(JobRequest.of(BenchSchema.KIND, new EnqueueWorkload.Payload(i)).queue(BenchSchema.QUEUE));
			}
			this.client.enqueueAll(requests);
		}

		@Override
		public void close() throws InterruptedException {
			this.running.set(false);
			this.thread.join(Drains.TIMEOUT.toMillis());
			if (this.failure.get() != null) {
				throw new IllegalStateException("The deep-backlog producer failed: " + this.failure.get(),
						this.failure.get());
			}
		}

	}

}
