package dev.pgqueue.engine.service;

import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.core.NestedExceptionUtils;

/**
 * A service that runs one short task on a thread of its own: at start, then each interval after the
 * last run ended. A failing run is logged and the next one comes on time: a database that is away
 * for a while costs a warning per interval, never the service.
 */
public abstract class PeriodicService implements EngineService {

	private static final Logger logger = LoggerFactory.getLogger(PeriodicService.class);

	private final String name;

	private final Duration interval;

	private @Nullable ScheduledThreadPoolExecutor scheduler;

	/**
	 * @param name what the service does, which names its thread ({@code pgqueue-<name>})
	 * @param interval time between the end of one run and the start of the next
	 */
	protected PeriodicService(String name, Duration interval) {
		this.name = name;
		this.interval = interval;
	}

	/** One run of the task, on the service's thread (or on the caller's, when called directly). */
	protected abstract void runOnce();

	@Override
	public String name() {
		return this.name;
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

	private void runLogged() {
		try {
			runOnce();
		}
		catch (RuntimeException ex) {
			logger.warn("pgqueue {} failed; it runs again in {}: {}", this.name, this.interval, describe(ex));
		}
	}

	/**
	 * A failure as a log line shows it: the exception, and the database's own words when Spring's
	 * translation leaves them out (a {@code BadSqlGrammarException} for a refused permission says
	 * only "bad SQL grammar []"; its cause says "permission denied for table …").
	 */
	public static String describe(Throwable ex) {
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(ex);
		return (cause == ex) ? ex.toString() : ex + " (" + cause + ")";
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
