package dev.pgqueue.engine.transactional;

import java.lang.reflect.Method;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.poll.RunContext;
import dev.pgqueue.engine.run.Attempt;
import dev.pgqueue.engine.run.OnTimeout;
import dev.pgqueue.engine.run.Outcome;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.ReflectionUtils;

/**
 * Runs one batch of a transactional queue: claim, run every job and record its outcome in one
 * transaction, so that each listener's own database work commits exactly when its job completes.
 *
 * <p>A failing job must not take its neighbours' work down with it. Savepoints do that, but cost a
 * round trip per job. So a batch first runs <em>optimistically</em>, behind one savepoint taken
 * right after the claim and released right before the completion statement; almost every batch
 * succeeds whole and commits with no per-job statement at all. When a job fails (or a listener
 * leaves the transaction unusable), the batch rolls back to that savepoint (its row locks stay) and
 * runs again <em>carefully</em>, each job behind a savepoint. The
 * failed job is not run twice: its outcome from the first run is recorded as it is. Neighbours that
 * had already run do run again, but their database work from the first run was rolled back, so
 * database effects still happen exactly once; effects outside the database were at-least-once
 * anyway (a crash mid-batch re-runs the batch too).
 *
 * <p>A listener that runs past its time limit has its running statement cancelled and its thread
 * interrupted; its attempt fails whatever it does next, so it is undone like any failure and never
 * run again by the careful run.
 */
public final class TransactionalBatchRunner extends BatchFlow {

	private static final Logger logger = LoggerFactory.getLogger(TransactionalBatchRunner.class);

	/** {@code Thread.isVirtual()}, which JDK 17 does not have; null there. */
	private static final @Nullable Method IS_VIRTUAL = ReflectionUtils.findMethod(Thread.class, "isVirtual");

	/**
	 * @param context the queue, its claims and where they are recorded, what runs an attempt
	 * @param transactions the batches' transactions
	 */
	public TransactionalBatchRunner(RunContext context, TransactionTemplate transactions) {
		super(context, transactions);
	}

	/**
	 * A claim that stopped at its share of a limit leaves jobs for another batch: it counts as full,
	 * so that the poller claims again at once.
	 */
	@Override
	protected int claimedCount(List<ClaimedJob> jobs, int batchSize) {
		return context().claims().stoppedAtShare() ? Math.max(jobs.size(), batchSize) : jobs.size();
	}

	/** Runs the batch; returns the attempts whose outcomes it recorded. */
	@Override
	protected List<Attempt> runClaimed(TransactionStatus status, List<ClaimedJob> jobs, BatchStop stop) {
		// One savepoint for the whole batch, taken after the claim: rolling back to it undoes the
		// listeners' work but keeps the claim's row locks, so no other poller can take these jobs
		// between the optimistic run and the careful one.
		Object batchStart = status.createSavepoint();
		// The batch's connection, on which its listeners' JDBC work runs; null when it cannot be reached,
		// and then a timed-out listener is only interrupted.
		OnTimeout onTimeout = stopAtTimeout(jobs().transactionConnection());
		OptimisticRun run = runOptimistically(status, jobs, batchStart, onTimeout, stop);
		if (run instanceof Completed completed) {
			return completed.attempts();
		}
		rollbackAfterFailure(status, batchStart, (run instanceof RunCarefully careful) ? careful.cause() : null);
		if (run instanceof RunCarefully careful) {
			return runCarefully(status, jobs, careful.failed(), onTimeout, stop);
		}
		// Released whole: the commit leaves every job as it was.
		return List.of();
	}

