package dev.pgqueue.engine.service;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * How long a part of the engine that talks to the database waits after a failure, judged by what
 * failed and how often fresh attempts have failed in a row, not by how many attempts happened to be
 * open when the database went away.
 *
 * <p>Two rules. First, only an attempt that <em>started after</em> the last failure counted can
 * count: when a terminated backend, a restart or a failover breaks every open transaction at once,
 * the first of their failures counts and the rest belong to it, even those that report after a fresh
 * attempt has already succeeded. Second, what failed sets the pace: a
 * lost connection or a conflict ({@link FailureCause#worthRetryingAtOnce()}) is tried again at once,
 * on a fresh connection ({@link PooledConnections}), and only fresh attempts failing again space out, from 100 ms doubling to at
 * most {@link #MAX_TRANSIENT_PAUSE} (so that work resumes within about a second of a server's
 * return); any other failure waits 250 ms, doubling to at most {@link #MAX_ERROR_PAUSE}, since it
 * will fail the same way until someone acts (a missing table, a refused login). A success ends the
 * streak. Waits are spread by ±10 % so that instances do not retry in lock-step.
 *
 * <p>Thread-safe: every thread that claims for a queue shares its streak.
 */
public final class FailureStreak {

	/** Longest wait after lost connections or conflicts in a row. */
	public static final Duration MAX_TRANSIENT_PAUSE = Duration.ofSeconds(1);

	/** Longest wait after other failures in a row. */
	public static final Duration MAX_ERROR_PAUSE = Duration.ofSeconds(30);

	private final PooledConnections connections;

	private final LongSupplier nanoTime;

	private int count;

	/** When the last failure that counted happened; attempts started before it belong to it. */
	private long lastCountedAt;

	/** Whether any failure has counted yet, so that {@link #lastCountedAt} means something. */
	private boolean anyCounted;

	private volatile boolean failing;

	private long firstFailureAt;

	/**
	 * A streak on the system's monotonic clock.
	 * @param connections the pool whose idle connections are replaced when a lost connection counts,
	 * so that the retry gets a new one
	 */
	public FailureStreak(PooledConnections connections) {
		this(connections, System::nanoTime);
	}

	/** A streak on the given monotonic clock, in nanoseconds; for tests. */
	public FailureStreak(PooledConnections connections, LongSupplier nanoTime) {
		this.connections = connections;
		this.nanoTime = nanoTime;
	}

	/**
	 * An attempt that started at {@code startedAt} ({@link System#nanoTime()}) failed. Returns how
	 * long to wait before the next attempt, and whether this failure counted or belonged to one
	 * that already had.
	 */
	public synchronized Pause failed(Throwable failure, long startedAt) {
		FailureCause cause = FailureCause.of(failure);
		long now = this.nanoTime.getAsLong();
		// Also after a success: a batch that a sweep broke can report its failure after a fresh batch,
		// claimed once the sweep's first failure counted, has already succeeded. It is still that sweep.
		if (this.anyCounted && startedAt - this.lastCountedAt < 0) {
			return new Pause(cause, this.count, false, Duration.ZERO);
		}
		if (!this.failing) {
			this.failing = true;
			this.firstFailureAt = now;
		}
		this.count++;
		this.lastCountedAt = now;
		this.anyCounted = true;
		if (cause == FailureCause.CONNECTION) {
			this.connections.discardIdle();
		}
		return new Pause(cause, this.count, true, pause(cause, this.count));
	}

	/**
	 * An attempt worked. Returns the streak it ended, or {@code null} when there was none; cheap
	 * when there was none, since it runs after every claim or batch.
	 */
	public @Nullable Ended succeeded() {
		if (!this.failing) {
			return null;
		}
		synchronized (this) {
			if (!this.failing) {
				return null;
			}
			Ended ended = new Ended(this.count, Duration.ofNanos(this.nanoTime.getAsLong() - this.firstFailureAt));
			this.failing = false;
			this.count = 0;
			return ended;
		}
	}

	/** Failures counted since the last success. */
	public synchronized int count() {
		return this.count;
	}

	/**
	 * The wait after the {@code count}-th failure in a row of the given cause, before jitter: for
	 * services that retry one write a few times rather than keep a streak.
	 */
	public static Duration basePause(FailureCause cause, int count) {
		if (cause.worthRetryingAtOnce()) {
			if (count <= 1) {
				return Duration.ZERO;
			}
			return Duration.ofMillis(Math.min(MAX_TRANSIENT_PAUSE.toMillis(), 100L << Math.min(count - 2, 10)));
		}
		return Duration.ofMillis(Math.min(MAX_ERROR_PAUSE.toMillis(), 250L << Math.min(count - 1, 10)));
	}

	private static Duration pause(FailureCause cause, int count) {
		long millis = basePause(cause, count).toMillis();
		long spread = millis / 10;
		long offset = (spread > 0) ? ThreadLocalRandom.current().nextLong(-spread, spread + 1) : 0;
		return Duration.ofMillis(millis + offset);
	}

	/**
	 * What to do after one failure.
	 *
	 * @param cause what failed
	 * @param inARow failures counted since the last success, this one included when it counted
	 * @param counted whether this failure counted, or belonged to one counted before it (its attempt
	 * had started before that one failed)
	 * @param delay how long to wait before the next attempt; zero to try again at once
	 */
	public record Pause(FailureCause cause, int inARow, boolean counted, Duration delay) {
	}

	/**
	 * A streak a success ended.
	 *
	 * @param failures failures it counted
	 * @param lasted from its first failure to the success
	 */
	public record Ended(int failures, Duration lasted) {
	}

}
