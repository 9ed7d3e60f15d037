package dev.pgqueue.engine.poll;

import java.util.List;

import dev.pgqueue.engine.service.EngineService;

/**
 * How a {@link JobPoller} claims the jobs of its queue and runs them: one implementation per mode.
 * The poller owns the loop (when to claim, how long to wait, backing off on errors, stopping); a
 * strategy owns what a claim is and what happens to the jobs it returns.
 *
 * <p>A strategy starts no thread of its own: the threads it needs belong to the services it hands
 * the poller ({@link #prepare}), which the poller starts and stops. The poll thread calls
 * {@link #beforeClaim}, {@link #claimRoom} and {@link #claim}; worker threads run whatever the
 * strategy hands them through {@link Workers}; the stopping thread calls {@link #stopClaiming} and
 * {@link #abandonRunning}, in that order, then stops the strategy's services.
 */
public interface ClaimStrategy {

	/**
	 * The poller starts: the strategy takes this run's workers and signals, and returns the services
	 * it needs while the poller runs (a lease keeper, a completer), in the order they start. The
	 * poller starts them before its poll thread, and stops them in the reverse order once every worker
	 * has finished or been abandoned.
	 */
	List<EngineService> prepare(Workers workers, PollSignals signals);

	/** Called on the poll thread before each look at {@link #claimRoom()}, while claiming goes on. */
	default void beforeClaim() {
	}

	/** How many jobs the next claim may take now; zero while there is no reason to claim. */
	int claimRoom();

	/**
	 * Claims up to {@code room} jobs and hands them to workers.
	 * @return whether the claim came back full (more jobs are likely due, so the poller claims again
	 * at once)
	 * @throws RuntimeException when the claim failed; the poller backs off
	 */
	boolean claim(int room) throws InterruptedException;

	/** The poll thread has ended: give back whatever no worker has started. */
	void stopClaiming();

	/**
	 * The shutdown timeout passed with jobs still running: put them back without using an attempt
	 * and interrupt their threads.
	 */
	void abandonRunning();

	/** Jobs claimed but not started, waiting for a worker. */
	default int claimedAhead() {
		return 0;
	}

}