	/**
	 * What stops a listener that runs past its time limit. First the cancel request: a listener
	 * blocked in a statement does not see an interrupt, since JDBC socket reads ignore it. A cancel
	 * rather than a {@code SET LOCAL statement_timeout}: it costs nothing until a job times out (a
	 * statement timeout would cost a round trip per job to set and reset), it ends exactly the
	 * statement running at the limit rather than bounding each statement by the whole limit, and it
	 * cannot hit the batch's own statements. It travels on a connection of its own, outside the pool,
	 * and PostgreSQL ignores it when no statement is running, so a listener between statements loses
	 * nothing. The batch's next statement waits until it has been sent (see {@code JobTimeouts.Watch}),
	 * so it cannot land on the rollback to the savepoint. The cancelled statement aborts the
	 * transaction until that rollback, which undoes the job's work and leaves the batch usable.
	 *
	 * <p>Then the interrupt, except on a virtual thread: there an interrupt closes a socket the thread
	 * is blocked on, which would be the batch's connection, and the whole batch would roll back with
	 * the timed-out job going back unpunished, to time out again.
	 */
	private static OnTimeout stopAtTimeout(@Nullable PGConnection connection) {
		return (attempt, thread) -> {
			if (connection != null) {
				try {
					connection.cancelQuery();
				}
				catch (SQLException ex) {
					logger.debug("Could not cancel the statement of timed-out job {}: {}", attempt.job().id(),
							ex.toString());
				}
			}
			if (!isVirtual(thread)) {
				thread.interrupt();
			}
			logger.debug("Job {} of kind '{}' in queue '{}' ran past its time limit; its batch goes on once the "
					+ "listener returns", attempt.job().id(), attempt.job().kind(), attempt.job().queue());
		};
	}

	private static boolean isVirtual(Thread thread) {
		return IS_VIRTUAL != null && Boolean.TRUE.equals(ReflectionUtils.invokeMethod(IS_VIRTUAL, thread));
	}

	/** Runs the batch without a savepoint per job; says what became of it. */
	private OptimisticRun runOptimistically(TransactionStatus status, List<ClaimedJob> jobs, Object batchStart,
			OnTimeout onTimeout, BatchStop stop) {
		List<Attempt> attempts = new ArrayList<>(jobs.size());
		List<Long> completed = new ArrayList<>(jobs.size());
		for (ClaimedJob job : jobs) {
			if (stop.aborting()) {
				// Shutdown: leave the rest untouched; the commit releases them as they were.
				break;
			}
			Attempt attempt = runner().runUnrecorded(job, settings(), onTimeout);
			Outcome outcome = attempt.outcome();
			if (stop.aborting()) {
				Thread.interrupted();
				if (!outcome.succeeded()) {
					// Interrupted by shutdown, maybe half-way through its own writes, which no savepoint
					// of its own can undo: undo the batch, releasing every job without using an attempt.
					released(job);
					return new ReleaseAll();
				}
			}
			if (!outcome.succeeded() || status.isRollbackOnly()) {
				boolean knownFailure = !outcome.succeeded() && !inFailedTransaction(outcome.cause());
				return new RunCarefully(knownFailure ? new Failure(job, attempt) : null);
			}
			completed.add(job.id());
			attempts.add(attempt);
		}
		try {
			// Released before the completion, so that the rows are deleted (or updated) by the
			// transaction that locked them. Otherwise a subtransaction would write rows its parent
			// locked, PostgreSQL would record both in a MultiXact, and every other poller's claim would
			// have to look those up while stepping over the rows: 4 ms p50 pickup instead of 0.26 ms at
			// 1 000 jobs/s in the steady-state benchmark.
			status.releaseSavepoint(batchStart);
			completeLocked(completed, attempts);
		}
		catch (TransactionException | DataAccessException ex) {
			if (!inFailedTransaction(ex)) {
				throw ex;
			}
			// A listener caught the exception of its own failed statement: find which, carefully.
			// (The release failed too, so the batch's savepoint is still there to roll back to.)
			return new RunCarefully(null);
		}
		return new Completed(attempts);
	}

