package dev.pgqueue.engine.leased;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.JobOutcome;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.leased.LeasedJobs.Held;
import dev.pgqueue.engine.limits.RateGate;
import dev.pgqueue.engine.limits.RatePermit;
import dev.pgqueue.engine.poll.ClaimProgress;
import dev.pgqueue.engine.poll.ClaimScope;
import dev.pgqueue.engine.poll.ClaimStrategy;
import dev.pgqueue.engine.limits.JobClaims;
import dev.pgqueue.engine.poll.PollSignals;
import dev.pgqueue.engine.poll.RunContext;
import dev.pgqueue.engine.poll.Workers;
import dev.pgqueue.engine.run.Attempt;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.service.PooledConnections;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.metrics.QueueMetrics;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;

/**
 * Leased mode: a claim commits at once with a lease, and each worker slot runs one job at a time
 * outside any transaction.
 *
 * <p><b>Claiming ahead.</b> Claiming only for free slots costs a claim round trip per job when jobs
 * are short, and leaves each freed worker idle for that round trip. With
 * {@link QueueSettings#claimAhead()}, the poll thread also claims about as many jobs as its workers
 * start during two claim round trips (plus 2 ms), at most {@code max-batch-size} (or the batch size,
 * where claims do not adapt: {@link QueueSettings#adaptsBatchSize()}) ({@link ClaimAheadEstimate}),
 * into a local FIFO. A worker that finishes takes the next job from it without a round trip, and
 * the poll thread claims again when it is half empty. Jobs claimed ahead are leased like running
 * jobs, go back to the queue without using an attempt if they wait more than
 * {@link #CLAIM_AHEAD_MAX_WAIT} (or the poll interval, if longer), and go back at once when claiming
 * stops. {@link LeasedJobs} keeps the account of held jobs and never lets a worker start one whose
 * lease it knows is lost.
 *
 * <p><b>Worker claims.</b> The poll thread makes one claim at a time, so with jobs shorter than a
 * claim round trip its round trips would bound the queue's throughput whatever the concurrency. So
 * while the last claim found a backlog, a worker that finds nothing claimed ahead claims its own
 * next job (and what the estimate asks for), up to {@link #MAX_WORKER_CLAIMS} workers at once.
 *
 * <p>Leases are extended by the {@link LeaseKeeper}, outcomes written by the {@link Completer}, both
 * on timers and threads of their own.
 *
 * <p><b>Time limits.</b> A job that runs past its time limit is taken from its worker by the watchdog:
 * its timed-out outcome goes to the completer at once, its thread is interrupted, and its slot is
 * given back, so the queue runs its next job whether or not the listener reacts. The thread stays
 * with the listener until it returns, then leaves without touching the job or the slot.
 */
public final class LeasedClaims implements ClaimStrategy {

	/**
	 * Longest a job claimed ahead waits for a worker before it goes back to the queue, unless the poll
	 * interval is longer: a job may wait that long for any poller anyway.
	 */
	public static final Duration CLAIM_AHEAD_MAX_WAIT = Duration.ofSeconds(1);

	/**
	 * How late a listener past its time limit may return before that is worth a warning: one that
	 * reacts to the interruption returns within milliseconds.
	 */
	private static final Duration LATE_RETURN_WARNING = Duration.ofSeconds(1);

	/** Most workers that claim their own next job at once (each borrows a pooled connection). */
	static final int MAX_WORKER_CLAIMS = 4;

	private static final Logger logger = LoggerFactory.getLogger(LeasedClaims.class);

	private final QueueSettings settings;

	private final String[] kinds;

	private final String owner;

	private final JobRepository repository;

	private final ClaimScope scope;

	private final JobClaims claims;

	private final ClaimProgress progress;

	private final JobRunner runner;

	private final QueueMetrics metrics;

	private final WorkerSettings lifecycle;

	private final LeasedJobs leased;

	private final ClaimAheadEstimate aheadEstimate;

	/**
	 * Most jobs one claim takes: {@code max-batch-size} where claims adapt (claim-ahead sizes them by
	 * the workers' pace), else {@code batch-size}.
	 */
	private final int mostClaimed;

