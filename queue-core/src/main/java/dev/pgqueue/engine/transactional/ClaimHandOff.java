package dev.pgqueue.engine.transactional;

import java.util.concurrent.CountDownLatch;

import org.jspecify.annotations.Nullable;

/**
 * What the worker running a batch tells the poll thread that handed it a slot: how many jobs the
 * claim returned, or that the batch failed before its claim returned. Told once; whatever comes
 * after is ignored, so a batch that fails after its claim says so through {@link #failed} returning
 * {@code false}.
 */
final class ClaimHandOff {

	private final CountDownLatch told = new CountDownLatch(1);

	private int claimed;

	private @Nullable Throwable failure;

	/** The claim returned {@code count} jobs; returns whether this was the first thing told. */
	public synchronized boolean claimed(int count) {
		if (this.told.getCount() == 0) {
			return false;
		}
		this.claimed = count;
		this.told.countDown();
		return true;
	}

	/** The batch failed; returns {@code false} when its claim had already returned (and was told). */
	public synchronized boolean failed(Throwable failure) {
		if (this.told.getCount() == 0) {
			return false;
		}
		this.failure = failure;
		this.told.countDown();
		return true;
	}

	/**
	 * Waits until the worker tells; returns how many jobs the claim returned.
	 * @throws RuntimeException the batch's failure (an error wrapped), when it failed before its claim
	 * returned
	 */
	public int await() throws InterruptedException {
		this.told.await();
		synchronized (this) {
			if (this.failure == null) {
				return this.claimed;
			}
			// An error is wrapped: the poll loop backs off on runtime exceptions and must not die of one.
			throw (this.failure instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException(this.failure);
		}
	}

}