	/** Runs the batch with a savepoint per job; returns the attempts whose outcomes it recorded. */
	private List<Attempt> runCarefully(TransactionStatus status, List<ClaimedJob> jobs, @Nullable Failure failed,
			OnTimeout onTimeout, BatchStop stop) {
		List<Long> completed = new ArrayList<>(jobs.size());
		List<Attempt> succeeded = new ArrayList<>(jobs.size());
		List<Failure> failures = new ArrayList<>();
		Done unconfirmed = null;
		for (ClaimedJob job : jobs) {
			if (stop.aborting()) {
				break;
			}
			if (failed != null && job.id() == failed.job().id()) {
				// Not run twice: its outcome from the optimistic run stands.
				failures.add(failed);
				continue;
			}
			Object savepoint;
			try {
				savepoint = status.createSavepoint();
			}
			catch (TransactionException ex) {
				undoAborted(status, unconfirmed, ex, completed, succeeded, failures);
				savepoint = status.createSavepoint();
			}
			unconfirmed = null;
			Attempt attempt = runner().runUnrecorded(job, settings(), onTimeout);
			Outcome outcome = attempt.outcome();
			if (stop.aborting()) {
				// An interrupt meant for the listener must not break the statements below.
				Thread.interrupted();
			}
			if (outcome.succeeded() && !status.isRollbackOnly()) {
				// Not released: a release is one more round trip, and the commit releases every
				// savepoint anyway. Savepoints of later jobs nest inside, which rollbacks allow.
				completed.add(job.id());
				succeeded.add(attempt);
				unconfirmed = new Done(job, savepoint);
				continue;
			}
			// Undo the listener's own work but keep its neighbours'.
			rollbackAfterFailure(status, savepoint, outcome.cause());
			if (stop.aborting()) {
				released(job);
				break;
			}
			if (outcome.succeeded()) {
				attempt = runner().rollbackOnly(attempt, settings());
			}
			failures.add(new Failure(job, attempt));
		}
		try {
			completeLocked(completed, succeeded);
		}
		catch (DataAccessException ex) {
			undoAborted(status, unconfirmed, ex, completed, succeeded, failures);
			completeLocked(completed, succeeded);
		}
		List<Attempt> recorded = new ArrayList<>(succeeded);
		for (Failure failure : failures) {
			recorded.add(recordLockedFailure(failure.job(), failure.attempt()));
		}
		return recorded;
	}

	/**
	 * Handles a statement that failed after the listener of {@code last} returned normally. When the
	 * listener had caught the exception of one of its own statements, PostgreSQL aborted the
	 * transaction all the same and refuses every later statement ({@code 25P02}): left alone, the
	 * whole batch would roll back at commit, again and again, without using an attempt. Instead that
	 * job alone is undone, back to its savepoint, and counted as a failed attempt.
	 * @throws RuntimeException {@code failure} when it has another cause
	 */
	private void undoAborted(TransactionStatus status, @Nullable Done last, RuntimeException failure,
			List<Long> completed, List<Attempt> succeeded, List<Failure> failures) {
		if (last == null || !inFailedTransaction(failure)) {
			throw failure;
		}
		rollbackAfterFailure(status, last.savepoint(), failure);
		completed.remove(completed.size() - 1);
		Attempt returned = succeeded.remove(succeeded.size() - 1);
		failures.add(new Failure(last.job(), runner().transactionAborted(returned, settings())));
	}

	/**
	 * Rolls back to a savepoint after a job's work failed. When the rollback fails as well, the work's
	 * failure goes with it (suppressed): a listener whose statement met a terminated backend leaves a
	 * connection the pool has already closed, and the rollback's own exception then says no more than
	 * "Connection is closed", without an SQLSTATE. Without the work's failure beside it, the batch's
	 * failure would read as an error worth a pause rather than a lost connection worth a retry at once
	 * (see {@link dev.pgqueue.engine.service.FailureCause}).
	 */
	private static void rollbackAfterFailure(TransactionStatus status, Object savepoint, @Nullable Throwable failure) {
		try {
			status.rollbackToSavepoint(savepoint);
		}
		catch (RuntimeException ex) {
			if (failure != null && failure != ex) {
				ex.addSuppressed(failure);
			}
			throw ex;
		}
	}

	/** What the optimistic run of a batch came to. */
	private sealed interface OptimisticRun permits Completed, RunCarefully, ReleaseAll {
	}

	/** Every job completed and was recorded: the batch commits as it is. */
	private record Completed(List<Attempt> attempts) implements OptimisticRun {
	}

	/**
	 * A job failed, or a listener left the transaction unusable: undo the batch and run it again with
	 * a savepoint per job.
	 * @param failed the job whose listener failed and its attempt; {@code null} when the failure could
	 * not be pinned on one job
	 */
	private record RunCarefully(@Nullable Failure failed) implements OptimisticRun {

		/** What the failed job's listener threw, if the failure was pinned on one job. */
		@Nullable Throwable cause() {
			return (this.failed != null) ? this.failed.attempt().outcome().cause() : null;
		}

	}

	/** Shutdown interrupted a listener: undo the whole batch and release its jobs. */
	private record ReleaseAll() implements OptimisticRun {
	}

	private record Failure(ClaimedJob job, Attempt attempt) {
	}

	/** A job counted as completed, and the savepoint taken before its listener ran. */
	private record Done(ClaimedJob job, Object savepoint) {
	}

}
