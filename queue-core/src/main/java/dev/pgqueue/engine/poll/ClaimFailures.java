package dev.pgqueue.engine.poll;

import dev.pgqueue.engine.service.FailureCause;
import dev.pgqueue.engine.service.FailureStreak;
import dev.pgqueue.engine.service.FailureStreak.Pause;
import dev.pgqueue.engine.service.PooledConnections;
import dev.pgqueue.metrics.QueueMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One queue's failed claims and batches in this instance, and the pause they call for (see
 * {@link FailureStreak} for the rules): shared by the poll thread and every thread that claims or
 * runs a batch for the queue, so that a database that breaks every open batch at once counts as one
 * failure, not one per batch.
 *
 * <p>Says why claims paused and for how long: a warning per failure that counted (the ones that
 * belonged to it at debug level), {@link QueueMetrics#claimsPaused}, and an info line with the
 * streak's length when claims work again.
 */
final class ClaimFailures {

	private static final Logger logger = LoggerFactory.getLogger(ClaimFailures.class);

	private final String queue;

	private final QueueMetrics metrics;

	private final FailureStreak streak;

	/**
	 * @param queue the queue whose claims these are
	 * @param metrics where pauses are reported
	 * @param connections the pool whose idle connections are replaced after a lost one
	 */
	ClaimFailures(String queue, QueueMetrics metrics, PooledConnections connections) {
		this.queue = queue;
		this.metrics = metrics;
		this.streak = new FailureStreak(connections);
	}

	/**
	 * An attempt that started at {@code startedAt} ({@link System#nanoTime()}) failed: logs and
	 * reports it and returns how long claims should wait.
	 *
	 * @param what what failed, for the log: "claiming", "a batch (rolled back, its jobs released)"
	 */
	Pause failed(Throwable failure, long startedAt, String what) {
		Pause pause = this.streak.failed(failure, startedAt);
		if (!pause.counted()) {
			logger.debug("Queue '{}': {} failed with the same {} failure as the one counted before it: {}", this.queue,
					what, pause.cause().tag(), failure.toString());
			return pause;
		}
		this.metrics.claimsPaused(this.queue, pause.cause().tag(), pause.delay());
		if (pause.delay().isZero()) {
			logger.warn("Queue '{}': {} failed ({} {} in a row); claiming again at once on a fresh connection: {}",
					this.queue, what, pause.inARow(), pause.cause().tag(), failure.toString());
		}
		else if (pause.cause() == FailureCause.ERROR && pause.inARow() == 1) {
			// Not a lost connection nor a conflict: the first of a streak gets its stack trace.
			logger.warn("Queue '{}': {} failed ({} {} in a row); pausing claims for {} ms", this.queue, what,
					pause.inARow(), pause.cause().tag(), pause.delay().toMillis(), failure);
		}
		else {
			logger.warn("Queue '{}': {} failed ({} {} in a row); pausing claims for {} ms: {}", this.queue, what,
					pause.inARow(), pause.cause().tag(), pause.delay().toMillis(), failure.toString());
		}
		return pause;
	}

	/** A claim (leased mode) or a batch (transactional mode) worked: any streak of failures ends. */
	void succeeded() {
		FailureStreak.Ended ended = this.streak.succeeded();
		if (ended != null) {
			logger.info("Queue '{}': claims work again after {} failures in a row over {} ms", this.queue,
					ended.failures(), ended.lasted().toMillis());
		}
	}

}