	/** How many workers may claim their next jobs themselves at once, besides the poll thread. */
	private final Semaphore workerClaims;

	/** Whether the last claim took all it asked for, so that more jobs are likely due. */
	private volatile boolean backlog;

	private volatile boolean aborting;

	private Workers workers;

	private final PooledConnections connections;

	/** The queue's rate limit as claims meet it. */
	private final RateGate rate;

	/** Whether the poll thread claims beyond its free workers, and workers claim for themselves. */
	private final boolean claimAhead;

	private PollSignals signals;

	private LeaseKeeper leaseKeeper;

	private Completer completer;

	/**
	 * @param context the queue and the owner this poller claims as, its claims and where they are
	 * recorded, what runs an attempt, threads, shutdown timeout, and whether completed jobs are deleted
	 */
	public LeasedClaims(RunContext context) {
		this.settings = context.settings();
		this.scope = context.scope();
		this.claims = context.claims();
		this.progress = context.progress();
		this.kinds = context.kinds();
		this.owner = context.owner();
		this.repository = context.jobs();
		this.runner = context.runner();
		this.metrics = context.metrics();
		this.lifecycle = context.workers();
		this.connections = context.connections();
		this.leased = new LeasedJobs(this.repository, this.settings.name(), this.owner, this.settings.leaseDuration());
		this.mostClaimed = this.settings.adaptsBatchSize() ? this.settings.maxBatchSize() : this.settings.batchSize();
		this.aheadEstimate = new ClaimAheadEstimate(this.mostClaimed);
		this.rate = context.rate();
		this.claimAhead = this.settings.claimAhead();
		this.workerClaims = new Semaphore(
				this.claimAhead ? Math.min(MAX_WORKER_CLAIMS, this.settings.concurrency() - 1) : 0);
	}

	@Override
	public List<EngineService> prepare(Workers workers, PollSignals signals) {
		this.workers = workers;
		this.signals = signals;
		this.aborting = false;
		this.completer = new Completer(this.repository, this.lifecycle, this.settings.name(),
				(finished) -> {
					this.leased.recorded(finished.job().id());
					if (this.claims.limited()) {
						// Its outcome is written: the slots it held are free, for this poller too.
						signals.wakeUp();
					}
				}, this.runner::published);
		this.leaseKeeper = new LeaseKeeper(this.leased, this.settings, this.lifecycle.threads(),
				this.connections);
		// Stopped in the reverse order, outcomes first: a job stays held, its lease extended, until its
		// outcome is written.
		return List.of(this.leaseKeeper, this.completer);
	}

	@Override
	public void beforeClaim() {
		this.leased.returnStale(claimAheadMaxWait());
		dispatchClaimedAhead();
	}

	/** How many jobs the next claim may take now; zero while there is no reason to claim. */
	@Override
	public int claimRoom() {
		int free = this.workers.free();
		int waiting = this.leased.aheadCount();
		int target = this.claimAhead ? this.aheadEstimate.target() : 0;
		if (waiting == 0 && free > 0) {
			return Math.min(this.mostClaimed, free + target);
		}
		if (target > 0 && waiting <= target / 2) {
			return Math.min(this.mostClaimed, free + target - waiting);
		}
		return 0;
	}

	@Override
	public boolean claim(int room) {
		List<Held> jobs = claim(room, this.claimAhead);
		this.signals.claimWorked();
		this.leased.holdAhead(jobs);
		dispatchClaimedAhead();
		return jobs.size() == room;
	}

	@Override
	public int claimedAhead() {
		return this.leased.aheadCount();
	}

