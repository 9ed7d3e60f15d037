package dev.pgqueue.engine.service;

/**
 * A long-running part of the engine. Each starts and stops the same way: {@link #start()} makes its
 * threads (from {@link EngineThreads}) and returns at once, {@link #stop()} returns once they have
 * ended, and both do nothing when the service is already where they would take it. The engine starts
 * its services in one order and stops them in the reverse.
 */
public interface EngineService {

	/** What the service does, as its threads are named: {@code promoter}, {@code orders-poller}. */
	String name();

	void start();

	void stop();

	boolean isRunning();

}
