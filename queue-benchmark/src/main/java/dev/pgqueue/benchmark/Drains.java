package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import javax.sql.DataSource;

import dev.pgqueue.JobEvent;
import dev.pgqueue.QueueMode;
import dev.pgqueue.benchmark.RawQueue.RawJob;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;

import org.springframework.context.ApplicationListener;
import org.springframework.context.PayloadApplicationEvent;
import org.springframework.context.event.SimpleApplicationEventMulticaster;

/**
 * Drains the jobs already in a schema's table, with pgqueue's pollers or with the raw loop, and
 * times it from start until the last outcome is committed.
 */
final class Drains {

	static final Duration TIMEOUT = Duration.ofMinutes(10);

	/** Lease of the raw leased loop: the engine's default, so both write the same values. */
	static final long LEASE_MILLIS = QueueSettings.DEFAULT_LEASE_DURATION.toMillis();

	private Drains() {
	}

	/**
	 * Drains {@code jobs} jobs with {@code pollers} pollers of the given settings sharing
	 * {@code pool}, as if run by as many application instances, until none is left unfinished or
	 * {@code cap} has passed.
	 */
	static Drained pgqueue(BenchSchema schema, DataSource pool, QueueSettings settings, boolean deleteCompleted,
			int pollers, long jobs, QueueMetrics metrics, Duration cap) {
		return pgqueue(schema, pool, settings, deleteCompleted, pollers, jobs, metrics, cap, false);
	}

	/**
	 * As {@link #pgqueue(BenchSchema, DataSource, QueueSettings, boolean, int, long, QueueMetrics, Duration)};
	 * with {@code eventsAndInterceptor}, every job's events go through a Spring event multicaster to one
	 * listener, as in an application with an {@code @EventListener} of job events, and every attempt
	 * through one interceptor.
	 */
	static Drained pgqueue(BenchSchema schema, DataSource pool, QueueSettings settings, boolean deleteCompleted,
			int pollers, long jobs, QueueMetrics metrics, Duration cap, boolean eventsAndInterceptor) {
		AtomicLong handled = new AtomicLong();
		try (PgqueueEngine engine = new PgqueueEngine(pool, schema.name(), settings, deleteCompleted, metrics,
				(job) -> handled.incrementAndGet())) {
			if (eventsAndInterceptor) {
				SimpleApplicationEventMulticaster multicaster = new SimpleApplicationEventMulticaster();
				LongAdder heard = new LongAdder();
				multicaster.addApplicationListener((ApplicationListener<PayloadApplicationEvent<JobEvent>>) (event) -> heard
					.increment());
				LongAdder intercepted = new LongAdder();
				engine.withEventsAndInterceptors(
						(event) -> multicaster.multicastEvent(new PayloadApplicationEvent<>(engine, event)),
						List.of((job, invocation) -> {
							intercepted.increment();
							invocation.proceed();
						}));
			}
			List<JobPoller> started = new ArrayList<>();
			for (int i = 0; i < pollers; i++) {
				started.add(engine.poller());
			}
			long start = System.nanoTime();
			long deadline = start + cap.toNanos();
			started.forEach(JobPoller::start);
			awaitTrue(() -> handled.get() >= jobs || System.nanoTime() > deadline,
					() -> "pgqueue ran " + handled.get() + " of " + jobs + " jobs");
			if (handled.get() >= jobs) {
				// The last outcomes commit after their handlers return.
				awaitTrue(() -> schema.unfinished() == 0 || System.nanoTime() > deadline,
						() -> schema.unfinished() + " jobs still unfinished");
			}
			// Only committed outcomes count.
			long finished = jobs - schema.unfinished();
			return new Drained(finished, (System.nanoTime() - start) / 1e9);
		}
	}

