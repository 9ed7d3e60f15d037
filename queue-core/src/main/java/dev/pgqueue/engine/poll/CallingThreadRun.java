package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import dev.pgqueue.engine.job.ClaimStart;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.limits.JobClaims;
import dev.pgqueue.engine.run.Attempt;
import dev.pgqueue.engine.service.EngineService;

/**
 * Claims and runs one queue's jobs on the calling thread, through the claim strategy of its mode,
 * until a claim takes nothing: what a poller's workers do, without a poll thread or a pool. For a
 * test that decides when jobs run (the test kit): each listener runs on the caller's thread inside
 * the transaction, savepoints, lease and completion its mode gives it on a worker, and its attempt
 * is counted and logged as a worker's is.
 *
 * <p>The strategy's {@link Workers} run what they are handed at once, on the thread that hands it
 * over, so a claim returns once every job it took has run. In leased mode the completer writes
 * outcomes and the lease keeper extends leases on threads of their own, as for a poller; both are
 * stopped, every outcome written, before {@link #run} returns.
 *
 * <p>The calling thread must not be in a transaction: a transactional batch would join it, and its
 * jobs' work and completions would commit (or roll back) with the caller's transaction rather than
 * on their own.
 */
public final class CallingThreadRun {

	private final RunContext context;

	private final Function<RunContext, ClaimStrategy> strategies;

	/**
	 * @param context the queue, its kinds and claims (the queue's own, or those of one chosen job),
	 * what runs an attempt
	 * @param strategies makes the queue's claim strategy from a context, as for its poller
	 */
	public CallingThreadRun(RunContext context, Function<RunContext, ClaimStrategy> strategies) {
		this.context = context;
		this.strategies = strategies;
	}

	/**
	 * Claims and runs jobs until a claim takes none, or takes some but records no outcome (its batch
	 * failed and was rolled back; the queue's claim failures log why), or {@code maxJobs} or more have
	 * been claimed.
	 * @return the attempts whose outcomes were recorded, in the order they were
	 */
	public List<Attempt> run(int maxJobs) {
		AtomicInteger claimed = new AtomicInteger();
		// A leased job past its time limit is recorded by the watchdog's thread.
		List<Attempt> recorded = new CopyOnWriteArrayList<>();
		RunContext counted = new RunContext(this.context.settings(), this.context.kinds(), this.context.owner(),
				this.context.jobs(), this.context.scope(), counting(this.context.claims(), claimed),
				this.context.progress(), this.context.runner().alsoRecordingTo(recorded::add), this.context.metrics(),
				this.context.workers(), this.context.connections(), this.context.rate());
		ClaimStrategy strategy = this.strategies.apply(counted);
		PollSignals signals = new PollSignals(() -> false,
				new ClaimFailures(this.context.queue(), this.context.metrics(), this.context.connections()));
		List<EngineService> services = strategy.prepare(Workers.onCallingThread(this.context.settings().concurrency(),
				signals), signals);
		EngineService.startAll(services);
		try {
			while (claimed.get() < maxJobs) {
				int claimedBefore = claimed.get();
				int recordedBefore = recorded.size();
				strategy.beforeClaim();
				int room = strategy.claimRoom();
				if (room == 0) {
					break;
				}
				strategy.claim(room);
				if (claimed.get() == claimedBefore || recorded.size() == recordedBefore) {
					break;
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		finally {
			strategy.stopClaiming();
			EngineService.stopAll(services);
		}
		return List.copyOf(recorded);
	}

	/** The claims, counting the jobs they take. */
	private static JobClaims counting(JobClaims claims, AtomicInteger claimed) {
		return new JobClaims() {

			@Override
			public List<ClaimedJob> lock(String[] kinds, int limit, ClaimStart start) {
				return counted(claims.lock(kinds, limit, start));
			}

			@Override
			public List<ClaimedJob> lease(String[] kinds, int limit, String owner, Duration lease, ClaimStart start) {
				return counted(claims.lease(kinds, limit, owner, lease, start));
			}

			@Override
			public boolean limited() {
				return claims.limited();
			}

			@Override
			public boolean stoppedAtShare() {
				return claims.stoppedAtShare();
			}

			private List<ClaimedJob> counted(List<ClaimedJob> jobs) {
				claimed.addAndGet(jobs.size());
				return jobs;
			}

		};
	}

}
