package dev.pgqueue.engine.twophase;

import java.sql.SQLException;
import java.util.List;
import java.util.function.Supplier;

import dev.pgqueue.ExternalEffect;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.poll.RunContext;
import dev.pgqueue.engine.run.Attempt;
import dev.pgqueue.engine.run.Outcome;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.sql.PreparedTransactionRepository;
import dev.pgqueue.engine.sql.PreparedTransactionRepository.Session;
import dev.pgqueue.engine.transactional.BatchFlow;
import dev.pgqueue.engine.transactional.BatchStop;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Runs one job of a queue with two-phase commit in its own transaction: claim it, run its listener,
 * record its completion and, when the listener returned an {@link ExternalEffect}, prepare the
 * transaction, run the effect and commit the prepared transaction; roll it back when the effect
 * fails, and record the failed attempt.
 *
 * <p>Spring's transaction managers know nothing of {@code PREPARE TRANSACTION}, so the two phases run
 * on the transaction's own connection, inside the Spring transaction: after the prepare the session
 * has no transaction of its own, so the connection is switched to auto-commit for
 * {@code COMMIT PREPARED} (which may not run inside a transaction block, and the driver would open
 * one before it), then switched back. The Spring transaction then ends on a session with nothing
 * open, a no-op for the driver, and puts the connection back in the pool as it found it; it ends as
 * a rollback unless the prepared transaction was committed, so that the listener's transaction
 * synchronizations see what really happened. The effect itself runs with that transaction
 * suspended: anything it does through the application's {@code DataSource} runs on another
 * connection, outside the job's transaction.
 *
 * <p>From just before the prepare until just after the commit (or rollback), the worker's session
 * holds an advisory lock keyed on the transaction's id, which the {@link InDoubtResolver} must take
 * before it touches that transaction: a prepared transaction whose lock is free has lost its worker.
 */
public final class TwoPhaseJobRunner extends BatchFlow {

	/**
	 * Bound as a transaction resource (any value) while the current transaction is going to be
	 * prepared: PostgreSQL refuses to prepare a transaction that sent {@code NOTIFY}, so enqueues in it
	 * leave their notification to the throttle, after the commit.
	 */
	public static final Object PREPARED_TRANSACTION = new Object();

	private static final Logger logger = LoggerFactory.getLogger(TwoPhaseJobRunner.class);

	private final PreparedTransactionRepository prepared;

	private final TransactionTemplate outsideTransaction;

	/**
	 * @param context the queue (two-phase, batch size 1), its claims (a job's concurrency slots, if
	 * any, are held by its prepared transaction until it is committed or rolled back) and where they
	 * are recorded, what runs an attempt
	 * @param transactions the jobs' transactions
	 * @param prepared the statements of two-phase commit, on the same data source as the context's
	 * jobs: the prepare and the commit run on the connection of the job's transaction
	 */
	public TwoPhaseJobRunner(RunContext context, TransactionTemplate transactions,
			PreparedTransactionRepository prepared) {
		super(context, transactions);
		QueueSettings settings = context.settings();
		if (!settings.twoPhaseCommit() || settings.batchSize() != 1) {
			throw new IllegalArgumentException("Queue '" + settings.name() + "' is not a two-phase queue of batch size 1");
		}
		this.prepared = prepared;
		this.outsideTransaction = new TransactionTemplate(transactions.getTransactionManager());
		this.outsideTransaction.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
	}

	/** The job's transaction is going to be prepared: enqueues in it leave their notification for later. */
	@Override
	protected <T> T inTransaction(Supplier<T> transaction) {
		TransactionSynchronizationManager.bindResource(PREPARED_TRANSACTION, Boolean.TRUE);
		try {
			return transaction.get();
		}
		finally {
			TransactionSynchronizationManager.unbindResource(PREPARED_TRANSACTION);
		}
	}