	/**
	 * Leases up to {@code wanted} jobs and registers them as this poller's (their leases extended
	 * from now on); notes whether the claim found a backlog.
	 * @param estimate whether the claim feeds the claim-ahead estimate (the poll thread's claims do)
	 */
	private List<Held> claim(int wanted, boolean estimate) {
		long start = System.nanoTime();
		RatePermit permit = this.rate.reserve(wanted, this.kinds);
		int granted = permit.granted();
		if (granted == 0) {
			// Held by the rate limit: the poll thread sleeps until a start frees; workers leave it to it.
			this.backlog = false;
			return List.of();
		}
		List<ClaimedJob> jobs;
		try {
			// Leased jobs whose weights the grant cannot carry go back to the queue at once, untouched.
			jobs = this.scope.claim(granted, (from) -> this.rate.fit(permit, this.claims.lease(this.kinds, granted,
					this.owner, this.settings.leaseDuration(), permit.applyTo(from)),
					(left) -> this.repository.releaseLeased(this.owner, ids(left))));
		}
		catch (RuntimeException ex) {
			this.rate.failed(permit);
			throw ex;
		}
		this.rate.usedQuietly(permit, jobs);
		jobs = permit.stamped(jobs);
		long took = System.nanoTime() - start;
		this.progress.claimed(this.kinds, granted, jobs, start, took);
		this.backlog = jobs.size() == wanted;
		if (estimate) {
			this.aheadEstimate.claimed(start, took);
		}
		return this.leased.claimed(jobs, start);
	}

	private static List<Long> ids(List<ClaimedJob> jobs) {
		List<Long> ids = new ArrayList<>(jobs.size());
		jobs.forEach((job) -> ids.add(job.id()));
		return ids;
	}

	/** Starts jobs claimed ahead on free slots, oldest first. */
	private void dispatchClaimedAhead() {
		while (this.leased.aheadCount() > 0 && this.workers.tryAcquire()) {
			Held next = this.leased.nextAhead();
			if (next == null) {
				this.workers.release();
				return;
			}
			try {
				this.workers.execute(() -> work(next));
			}
			catch (RuntimeException ex) {
				this.workers.release();
				this.leased.returnUnstarted(List.of(next));
				this.leased.returnAhead();
				throw ex;
			}
		}
	}

	/**
	 * How long a job claimed ahead may wait for a worker before it goes back to the queue, so that
	 * other instances can run it.
	 */
	private Duration claimAheadMaxWait() {
		Duration interval = this.settings.pollInterval();
		return (interval.compareTo(CLAIM_AHEAD_MAX_WAIT) > 0) ? interval : CLAIM_AHEAD_MAX_WAIT;
	}

	/**
	 * A worker: runs the job it was given, then jobs claimed ahead while there are any, holding its
	 * slot throughout, unless a job past its time limit took the slot from it.
	 */
	private void work(Held first) {
		Held job = first;
		while (true) {
			boolean holdsSlot = true;
			try {
				while (job != null) {
					holdsSlot = runLeased(job);
					if (!holdsSlot) {
						return;
					}
					boolean claiming = !this.signals.isStopping();
					job = claiming ? takeClaimedAhead() : null;
					if (job == null && claiming) {
						job = claimOwnNext();
					}
				}
			}
			finally {
				if (holdsSlot) {
					this.workers.release();
				}
			}
			// A claim may have queued jobs after this worker found none, while it still held its slot.
			if (this.signals.isStopping() || this.leased.aheadCount() == 0 || !this.workers.tryAcquire()) {
				return;
			}
			job = takeClaimedAhead();
			if (job == null) {
				this.workers.release();
				return;
			}
		}
	}

