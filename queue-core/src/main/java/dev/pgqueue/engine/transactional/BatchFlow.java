package dev.pgqueue.engine.transactional;

import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.pgqueue.JobOutcome;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.limits.RateGate;
import dev.pgqueue.engine.limits.RatePermit;
import dev.pgqueue.engine.poll.RunContext;
import dev.pgqueue.engine.run.Attempt;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.run.Outcome;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.sql.JobRepository;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The flow every transactional batch follows, in one transaction: claim, hand the claim's size to
 * the poll thread, run what was claimed behind a savepoint, record each outcome with the row locks
 * the claim took, commit, then count and log the attempts whose outcomes stand. How the claimed jobs
 * run is the variant's: {@link TransactionalBatchRunner} runs a batch optimistically, then carefully
 * when a job fails; {@code twophase.TwoPhaseJobRunner} runs one job and prepares its transaction
 * before its external effect.
 */
public abstract class BatchFlow implements BatchRun {

	private final RunContext context;

	private final TransactionTemplate transactions;

	/**
	 * Ids of the jobs this poller's open batches hold locked. A short claim that steps over them has
	 * not lost anything to contention: they are running here.
	 */
	private final Set<Long> held = ConcurrentHashMap.newKeySet();

	/** The start instant of the batch running on this thread, when a rate limit granted it; else null. */
	private final ThreadLocal<@Nullable Instant> startedAt = new ThreadLocal<>();

	protected BatchFlow(RunContext context, TransactionTemplate transactions) {
		this.context = context;
		this.transactions = transactions;
	}

	@Override
	public final int run(ClaimHandOff handOff, BatchStop stop, int batchSize) {
		// Reserved before the batch's transaction, in one of its own: the window's row is never held
		// while a batch runs.
		RateGate rate = this.context.rate();
		RatePermit permit = rate.reserve(batchSize, this.context.kinds());
		if (permit.granted() == 0) {
			handOff.claimed(0);
			return 0;
		}
		int[] claimed = { 0 };
		List<ClaimedJob> taken = new ArrayList<>();
		List<Long> holding = new ArrayList<>();
		List<Attempt> standing;
		this.startedAt.set(permit.startedAt());
		try {
			standing = this.transactions.execute((status) -> inTransaction(() -> {
				List<ClaimedJob> jobs = permit.stamped(claim(permit));
				taken.addAll(jobs);
				for (int i = 0; i < jobs.size(); i++) {
					holding.add(jobs.get(i).id());
				}
				this.held.addAll(holding);
				claimed[0] = jobs.size();
				handOff.claimed(claimedCount(jobs, batchSize));
				return jobs.isEmpty() ? List.<Attempt>of() : runClaimed(status, jobs, stop);
			}));
		}
		finally {
			// Committed or rolled back: the row locks are gone.
			this.held.removeAll(holding);
			this.startedAt.remove();
			// A batch that claimed and then failed keeps its starts: its listeners may have called out.
			rate.usedQuietly(permit, taken);
		}
		// Counted and logged once committed, and only the attempts whose outcome stands: a neighbour
		// undone by a careful run and run again is one job finished, not two.
		if (standing != null) {
			standing.forEach(this.context.runner()::record);
		}
		return claimed[0];
	}

	/**
	 * Runs the claimed jobs inside the batch's transaction and records their outcomes.
	 * @return the attempts whose outcomes were recorded (counted once the transaction commits)
	 */
	protected abstract List<Attempt> runClaimed(TransactionStatus status, List<ClaimedJob> jobs, BatchStop stop);

	/** Runs the body of the transaction; a variant may bind what its transaction needs around it. */
	protected <T> T inTransaction(Supplier<T> transaction) {
		return transaction.get();
	}

	/** How many jobs the poll thread is told the claim returned; a full batch makes it claim again at once. */
	protected int claimedCount(List<ClaimedJob> jobs, int batchSize) {
		return jobs.size();
	}

	/**
	 * Claims up to the permit's jobs from where the scope says (or the jobs the permit chose), and
	 * records what the claim achieved.
	 */
	private List<ClaimedJob> claim(RatePermit permit) {
		String[] kinds = this.context.kinds();
		int batchSize = permit.granted();
		long start = System.nanoTime();
		// Jobs whose weights the grant cannot carry stay untouched (locked until the batch ends) and are not
		// run; the floors never see them, so the next claim reads them first.
		List<ClaimedJob> jobs = this.context.scope()
			.claim(batchSize, (from) -> this.context.rate()
				.fit(permit, this.context.claims().lock(kinds, batchSize, permit.applyTo(from)), (left) -> {
				}));
		this.context.progress().claimed(kinds, batchSize, jobs, start, System.nanoTime() - start, this.held);
		return jobs;
	}

	protected final RunContext context() {
		return this.context;
	}

	protected final QueueSettings settings() {
		return this.context.settings();
	}

	protected final JobRunner runner() {
		return this.context.runner();
	}

	protected final JobRepository jobs() {
		return this.context.jobs();
	}

	protected final TransactionTemplate transactions() {
		return this.transactions;
	}

	/**
	 * Completes the jobs, which the batch's transaction holds locked, storing the output each attempt
	 * returned; {@code attempts} are the jobs' attempts, in the order of {@code ids}.
	 */
	protected final void completeLocked(List<Long> ids, List<Attempt> attempts) {
		List<@Nullable String> outputs = null;
		for (int i = 0; i < attempts.size(); i++) {
			String output = attempts.get(i).output();
			if (output != null) {
				if (outputs == null) {
					outputs = new ArrayList<>(Collections.nCopies(attempts.size(), null));
				}
				outputs.set(i, output);
			}
		}
		jobs().completeLocked(ids, outputs, this.context.workers().deleteCompleted(), this.startedAt.get());
	}

	/**
	 * Records the attempt that did not complete (failed or snoozed) of a job the batch's transaction
	 * holds locked; returns the attempt.
	 */
	protected final Attempt recordLockedFailure(ClaimedJob job, Attempt attempt) {
		Outcome outcome = attempt.outcome();
		jobs().recordLockedFailure(job.id(), outcome.end(attempt.job()).startedAt(job.claimedAt()),
				this.context.workers().attemptHistory());
		return attempt;
	}

	/** Counts a job that goes back to the queue without using an attempt (shutdown ran out of time). */
	protected final void released(ClaimedJob job) {
		this.context.metrics().jobFinished(settings().name(), job.job().kind(), JobOutcome.RELEASED, 0);
	}

	/**
	 * Whether the failure is PostgreSQL refusing a statement in a transaction that an earlier failed
	 * statement aborted ({@code 25P02}).
	 */
	public static boolean inFailedTransaction(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && "25P02".equals(sql.getSQLState())) {
				return true;
			}
		}
		return false;
	}

}