	/**
	 * Drains the table with {@code threads} raw loops, each on a connection of its own from
	 * {@code pool}, until a claim comes back empty, {@code maxClaims} claims were made or
	 * {@code cap} has passed.
	 * @param jobs jobs in the table when starting
	 * @param claimTimes where to record how long each claim that found jobs took, or {@code null}
	 */
	static Drained raw(BenchSchema schema, DataSource pool, QueueMode mode, int threads, int batchSize, long jobs,
			Latencies claimTimes, long maxClaims, Duration cap) {
		CountDownLatch ready = new CountDownLatch(threads);
		CountDownLatch go = new CountDownLatch(1);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		List<Thread> loops = new ArrayList<>();
		for (int i = 0; i < threads; i++) {
			String owner = "raw-" + UUID.randomUUID().toString().substring(0, 8);
			Thread loop = new Thread(() -> {
				try (Connection connection = pool.getConnection()) {
					RawQueue queue = new RawQueue(connection, schema.name());
					ready.countDown();
					go.await();
					long deadline = System.nanoTime() + cap.toNanos();
					if (mode == QueueMode.TRANSACTIONAL) {
						drainLocked(queue, batchSize, claimTimes, maxClaims, deadline);
					}
					else {
						drainLeased(queue, batchSize, owner, claimTimes, maxClaims, deadline);
					}
					queue.close();
				}
				catch (Throwable ex) {
					failure.compareAndSet(null, ex);
					ready.countDown();
				}
			}, "raw-drain-" + i);
			loop.start();
			loops.add(loop);
		}
		try {
			ready.await();
			long start = System.nanoTime();
			go.countDown();
			for (Thread loop : loops) {
				loop.join(TIMEOUT.toMillis());
			}
			long elapsed = System.nanoTime() - start;
			if (failure.get() != null) {
				throw new IllegalStateException("Raw drain failed: " + failure.get(), failure.get());
			}
			return new Drained(jobs - schema.unfinished(), elapsed / 1e9);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	/** Claim a batch, run it, delete it and commit: the transactional mode's cycle without a framework. */
	private static void drainLocked(RawQueue queue, int batchSize, Latencies claimTimes, long maxClaims,
			long deadline) throws SQLException {
		Connection connection = queue.connection();
		connection.setAutoCommit(false);
		try {
			for (long claims = 0; claims < maxClaims && System.nanoTime() < deadline; claims++) {
				long start = System.nanoTime();
				List<RawJob> jobs = queue.claimLocked(batchSize);
				if (claimTimes != null && !jobs.isEmpty()) {
					claimTimes.add(System.nanoTime() - start);
				}
				if (jobs.isEmpty()) {
					connection.commit();
					return;
				}
				queue.deleteLocked(jobs);
				connection.commit();
			}
		}
		finally {
			connection.rollback();
			connection.setAutoCommit(true);
		}
	}

	/**
	 * Claim a batch with a lease (committed at once), then complete it with the completer's guarded
	 * statement.
	 */
	private static void drainLeased(RawQueue queue, int batchSize, String owner, Latencies claimTimes,
			long maxClaims, long deadline) throws SQLException {
		for (long claims = 0; claims < maxClaims && System.nanoTime() < deadline; claims++) {
			long start = System.nanoTime();
			List<RawJob> jobs = queue.claimLeased(batchSize, owner, LEASE_MILLIS);
			if (claimTimes != null && !jobs.isEmpty()) {
				claimTimes.add(System.nanoTime() - start);
			}
			if (jobs.isEmpty()) {
				return;
			}
			if (queue.completeLeasedMany(jobs) != jobs.size()) {
				throw new IllegalStateException("Raw completion found jobs changed under their lease");
			}
		}
	}

	/**
	 * What a drain achieved.
	 *
	 * @param finished jobs whose outcome was committed
	 * @param seconds how long it took
	 */
	record Drained(long finished, double seconds) {

		double rate() {
			return this.finished / this.seconds;
		}

	}

	/** Checks every millisecond until the condition holds; fails after {@link #TIMEOUT}. */
	static void awaitTrue(BooleanSupplier condition, java.util.function.Supplier<String> state) {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Timed out after " + TIMEOUT + ": " + state.get());
			}
			sleep(1);
		}
	}

	static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

}
