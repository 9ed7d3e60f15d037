package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What a poll thread waits for, and what wakes it: a wake-up (new jobs announced), a change among
 * its workers (a slot freed, jobs claimed ahead running low), a pause after failures, or stop; and
 * whether an operator paused the queue, which every thread that claims asks first.
 */
public final class PollSignals {

	private final BooleanSupplier queuePaused;

	private final ClaimFailures failures;

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition signal = this.lock.newCondition();

	private boolean wakeRequested;

	/** Set by workers, cleared by the poll thread once it has looked; read without the lock. */
	private volatile boolean workersChanged;

	private volatile boolean stopping;

	private volatile long pauseUntil = System.nanoTime();

	/**
	 * @param queuePaused whether an operator has paused the queue now; asked before every claim, so
	 * it must be cheap (see {@link QueuePauses})
	 * @param failures the queue's failed claims and batches, which decide how long claims pause
	 */
	public PollSignals(BooleanSupplier queuePaused, ClaimFailures failures) {
		this.queuePaused = queuePaused;
		this.failures = failures;
	}

	/** Whether an operator has paused the queue: no thread claims its jobs meanwhile. */
	public boolean queuePaused() {
		return this.queuePaused.getAsBoolean();
	}

	/** Asks the poll thread to poll now rather than at the end of its interval. */
	public void wakeUp() {
		this.lock.lock();
		try {
			this.wakeRequested = true;
			this.signal.signalAll();
		}
		finally {
			this.lock.unlock();
		}
	}

	/** A worker slot freed, or jobs claimed ahead ran low: the poll thread looks at its claim room again. */
	public void workersChanged() {
		if (this.workersChanged) {
			// The poll thread has not looked since the last signal: it will see this change too.
			// Saves hundreds of workers taking the lock thousands of times a second.
			return;
		}
		this.lock.lock();
		try {
			this.workersChanged = true;
			this.signal.signalAll();
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Whether the poller is stopping: no new claim, no new job. */
	public boolean isStopping() {
		return this.stopping;
	}

	/**
	 * A claim, or a batch whose claim had worked, failed: counts it with the queue's other failures
	 * and keeps every thread of the queue from claiming for as long as they call for (see
	 * {@link ClaimFailures}).
	 *
	 * @param startedAt when the failed claim or batch started ({@link System#nanoTime()})
	 * @param what what failed, for the log
	 */
	public void claimFailed(Throwable failure, long startedAt, String what) {
		Duration wait = this.failures.failed(failure, startedAt, what).delay();
		if (!wait.isZero()) {
			this.pauseUntil = System.nanoTime() + wait.toNanos();
		}
	}

	/** A claim (leased mode) or a batch (transactional mode) worked: a streak of failures ends. */
	public void claimWorked() {
		this.failures.succeeded();
	}

	/** How long claims stay paused, in nanoseconds; zero or less when they are not. */
	long pauseRemainingNanos() {
		return this.pauseUntil - System.nanoTime();
	}

	void start() {
		this.stopping = false;
	}

	void stop() {
		this.stopping = true;
		wakeUp();
	}

	/**
	 * Waits for the duration, a wake-up or stop; changes among workers do not end the wait. Returns
	 * whether a wake-up was requested.
	 */
	boolean awaitWakeUp(Duration duration) throws InterruptedException {
		long nanos = duration.toNanos();
		this.lock.lock();
		try {
			while (nanos > 0 && !this.stopping && !this.wakeRequested) {
				nanos = this.signal.awaitNanos(nanos);
			}
			boolean woken = this.wakeRequested;
			this.wakeRequested = false;
			return woken;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Waits for the duration, a change among workers or stop. */
	void awaitWorkersChanged(Duration duration) throws InterruptedException {
		long nanos = duration.toNanos();
		this.lock.lock();
		try {
			while (nanos > 0 && !this.stopping && !this.workersChanged) {
				nanos = this.signal.awaitNanos(nanos);
			}
			this.workersChanged = false;
		}
		finally {
			this.lock.unlock();
		}
	}

}
