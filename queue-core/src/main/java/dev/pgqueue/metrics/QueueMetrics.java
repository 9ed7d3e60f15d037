package dev.pgqueue.metrics;

import java.time.Duration;
import java.util.Collection;

import dev.pgqueue.JobOutcome;

/**
 * What the engine reports about its work. The engine depends only on this interface; the
 * Micrometer implementation lives next to it and is used only when Micrometer is present.
 */
public interface QueueMetrics {

	/** Reports nothing. */
	QueueMetrics NONE = new QueueMetrics() {
	};

	/** A poller ran its claim statement, which took {@code nanos} and claimed {@code claimed} jobs. */
	default void pollCycle(String queue, long nanos, int claimed) {
	}

	/**
	 * A claim came back with fewer jobs than it asked for while due jobs of its kinds were held by
	 * other transactions: it stepped over them and did work without progress.
	 */
	default void unproductiveClaim(String queue) {
	}

	/**
	 * Claiming failed (a claim, or a transactional batch after its claim) and the queue's claims
	 * pause for {@code pause}, zero when they are tried again at once; {@code cause} is
	 * {@code connection}, {@code conflict} or {@code error}. Only failures that count are reported:
	 * batches that one lost connection broke together are one.
	 */
	default void claimsPaused(String queue, String cause, Duration pause) {
	}

	/**
	 * A claim of the queue asked its rate limit for more starts than the window had left:
	 * {@code refused} jobs it wanted did not start yet.
	 */
	default void rateLimitRefused(String queue, int refused) {
		rateLimitRefused(queue, "queue", refused);
	}

	/**
	 * A claim of the queue could not start {@code refused} jobs it wanted: the limit labelled
	 * {@code limit} ({@code queue}, {@code kind:<kind>} or {@code per-key}) had no units left for them.
	 */
	default void rateLimitRefused(String queue, String limit, int refused) {
	}

	/**
	 * The queue's claims were held by its rate limit for {@code nanos}: from the first grant that fell
	 * short to the first claim that got all it asked for, or found no more jobs due.
	 */
	default void rateLimitHeld(String queue, long nanos) {
	}

	/**
	 * A schedule's pass fired {@code ticks} ticks; the newest fired {@code lag} after its instant
	 * (on the database's clock).
	 */
	default void scheduleFired(String schedule, int ticks, Duration lag) {
	}

	/**
	 * A schedule's pass skipped {@code ticks} ticks: {@code missed} (due while no instance ran it, as
	 * its missed-ticks policy says) or {@code overlap} (the previous tick's job was unfinished).
	 */
	default void scheduleSkipped(String schedule, String reason, long ticks) {
	}

	/** {@code jobs} jobs were claimed later than their run-at plus the queue's SLA. */
	default void slaMissed(String queue, int jobs) {
	}

	/** The stats reader assessed the queue's recent poll cycles by their 99th percentile. */
	default void pollCycleAssessed(String queue, Duration p99, PollCycleAssessment assessment) {
	}

	/** A handler ran for {@code nanos} with the given outcome. */
	default void jobFinished(String queue, String kind, JobOutcome outcome, long nanos) {
	}

	/**
	 * An attempt ran past its time limit and counts as failed (also reported through
	 * {@link #jobFinished} as retried or failed).
	 */
	default void jobTimedOut(String queue, String kind) {
	}

	/**
	 * Leased mode: {@code running} threads of the queue still run listeners that passed their time
	 * limit and ignored the interruption; their workers have moved on.
	 */
	default void abandonedHandlers(String queue, int running) {
	}

	/** The rescuer returned a job whose lease expired (or failed it, when out of attempts). */
	default void jobRescued(String queue, String kind) {
	}

	/** Fresh health signals of every queue known to this application. */
	default void queueStats(Collection<QueueStats> stats) {
	}

	/** Freshly read by the stats reader: whether an operator has paused the queue. */
	default void queuePaused(String queue, boolean paused) {
	}

	/**
	 * Freshly read by the stats reader, for each queue it read: the jobs waiting in it (due or
	 * scheduled) while no live instance polls it, which nobody will run until one does; 0 for a queue
	 * that is polled or has none waiting.
	 */
	default void unpolledJobs(String queue, long waiting) {
	}

	/** Freshly read: the transaction that holds back cleanup in the jobs table's database the longest. */
	default void oldestTransaction(OldestTransaction oldest) {
	}

	/**
	 * Freshly read: how many of this application's connections (those with the stats reader's
	 * {@code application_name}) wait on a lock.
	 */
	default void lockWaits(long waiting) {
	}

	/** Freshly read: whether the jobs table gets vacuumed, its dead and live rows. */
	default void vacuumHealth(VacuumHealth health) {
	}

	/** Freshly read by the in-doubt resolver: this schema's prepared transactions (two-phase commit). */
	default void preparedTransactions(PreparedTransactions prepared) {
	}

	/**
	 * The in-doubt resolver finished a job's prepared transaction left by a dead worker:
	 * {@code committed} (its effect happened), {@code rolled-back} (it did not) or {@code abandoned}
	 * (rolled back undecided after {@code roll-back-after}).
	 */
	default void inDoubtResolved(String queue, String decision) {
	}

	/**
	 * One iteration of a service's loop (a poller, the completer, the promoter…) failed; the service
	 * goes on.
	 */
	default void serviceFailed(String service) {
	}

}
