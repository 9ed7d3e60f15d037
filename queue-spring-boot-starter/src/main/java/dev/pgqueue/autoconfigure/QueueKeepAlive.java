package dev.pgqueue.autoconfigure;

import java.util.concurrent.CountDownLatch;
import java.util.function.BooleanSupplier;

import dev.pgqueue.engine.QueueEngine;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.SmartLifecycle;

/**
 * Keeps the JVM alive while this application processes jobs, as Spring Boot's
 * {@code spring.main.keep-alive} does for any application. Every engine thread is a daemon, so that an
 * engine a test or a tool forgets to stop never holds a JVM; an application without a web server (the
 * usual shape of a worker) therefore has nothing else that keeps it running once {@code main} returns.
 *
 * <p>One non-daemon thread waits from the start of the context's lifecycle until its stop. Its phase is
 * just below the engine's, so it starts before the pollers and stops after they stopped, their running
 * jobs finished or released: a {@code SIGTERM} or {@code SIGINT} closes the context through Spring
 * Boot's shutdown hook, and the JVM exits once that is done. It holds nothing when the application
 * does not process jobs (a producer, {@code pgqueue.enabled=false}, no listener and no recurring job):
 * such an application ends when its own work ends.
 */
public final class QueueKeepAlive implements SmartLifecycle, DisposableBean {

	/** Starts before the engine and stops after it. */
	public static final int PHASE = QueueEngine.PHASE - 1;

	private static final Logger logger = LoggerFactory.getLogger(QueueKeepAlive.class);

	private final BooleanSupplier processing;

	private @Nullable Thread thread;

	private @Nullable CountDownLatch released;

	/**
	 * @param processing asked at start: whether this application claims and runs jobs
	 */
	public QueueKeepAlive(BooleanSupplier processing) {
		this.processing = processing;
	}

	@Override
	public synchronized void start() {
		if (this.thread != null || !this.processing.getAsBoolean()) {
			return;
		}
		CountDownLatch released = new CountDownLatch(1);
		Thread thread = new Thread(() -> {
			try {
				released.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}, "pgqueue-keep-alive");
		thread.setDaemon(false);
		thread.start();
		this.released = released;
		this.thread = thread;
		logger.debug("Keeping the JVM alive while this application processes jobs (pgqueue.keep-alive)");
	}

	@Override
	public synchronized void stop() {
		if (this.released != null) {
			this.released.countDown();
		}
		this.released = null;
		this.thread = null;
	}

	/**
	 * Releases the thread when the context is destroyed without being stopped: a context whose
	 * start-up failed after this started (the engine's own start threw) must not leave a JVM that
	 * never exits.
	 */
	@Override
	public void destroy() {
		stop();
	}

	/** The thread that holds the JVM, while it does. */
	synchronized @Nullable Thread thread() {
		return this.thread;
	}

	/** Whether a non-daemon thread holds the JVM. */
	@Override
	public synchronized boolean isRunning() {
		return this.thread != null;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
