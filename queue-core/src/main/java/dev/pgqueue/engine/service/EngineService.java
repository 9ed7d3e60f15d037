package dev.pgqueue.engine.service;

import java.util.List;

/**
 * A long-running part of the engine, and every part that makes a thread. Each starts and stops the
 * same way: {@link #start()} makes its threads (from {@link EngineThreads}) and returns at once,
 * {@link #stop()} returns once they have ended, and both do nothing when the service is already where
 * they would take it. The engine starts its services in one order and stops them in the reverse
 * ({@link #startAll}, {@link #stopAll}); a part that makes services for a while (a poller's claim
 * strategy, its bucket coordinator) hands them to its owner to start and stop, rather than having a
 * lifecycle of its own.
 *
 * <p>A service whose thread is made only when work comes and ends when idle (the claim checks, the
 * notifications sent later) is ready as soon as it is made, so that what uses it before the engine
 * starts finds it working; its {@link #stop()} ends the thread and turns later work away.
 *
 * <p>A service's loop survives any failure of one iteration, an {@link Error} too, and reports it to
 * its {@link #health()}: no thread of the engine ends without a word.
 */
public interface EngineService {

	/** What the service does, as its threads are named: {@code promoter}, {@code orders-poller}. */
	String name();

	void start();

	void stop();

	boolean isRunning();

	/**
	 * How the service's loop fares: failures of its iterations, survived, and what ended its thread if
	 * it ended on its own. A service whose work runs on others' threads has none to report.
	 */
	default ServiceHealth health() {
		return ServiceHealth.NOT_WATCHED;
	}

	/** Starts the services in the order given. */
	static void startAll(List<? extends EngineService> services) {
		services.forEach(EngineService::start);
	}

	/** Stops the services in the reverse of the order given, the order they were started in. */
	static void stopAll(List<? extends EngineService> services) {
		for (int i = services.size() - 1; i >= 0; i--) {
			services.get(i).stop();
		}
	}

}
