package dev.pgqueue.engine;

import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A queue's worker slots and the threads that fill them. A slot is taken before work is handed to
 * a thread and given back when the work ends, so that no more than the concurrency ever runs and
 * nothing waits inside the executor. Each freed slot tells the poll thread.
 */
public final class Workers {

	private final int concurrency;

	private final Semaphore slots;

	private final Executor executor;

	private final PollSignals signals;

	Workers(int concurrency, Executor executor, PollSignals signals) {
		this.concurrency = concurrency;
		this.slots = new Semaphore(concurrency);
		this.executor = executor;
		this.signals = signals;
	}

	/** Takes a free slot, if there is one. */
	public boolean tryAcquire() {
		return this.slots.tryAcquire();
	}

	/** Takes a slot, waiting for one to free up. */
	public void acquire() throws InterruptedException {
		this.slots.acquire();
	}

	/** Gives a slot back and tells the poll thread. */
	public void release() {
		this.slots.release();
		this.signals.workersChanged();
	}

	/**
	 * Runs the task on a worker thread; the caller holds a slot for it.
	 * @throws RuntimeException when the executor refuses it; the caller then gives the slot back
	 */
	public void execute(Runnable task) {
		this.executor.execute(task);
	}

	/** Free slots. */
	public int free() {
		return this.slots.availablePermits();
	}

	/** Slots in use. */
	public int busy() {
		return this.concurrency - this.slots.availablePermits();
	}

	/** Waits until every slot is free or the deadline ({@link System#nanoTime()}) passes. */
	boolean awaitIdle(long deadline) throws InterruptedException {
		if (this.slots.tryAcquire(this.concurrency, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
			this.slots.release(this.concurrency);
			return true;
		}
		return false;
	}

}