	/**
	 * Claims this worker's next job itself, when nothing is claimed ahead: its own and as many more as
	 * the claim-ahead estimate asks for (at most {@link #mostClaimed}), which go to the FIFO. Only while the
	 * last claim took all it asked for: a queue that keeps up (a steady trickle, or empty) is left to
	 * the poll thread and its wake-ups, and costs no extra claims; nor while the queue is paused.
	 * Returns null when it claimed nothing.
	 */
	private @Nullable Held claimOwnNext() {
		if (!this.backlog || this.signals.queuePaused() || !this.workerClaims.tryAcquire()) {
			return null;
		}
		try {
			int wanted = Math.max(1, Math.min(this.mostClaimed, this.aheadEstimate.target() + 1));
			List<Held> claimed = claim(wanted, false);
			if (claimed.isEmpty()) {
				return null;
			}
			if (this.signals.isStopping() || this.aborting) {
				// Stopped while claiming: the jobs go back rather than start during shutdown.
				this.leased.returnUnstarted(claimed);
				return null;
			}
			if (claimed.size() > 1) {
				this.leased.holdAhead(claimed.subList(1, claimed.size()));
				if (this.signals.isStopping()) {
					// Stopped meanwhile, perhaps after the FIFO was emptied back to the queue.
					this.leased.returnAhead();
				}
				// The poll thread hands them to free workers.
				this.signals.workersChanged();
			}
			return claimed.get(0);
		}
		catch (DataAccessException ex) {
			// The poll thread reports failures and backs off; this worker just stops claiming.
			logger.debug("Queue '{}': a worker's claim failed: {}", this.settings.name(), ex.toString());
			return null;
		}
		finally {
			this.workerClaims.release();
		}
	}

	private @Nullable Held takeClaimedAhead() {
		Held next = this.leased.nextAhead();
		if (next != null && this.leased.aheadCount() <= this.aheadEstimate.target() / 2) {
			this.signals.workersChanged();
		}
		return next;
	}

	/** Runs one job; returns false when it ran past its time limit and the worker's slot was given away. */
	private boolean runLeased(Held held) {
		if (!this.leased.start(held)) {
			return true;
		}
		this.aheadEstimate.jobStarted();
		Attempt attempt = null;
		boolean stillOwn;
		try {
			attempt = this.runner.runUnrecorded(held.job(), this.settings,
					(timedOut, thread) -> abandon(held, timedOut));
		}
		finally {
			stillOwn = this.leased.ended(held, attempt, this.completer);
			Thread.interrupted();
		}
		if (stillOwn) {
			// A job returned to the queue at shutdown while its handler ran was counted and logged as released
			// (abandonRunning): what its interrupted handler ended with is neither written nor reported.
			if (!this.leased.released(held)) {
				// Published once the completer has written it.
				this.runner.recordUnpublished(attempt);
			}
			return true;
		}
		int abandoned = this.workers.abandonedReturned();
		this.metrics.abandonedHandlers(this.settings.name(), abandoned);
		long late = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - held.timedOutAt());
		if (late >= LATE_RETURN_WARNING.toMillis()) {
			logger.warn("Job {} of kind '{}' in queue '{}': its listener ignored the interruption at its time limit "
					+ "and returned {} ms later, on a thread its worker had left; what it returned was discarded "
					+ "({} such threads still running)", held.job().job().id(), held.job().job().kind(),
					this.settings.name(), late, abandoned);
		}
		return false;
	}

	/**
	 * On the watchdog thread, when a job runs past its time limit: takes the job from its worker with
	 * its timed-out outcome, and gives the worker's slot back so that the next job can start.
	 */
	private void abandon(Held held, Attempt timedOut) {
		if (!this.leased.timedOut(held, timedOut, this.completer)) {
			return;
		}
		this.runner.recordUnpublished(timedOut);
		this.metrics.abandonedHandlers(this.settings.name(), this.workers.abandon());
	}

	@Override
	public void stopClaiming() {
		this.leased.returnAhead();
	}

	@Override
	public void abandonRunning() {
		this.aborting = true;
		List<Held> unfinished = this.leased.abandonUnfinished();
		try {
			int released = this.leased.release(unfinished);
			logger.warn("Queue '{}': shutdown timeout ({}) passed; returned {} unfinished jobs to the queue without "
					+ "using an attempt", this.settings.name(), this.lifecycle.shutdownTimeout(), released);
			unfinished.forEach((job) -> this.metrics.jobFinished(this.settings.name(), job.job().job().kind(),
					JobOutcome.RELEASED, 0));
		}
		catch (DataAccessException ex) {
			logger.warn("Queue '{}': could not return {} unfinished jobs at shutdown; they run again once their "
					+ "leases expire: {}", this.settings.name(), unfinished.size(), ex.toString());
		}
	}

}
