package dev.pgqueue.reliability;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Offers jobs to a workload at a steady rate, as an application's producer would: every 50 ms it
 * enqueues the jobs due since its last tick, in one statement. An enqueue that fails (the server is
 * down) loses its jobs rather than catching up later, so the rate offered stays the rate asked for;
 * the jobs actually enqueued are what the scenarios compare completions with.
 */
final class PacedProducer implements AutoCloseable {

	private static final long TICK_MILLIS = 50;

	private final Workload workload;

	private final int perSecond;

	private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor((task) -> {
		Thread thread = new Thread(task, "paced-producer");
		thread.setDaemon(true);
		return thread;
	});

	private final List<UUID> enqueued = new ArrayList<>();

	private final AtomicLong failedTicks = new AtomicLong();

	private long startedAt;

	private long offered;

	private int next;

	PacedProducer(Workload workload, int perSecond) {
		this.workload = workload;
		this.perSecond = perSecond;
	}

	/** Starts offering jobs. */
	PacedProducer start() {
		this.startedAt = System.nanoTime();
		this.ticker.scheduleAtFixedRate(this::tick, 0, TICK_MILLIS, TimeUnit.MILLISECONDS);
		return this;
	}

	private void tick() {
		long due = (System.nanoTime() - this.startedAt) * this.perSecond / 1_000_000_000L;
		int count = (int) (due - this.offered);
		this.offered = due;
		if (count <= 0) {
			return;
		}
		List<Map<String, Object>> payloads = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			payloads.add(Map.of("n", this.next++));
		}
		try {
			List<UUID> ids = this.workload.enqueue(payloads);
			synchronized (this.enqueued) {
				this.enqueued.addAll(ids);
			}
		}
		catch (RuntimeException ex) {
			this.failedTicks.incrementAndGet();
		}
	}

	/** Jobs enqueued so far. */
	int enqueued() {
		synchronized (this.enqueued) {
			return this.enqueued.size();
		}
	}

	/** Ticks whose enqueue failed, their jobs not offered. */
	long failedTicks() {
		return this.failedTicks.get();
	}

	/** Stops offering jobs; returns once the last tick has ended. */
	@Override
	public void close() throws InterruptedException {
		this.ticker.shutdown();
		this.ticker.awaitTermination(30, TimeUnit.SECONDS);
	}

}
