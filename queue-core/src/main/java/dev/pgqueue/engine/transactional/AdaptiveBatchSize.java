package dev.pgqueue.engine.transactional;

import java.time.Duration;

/**
 * How many jobs a transactional queue's next batch claims, between the queue's {@code batch-size}
 * and {@code max-batch-size}.
 *
 * <p>Why: every batch pays the same fixed price whatever its size (a transaction, a claim statement,
 * a completion statement, a commit that waits for the WAL to be flushed), so with short jobs and a
 * deep backlog a small batch spends most of its time on that price: 200,000 no-op jobs drained at
 * 12,850–15,535 jobs/s in batches of 10 and at 122,000–167,000 in batches of 500, same machine, same
 * run. A large batch is wrong when jobs are few (it waits for nothing, but it is not needed) and when
 * they are long (its jobs run one after another in one transaction, which holds its locks and
 * snapshot, and the claims of other instances walk past its rows, for as long as it runs).
 *
 * <p>What: the size doubles after a claim that came back full, as long as the batches run shorter
 * than {@link #TARGET}; it halves after a claim that came back less than half full; and it never
 * exceeds what the last batches' pace fits into {@link #TARGET}. So a queue with a backlog of short
 * jobs reaches large batches within a few claims, a queue that keeps up stays at its
 * {@code batch-size}, and long jobs keep it there too.
 *
 * <p>Shared by the poll thread (which sizes each claim) and the workers (which report what their
 * batch took); races only cost a step of adaptation.
 */
final class AdaptiveBatchSize {

	/** How long a batch should run at most: above it, batches do not grow and shrink to fit. */
	static final Duration TARGET = Duration.ofMillis(200);

	private final int least;

	private final int most;

	private volatile int size;

	/** Recent time per job of finished batches, in nanoseconds; zero until one finished. */
	private volatile double nanosPerJob;

	/**
	 * @param least the queue's {@code batch-size}: where batches start, and the least they shrink to
	 * @param most the queue's {@code max-batch-size}
	 */
	AdaptiveBatchSize(int least, int most) {
		this.least = least;
		this.most = most;
		this.size = least;
	}

	/** How many jobs the next claim asks for. */
	int next() {
		return this.size;
	}

	/** A claim that asked for {@code asked} jobs came back with {@code got}. */
	void claimed(int asked, int got) {
		int current = this.size;
		if (got >= asked) {
			this.size = fit(Math.min(this.most, Math.max(current, asked) * 2));
		}
		else if (got * 2 < asked) {
			this.size = Math.max(this.least, current / 2);
		}
	}

	/** A batch of {@code jobs} jobs ran (claim to commit) in {@code nanos}. */
	void ran(int jobs, long nanos) {
		if (jobs <= 0) {
			return;
		}
		double perJob = (double) nanos / jobs;
		double last = this.nanosPerJob;
		// A moving average over about the last four batches.
		this.nanosPerJob = (last == 0) ? perJob : last + (perJob - last) / 4;
		this.size = fit(this.size);
	}

	/** The size, no larger than what fits into the target at the recent pace, no smaller than the least. */
	private int fit(int wanted) {
		double perJob = this.nanosPerJob;
		if (perJob <= 0) {
			return wanted;
		}
		long fits = (long) (TARGET.toNanos() / perJob);
		return (int) Math.max(this.least, Math.min(wanted, fits));
	}

}
