package dev.pgqueue.engine.poll;

import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * A queue's worker slots and the threads that fill them. A slot is taken before work is handed to
 * a thread and given back when the work ends, so that no more than the concurrency ever runs and
 * nothing waits inside the executor. Each freed slot tells the poll thread.
 *
 * <p>A leased worker whose listener runs past its time limit is abandoned: its slot is given back at
 * once while its thread stays with the listener until it returns. The queue's own pool gets a thread
 * more for each abandoned one meanwhile, so that the slot can be filled at once.
 */
public final class Workers {

	private final int concurrency;

	private final Semaphore slots;

	private final Executor executor;

	private final PollSignals signals;

	/** The queue's own pool, resized for abandoned threads; null for an executor shared with others. */
	private final @Nullable ThreadPoolExecutor ownPool;

	private int abandoned;

	/**
	 * @param ownPool the executor when it is this queue's own pool, which then grows by a thread for
	 * each abandoned one; {@code null} for an executor that is not the queue's to resize
	 */
	Workers(int concurrency, Executor executor, @Nullable ThreadPoolExecutor ownPool, PollSignals signals) {
		this.concurrency = concurrency;
		this.slots = new Semaphore(concurrency);
		this.executor = executor;
		this.ownPool = ownPool;
		this.signals = signals;
	}

	/**
	 * Slots whose work runs at once on the thread that hands it over: for {@link CallingThreadRun},
	 * where the caller's thread is the only worker.
	 */
	static Workers onCallingThread(int concurrency, PollSignals signals) {
		return new Workers(concurrency, Runnable::run, null, signals);
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

	/**
	 * The calling worker's thread stays with a listener past its time limit: gives its slot back,
	 * which the worker must then not do itself. Returns how many threads are abandoned.
	 */
	public synchronized int abandon() {
		this.abandoned++;
		if (this.ownPool != null) {
			// Maximum first: the core size may never exceed it.
			this.ownPool.setMaximumPoolSize(this.concurrency + this.abandoned);
			this.ownPool.setCorePoolSize(this.concurrency + this.abandoned);
		}
		release();
		return this.abandoned;
	}

	/** An abandoned thread's listener returned. Returns how many threads are still abandoned. */
	public synchronized int abandonedReturned() {
		this.abandoned--;
		if (this.ownPool != null) {
			// Core first: it may never exceed the maximum. The spare thread ends once idle.
			this.ownPool.setCorePoolSize(this.concurrency + this.abandoned);
			this.ownPool.setMaximumPoolSize(this.concurrency + this.abandoned);
		}
		return this.abandoned;
	}

	/** Threads still running listeners that passed their time limit, their slots given back. */
	public synchronized int abandoned() {
		return this.abandoned;
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
