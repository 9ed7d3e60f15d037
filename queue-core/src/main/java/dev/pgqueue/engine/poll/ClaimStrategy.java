package dev.pgqueue.engine.poll;

/**
 * How a {@link JobPoller} claims the jobs of its queue and runs them: one implementation per mode.
 * The poller owns the loop (when to claim, how long to wait, backing off on errors, stopping); a
 * strategy owns what a claim is and what happens to the jobs it returns.
 *
 * <p>The poll thread calls {@link #beforeClaim}, {@link #claimRoom} and {@link #claim}; worker
 * threads run whatever the strategy hands them through {@link Workers}; the stopping thread calls
 * {@link #stopClaiming}, {@link #abandonRunning} and {@link #close}, in that order.
 */
public interface ClaimStrategy {

	/** The poller starts: the strategy may start its own services (a lease keeper, a completer). */
	void start(Workers workers, PollSignals signals);

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

	/** Every worker has finished or been abandoned: stop the strategy's own services. */
	void close();

	/** Jobs claimed but not started, waiting for a worker. */
	default int claimedAhead() {
		return 0;
	}

}
