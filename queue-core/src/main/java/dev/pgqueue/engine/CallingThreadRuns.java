package dev.pgqueue.engine;

import java.util.List;
import java.util.Optional;
import java.util.UUID;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobDetails;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.maintenance.Promoter;
import dev.pgqueue.engine.run.Attempt;

/**
 * Runs one database's jobs on the calling thread, as its pollers run them on their workers (the same
 * claims, transactions, listeners, outcomes and metrics, through {@link JobPollerFactory#callingThreadRun}),
 * for tests that decide when jobs run (the test kit), with or without pollers: those skip the jobs a
 * run holds, and a run skips theirs. The calling thread must not be in a transaction, which the
 * batches would join.
 *
 * <p>Kept apart from {@link DatabaseEngine}, which only hands these runs out, because what a test may
 * run here, and what it finds done first, changes for the test kit's sake and for no other.
 */
final class CallingThreadRuns {

	private final JobPollerFactory pollerFactory;

	private final JobHandlerRegistry handlers;

	private final Promoter promoter;

	private final JobAdmin admin;

	CallingThreadRuns(JobPollerFactory pollerFactory, JobHandlerRegistry handlers, Promoter promoter, JobAdmin admin) {
		this.pollerFactory = pollerFactory;
		this.handlers = handlers;
		this.promoter = promoter;
		this.admin = admin;
	}

	/**
	 * Runs the due jobs of a queue until none is left or about {@code maxJobs} were claimed; jobs its
	 * listeners enqueue into the queue meanwhile run too. Scheduled jobs that are due already are made
	 * available first, as the promoter does.
	 * @return the attempts whose outcomes were recorded; none when no listener here handles the queue
	 */
	List<Attempt> due(String queue, int maxJobs) {
		String[] kinds = this.handlers.kindsOf(queue);
		if (kinds.length == 0) {
			return List.of();
		}
		this.promoter.promote();
		return this.pollerFactory.callingThreadRun(queue, kinds, null).run(maxJobs);
	}

	/**
	 * Runs the job with this public id now, whether it is due or scheduled for later, as its queue's
	 * poller would run it when due.
	 * @return its attempt; empty when it is neither available nor scheduled, when another transaction
	 * holds it (a poller's batch is running it), or when no listener of this application handles its
	 * kind in its queue
	 */
	Optional<Attempt> job(UUID id) {
		JobDetails job = this.admin.find(id).orElse(null);
		if (job == null || !job.queue().equals(this.handlers.queueOf(job.kind()))) {
			return Optional.empty();
		}
		// No limit here: the job's claims take it once (JobClaims.one), so the run ends at the next claim.
		List<Attempt> attempts = this.pollerFactory.callingThreadRun(job.queue(), new String[] { job.kind() }, id)
			.run(Integer.MAX_VALUE);
		return attempts.isEmpty() ? Optional.empty() : Optional.of(attempts.get(0));
	}

}