	/** Runs the one claimed job; returns its attempt when its outcome stands, else nothing. */
	@Override
	protected List<Attempt> runClaimed(TransactionStatus status, List<ClaimedJob> jobs, BatchStop stop) {
		ClaimedJob job = jobs.get(0);
		String gid = TransactionIds.of(jobs().schema(), settings().name(), job.job().id());
		if (this.prepared.isHeldElsewhere(gid)) {
			// The worker of its previous attempt rolled its effect back and has not recorded the failure
			// yet: leave the job to it (the row goes back as it was), or the retry would skip its backoff.
			status.setRollbackOnly();
			return List.of();
		}
		// Rolling back to it undoes the listener's work but keeps the claim's row lock.
		Object savepoint = status.createSavepoint();
		Attempt attempt = runner().runUnrecorded(job, settings());
		if (stop.aborting()) {
			Thread.interrupted();
			if (!attempt.outcome().succeeded()) {
				status.setRollbackOnly();
				released(job);
				return List.of();
			}
		}
		if (!attempt.outcome().succeeded() || status.isRollbackOnly()) {
			status.rollbackToSavepoint(savepoint);
			return List.of(recordLockedFailure(job,
					attempt.outcome().succeeded() ? runner().rollbackOnly(attempt, settings()) : attempt));
		}
		try {
			// JPA and the like write what they hold now, into the transaction about to be prepared.
			status.flush();
			// Released before the completion, so that the row is updated by the transaction that
			// locked it, not by a subtransaction (see TransactionalBatchRunner).
			status.releaseSavepoint(savepoint);
			completeLocked(List.of(job.id()), List.of(attempt));
		}
		catch (TransactionException | DataAccessException ex) {
			if (!inFailedTransaction(ex)) {
				throw ex;
			}
			// The listener caught the exception of its own failed statement; its work is lost.
			status.rollbackToSavepoint(savepoint);
			return List.of(recordLockedFailure(job, runner().transactionAborted(attempt, settings())));
		}
		if (attempt.effect() == null) {
			// Nothing outside the database: the transaction commits as any other.
			return List.of(attempt);
		}
		Attempt standing = this.prepared
			.onTransactionConnection((session) -> prepareAndApply(status, session, job, attempt, stop));
		return (standing != null) ? List.of(standing) : List.of();
	}

	/** Prepares the transaction on its connection, runs the effect, and commits or rolls back. */
	private @Nullable Attempt prepareAndApply(TransactionStatus status, Session session, ClaimedJob job,
			Attempt attempt, BatchStop stop) throws SQLException {
		String gid = TransactionIds.of(jobs().schema(), settings().name(), job.job().id());
		session.hold(gid);
		try {
			session.prepare(gid);
		}
		catch (SQLException ex) {
			// A failed prepare rolls the transaction back: nothing is prepared, the job is free again.
			releaseQuietly(session, gid);
			throw ex;
		}
		session.setAutoCommit(true);
		try {
			return apply(status, session, gid, job, attempt, stop);
		}
		finally {
			releaseQuietly(session, gid);
			session.setAutoCommit(false);
		}
	}

	private @Nullable Attempt apply(TransactionStatus status, Session session, String gid, ClaimedJob job,
			Attempt attempt, BatchStop stop) {
		Throwable failure = runEffect(attempt.effect());
		boolean aborting = stop.aborting();
		if (aborting) {
			// An interrupt meant for the effect must not break the statements below.
			Thread.interrupted();
		}
		if (failure == null) {
			try {
				session.commitPrepared(gid);
				return attempt;
			}
			catch (SQLException ex) {
				status.setRollbackOnly();
				logger.warn("Job {} of kind '{}' in queue '{}': its external effect ran, but its prepared transaction "
						+ "'{}' could not be committed ({}); the in-doubt resolver will ask whether the effect happened "
						+ "and commit it", job.job().id(), job.job().kind(), settings().name(), gid, ex.toString());
				return null;
			}
		}
		status.setRollbackOnly();
		try {
			session.rollbackPrepared(gid);
		}
		catch (SQLException ex) {
			logger.warn("Job {} of kind '{}' in queue '{}': its external effect failed, and its prepared transaction "
					+ "'{}' could not be rolled back ({}); the in-doubt resolver will finish it", job.job().id(),
					job.job().kind(), settings().name(), gid, ex.toString());
			return null;
		}
		if (aborting) {
			released(job);
			return null;
		}
		Attempt failed = runner().effectFailed(attempt, failure, settings());
		Outcome outcome = failed.outcome();
		// The row was unlocked by the rollback. A worker that claims it now finds this worker's lock on
		// the transaction's id held and lets the row go, so the failure waits for that row lock rather
		// than skip it; only a job that moved on meanwhile (cancelled, deleted) is left as it is.
		if (!jobs().recordFailureIfAvailable(job.id(), job.attempt(), outcome.end(job.job()).startedAt(job.claimedAt()),
				context().workers().attemptHistory())) {
			logger.debug("Job {} changed before the failure of its external effect was recorded; the attempt is "
					+ "not counted", job.job().id());
			return null;
		}
		return failed;
	}

	/** Runs the effect with the job's transaction suspended; returns what it threw, or {@code null}. */
	private @Nullable Throwable runEffect(ExternalEffect effect) {
		@Nullable Throwable[] failure = new Throwable[1];
		this.outsideTransaction.executeWithoutResult((none) -> {
			try {
				effect.run();
			}
			catch (Throwable ex) {
				failure[0] = ex;
			}
		});
		return failure[0];
	}

	private void releaseQuietly(Session session, String gid) {
		try {
			session.release(gid);
		}
		catch (SQLException ex) {
			// The connection is broken, and its session with it: the lock went with the session.
			logger.debug("Could not release the lock of prepared transaction '{}': {}", gid, ex.toString());
		}
	}

}
