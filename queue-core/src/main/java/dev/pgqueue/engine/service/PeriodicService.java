package dev.pgqueue.engine.service;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;


/**
 * A service that runs one short task on a thread of its own: at start, then each interval after the
 * last run ended. A failing run, whatever it threw, is logged and counted ({@link #health()}) and the
 * next one comes on time: a database that is away for a while costs a warning per interval, never
 * the service.
 */
public abstract class PeriodicService implements EngineService {

	private final String name;

	private final Duration interval;

	private final ServiceHealth health;

	private volatile @Nullable ScheduledThreadPoolExecutor scheduler;

	/** Whether a run asked for by {@link #runSoon()} is waiting for the thread. */
	private final AtomicBoolean soon = new AtomicBoolean();

	/**
	 * @param name what the service does, which names its thread ({@code pgqueue-<name>})
	 * @param interval time between the end of one run and the start of the next
	 */
	protected PeriodicService(String name, Duration interval) {
		this.name = name;
		this.interval = interval;
		this.health = new ServiceHealth(name);
	}

	/** One run of the task, on the service's thread (or on the caller's, when called directly). */
	protected abstract void runOnce();

	@Override
	public String name() {
		return this.name;
	}

	@Override
	public ServiceHealth health() {
		return this.health;
	}

	/** Time between the end of one run and the start of the next. */
	public Duration interval() {
		return this.interval;
	}

	@Override
	public synchronized void start() {
		if (this.scheduler != null) {
			return;
		}
		this.scheduler = EngineThreads.newScheduler(null, this.name.replace(' ', '-'), 0);
		this.scheduler.scheduleWithFixedDelay(this::runLogged, 0, this.interval.toNanos(), TimeUnit.NANOSECONDS);
	}

	/**
	 * Runs the task once more as soon as the service's thread is free, besides its schedule; asks made
	 * before that run starts are all served by it. Does nothing while the service is stopped. Never
	 * blocks: a caller on another service's thread (the notification listener) is not held up.
	 */
	public void runSoon() {
		ScheduledThreadPoolExecutor current = this.scheduler;
		if (current == null || !this.soon.compareAndSet(false, true)) {
			return;
		}
		try {
			current.execute(() -> {
				this.soon.set(false);
				runLogged();
			});
		}
		catch (RejectedExecutionException ex) {
			// Stopping: the service runs no more.
			this.soon.set(false);
		}
	}

	private void runLogged() {
		try {
			runOnce();
		}
		catch (Throwable ex) {
			// An Error too: thrown out of a scheduled task, it would end every later run without a word.
			this.health.failed(ex, "it runs again in " + this.interval);
		}
	}

	@Override
	public synchronized void stop() {
		if (this.scheduler == null) {
			return;
		}
		this.scheduler.shutdownNow();
		try {
			this.scheduler.awaitTermination(5, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.scheduler = null;
	}

	@Override
	public synchronized boolean isRunning() {
		return this.scheduler != null;
	}

}
