package dev.pgqueue.engine.leased;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.service.EngineThreads;
import dev.pgqueue.engine.service.FailureStreak;
import dev.pgqueue.engine.service.PooledConnections;
import dev.pgqueue.engine.service.ServiceHealth;
import dev.pgqueue.engine.settings.QueueSettings;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Extends the leases of every job a leased poller holds (claimed ahead, running, or finished with
 * its outcome not yet written) every third of the lease, on a timer of its own: independent of how
 * long the poll thread waits, and still running while shutdown waits for jobs to finish, so that a
 * shutdown timeout longer than the lease never lets another instance run them again. A failed
 * extension is retried at once when its connection was lost, else after a second.
 */
final class LeaseKeeper implements EngineService {

	private static final Logger logger = LoggerFactory.getLogger(LeaseKeeper.class);

	private static final Duration RETRY = Duration.ofSeconds(1);

	private final FailureStreak failures;

	private final LeasedJobs jobs;

	private final String queue;

	private final Duration period;

	private final EngineThreads threads;

	private @Nullable ScheduledExecutorService timer;

	private final ServiceHealth health;

	LeaseKeeper(LeasedJobs jobs, QueueSettings settings, EngineThreads threads, PooledConnections connections) {
		this.jobs = jobs;
		this.failures = new FailureStreak(connections);
		this.queue = settings.name();
		this.period = settings.leaseDuration().dividedBy(3);
		this.threads = threads;
		this.health = new ServiceHealth(this.queue + " lease keeper");
	}

	@Override
	public ServiceHealth health() {
		return this.health;
	}

	@Override
	public String name() {
		return this.queue + " lease keeper";
	}

	@Override
	public synchronized boolean isRunning() {
		return this.timer != null;
	}

	@Override
	public synchronized void start() {
		ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1,
				(task) -> this.threads.newThread(this.queue, "leases", task));
		timer.setRemoveOnCancelPolicy(true);
		this.timer = timer;
		schedule(this.period);
	}

	@Override
	public synchronized void stop() {
		if (this.timer != null) {
			this.timer.shutdownNow();
			this.timer = null;
		}
	}

	private synchronized void schedule(Duration delay) {
		if (this.timer != null) {
			this.timer.schedule(this::extend, delay.toNanos(), TimeUnit.NANOSECONDS);
		}
	}

	private void extend() {
		Duration next = this.period;
		long started = System.nanoTime();
		try {
			this.jobs.extendLeases();
			this.failures.succeeded();
		}
		catch (RuntimeException ex) {
			// A lost connection is tried again at once, on a fresh one; other failures within RETRY.
			Duration pause = this.failures.failed(ex, started).delay();
			next = (pause.compareTo(RETRY) < 0) ? pause : RETRY;
			logger.warn("Queue '{}': could not extend the leases of {} held jobs; retrying in {} ms: {}", this.queue,
					this.jobs.heldCount(), next.toMillis(), ex.toString());
		}
		catch (Throwable ex) {
			// Thrown out of the timer's task, an Error would end every later extension without a word.
			next = RETRY;
			this.health.failed(ex, "it tries again in " + RETRY.toMillis() + " ms");
		}
		schedule(next);
	}

}
