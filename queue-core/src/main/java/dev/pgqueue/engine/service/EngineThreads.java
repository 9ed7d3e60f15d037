package dev.pgqueue.engine.service;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

import org.springframework.core.task.VirtualThreadTaskExecutor;

/**
 * Makes every thread of the engine, named after the queue it serves and its role:
 * {@code pgqueue-orders-poller}, {@code pgqueue-orders-worker-3}, {@code pgqueue-promoter}. Platform
 * threads are daemons, so that an engine nobody stopped never keeps a JVM alive; where the
 * application runs on virtual threads, the threads that mostly wait (pollers, workers, keepers) are
 * virtual too.
 */
public final class EngineThreads {

	private static final String PREFIX = "pgqueue-";

	/** Platform threads only. */
	public static final EngineThreads PLATFORM = new EngineThreads(false);

	private final boolean virtual;

	/** @param virtual whether {@link #newThread} makes virtual threads */
	public EngineThreads(boolean virtual) {
		this.virtual = virtual;
	}

	/** Whether {@link #newThread} and {@link #factory} make virtual threads. */
	public boolean virtual() {
		return this.virtual;
	}

	/** {@code pgqueue-<queue>-<role>}, or {@code pgqueue-<role>} when {@code queue} is null. */
	public static String name(@Nullable String queue, String role) {
		return (queue != null) ? PREFIX + queue + "-" + role : PREFIX + role;
	}

	/** A new, unstarted thread of the configured kind that runs {@code task}. */
	public Thread newThread(@Nullable String queue, String role, Runnable task) {
		String name = name(queue, role);
		if (this.virtual) {
			return new VirtualThreadTaskExecutor(name).getVirtualThreadFactory().newThread(task);
		}
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		return thread;
	}

	/** Makes platform daemon threads numbered from 1: {@code pgqueue-<queue>-<role>-1}, … */
	public static ThreadFactory platformFactory(@Nullable String queue, String role) {
		String prefix = name(queue, role) + "-";
		AtomicInteger count = new AtomicInteger();
		return (task) -> {
			Thread thread = new Thread(task, prefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	/**
	 * A scheduler of one platform daemon thread named {@code pgqueue-<queue>-<role>}, whose cancelled
	 * tasks are removed at once; the thread ends after {@code keepAliveSeconds} without a task when
	 * that is positive.
	 */
	public static ScheduledThreadPoolExecutor newScheduler(@Nullable String queue, String role, long keepAliveSeconds) {
		String name = name(queue, role);
		ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		});
		scheduler.setRemoveOnCancelPolicy(true);
		if (keepAliveSeconds > 0) {
			scheduler.setKeepAliveTime(keepAliveSeconds, TimeUnit.SECONDS);
			scheduler.allowCoreThreadTimeOut(true);
		}
		return scheduler;
	}

}
