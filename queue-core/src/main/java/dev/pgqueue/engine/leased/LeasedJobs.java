package dev.pgqueue.engine.leased;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.run.Attempt;
import dev.pgqueue.engine.run.Outcome;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.sql.JobRepository.LeaseExtension;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;

/**
 * The jobs a leased poller holds, and what it knows of their leases: jobs running on its workers,
 * and jobs claimed ahead that wait, in claim order, for a worker.
 *
 * <p>It extends their leases, returns jobs no worker started to the queue without using an attempt,
 * and never lets a worker start a job whose lease it knows is lost: by its own clock (the process
 * was paused, or could not reach the database, past the lease) or because an extension no longer
 * found the job this owner's. Such a job may have been rescued and run elsewhere meanwhile.
 *
 * <p>A job is either started or returned, never both: each job's state changes under its own lock.
 */
final class LeasedJobs {

	private static final Logger logger = LoggerFactory.getLogger(LeasedJobs.class);

	private final JobRepository repository;

	private final String queue;

	private final String owner;

	private final Duration lease;

	private final Map<Long, Held> held = new ConcurrentHashMap<>();

	private final LinkedBlockingQueue<Held> ahead = new LinkedBlockingQueue<>();

	/**
	 * @param repository the SQL
	 * @param queue the queue's name, for logs
	 * @param owner the lease owner these jobs were claimed as
	 * @param lease the queue's lease duration
	 */
	public LeasedJobs(JobRepository repository, String queue, String owner, Duration lease) {
		this.repository = repository;
		this.queue = queue;
		this.owner = owner;
		this.lease = lease;
	}

	/**
	 * Holds jobs just claimed. Their lease is counted from {@code claimStart}, taken before the claim:
	 * the database's lease began later, so this errs on the safe side.
	 */
	public List<Held> claimed(List<ClaimedJob> jobs, long claimStart) {
		long claimedAt = System.nanoTime();
		long leaseUntil = claimStart + this.lease.toNanos();
		List<Held> claimed = new ArrayList<>(jobs.size());
		for (ClaimedJob job : jobs) {
			Held held = new Held(job, claimedAt, leaseUntil);
			this.held.put(job.id(), held);
			claimed.add(held);
		}
		return claimed;
	}

	/** Puts claimed jobs in the FIFO of jobs claimed ahead. */
	public void holdAhead(Collection<Held> jobs) {
		this.ahead.addAll(jobs);
	}

	/** The oldest job claimed ahead, or null. */
	public @Nullable Held nextAhead() {
		return this.ahead.poll();
	}

	/** Jobs held: running, claimed ahead, or finished with their outcome not yet written. */
	public int heldCount() {
		return this.held.size();
	}

	/** Jobs claimed ahead that wait for a worker. */
	public int aheadCount() {
		return this.ahead.size();
	}

	/**
	 * Marks the job as running on the current thread. Returns false when it must not run: it was
	 * returned to the queue, or its lease is lost (logged, and the job forgotten).
	 */
	public boolean start(Held job) {
		long now = System.nanoTime();
		synchronized (job) {
			if (job.released) {
				return false;
			}
			if (!job.leaseLost(now)) {
				job.thread = Thread.currentThread();
				return true;
			}
			job.released = true;
		}
		warnLeaseLostBeforeStart(job, now);
		this.held.remove(job.job.id());
		return false;
	}

	/**
	 * The job's handler ran {@code attempt} (null if it ended without one): hands its outcome, with its
	 * output, to the completer unless the job was returned to the queue meanwhile (shutdown). The job stays held,
	 * its lease extended, until the completer has written the outcome.
	 * @return whether the worker still had the job; false when the job ran past its time limit and
	 * was taken away from it ({@link #timedOut}): the outcome is discarded and the worker's slot is no
	 * longer its own
	 */
	public boolean ended(Held job, @Nullable Attempt attempt, Completer completer) {
		boolean submitted = false;
		synchronized (job) {
			if (job.timedOut) {
				return false;
			}
			if (attempt != null && !job.released) {
				job.handlerDone = true;
				completer.submit(job.job, attempt);
				submitted = true;
			}
			job.thread = null;
		}
		if (!submitted) {
			this.held.remove(job.job.id());
		}
		return true;
	}

	/**
	 * The job ran past its time limit: takes it away from its worker, interrupting the worker's
	 * thread, and hands {@code outcome} to the completer at once, so that whatever the handler returns
	 * later is discarded. Returns false when the job was no longer running on its worker (returned to
	 * the queue at shutdown, or its handler had just returned).
	 */
	public boolean timedOut(Held job, Attempt attempt, Completer completer) {
		synchronized (job) {
			Thread thread = job.thread;
			if (thread == null || job.released || job.handlerDone) {
				return false;
			}
			job.timedOut = true;
			job.timedOutAt = System.nanoTime();
			job.handlerDone = true;
			completer.submit(job.job, attempt);
			thread.interrupt();
		}
		return true;
	}

	/** The completer wrote the job's outcome (or gave up on it). */
	public void recorded(long id) {
		this.held.remove(id);
	}

	/**
	 * Extends the leases of every held job. A job claimed ahead whose lease the extension did not find
	 * this owner's leaves the FIFO at once and is never started.
	 * @throws DataAccessException when the database could not be reached; nothing changed
	 */
	public void extendLeases() {
		List<Long> ids = new ArrayList<>(this.held.keySet());
		if (ids.isEmpty()) {
			return;
		}
		long sentAt = System.nanoTime();
		LeaseExtension extension = this.repository.extendLeases(this.owner, ids, this.lease);
		long leaseUntil = sentAt + this.lease.toNanos();
		for (Long id : ids) {
			Held job = this.held.get(id);
			if (job != null && !extension.skipped().contains(id)) {
				// Not extended: finished meanwhile, or no longer ours; only the latter matters, to jobs not started yet.
				// (Skipped: still ours, locked by another transaction; its lease stays as it was until the next round.)
				job.leaseUntil = extension.extended().contains(id) ? leaseUntil : sentAt;
			}
		}
		if (extension.extended().size() + extension.skipped().size() < ids.size()) {
			dropLostAhead();
		}
	}

	/** Takes jobs claimed ahead whose lease is lost out of the FIFO: starting them would run them twice. */
	private void dropLostAhead() {
		long now = System.nanoTime();
		for (Held job : this.ahead) {
			if (job.leaseLost(now) && this.ahead.remove(job)) {
				synchronized (job) {
					job.released = true;
				}
				warnLeaseLostBeforeStart(job, now);
				this.held.remove(job.job.id());
			}
		}
	}

	/** Returns the jobs claimed ahead that waited longer than {@code maxWait} for a worker. */
	public void returnStale(Duration maxWait) {
		long now = System.nanoTime();
		List<Held> stale = new ArrayList<>();
		Held head;
		while ((head = this.ahead.peek()) != null && now - head.claimedAt > maxWait.toNanos()) {
			if (this.ahead.remove(head)) {
				stale.add(head);
			}
		}
		if (!stale.isEmpty()) {
			logger.debug("Queue '{}': returning {} jobs claimed ahead that waited over {} ms for a worker", this.queue,
					stale.size(), maxWait.toMillis());
			returnUnstarted(stale);
		}
	}

	/** Empties the FIFO of jobs claimed ahead back to the queue. */
	public void returnAhead() {
		List<Held> unstarted = new ArrayList<>();
		this.ahead.drainTo(unstarted);
		returnUnstarted(unstarted);
	}

	/** Puts the jobs of these that no worker started back in the queue, without using an attempt. */
	public void returnUnstarted(List<Held> jobs) {
		List<Long> ids = new ArrayList<>(jobs.size());
		long now = System.nanoTime();
		for (Held job : jobs) {
			synchronized (job) {
				if (job.thread == null && !job.handlerDone) {
					job.released = true;
					ids.add(job.job.id());
					if (job.leaseLost(now)) {
						// The guarded release below returns it only if nobody rescued it meanwhile.
						warnLeaseLostBeforeStart(job, now);
					}
				}
			}
		}
		if (ids.isEmpty()) {
			return;
		}
		try {
			this.repository.releaseLeased(this.owner, ids);
		}
		catch (DataAccessException ex) {
			logger.warn("Queue '{}': could not return {} jobs claimed ahead; they run again once their leases "
					+ "expire: {}", this.queue, ids.size(), ex.toString());
		}
		finally {
			ids.forEach(this.held::remove);
		}
	}

	/** Whether the job was returned to the queue (at shutdown) while it ran: its outcome is discarded. */
	public boolean released(Held job) {
		return job.released;
	}

	/**
	 * The shutdown timeout passed: takes every job whose handler has not returned away from its worker,
	 * interrupting the worker, so that its late outcome is discarded. Returns them, for
	 * {@link #release(List)}.
	 */
	public List<Held> abandonUnfinished() {
		List<Held> unfinished = new ArrayList<>();
		for (Held job : this.held.values()) {
			synchronized (job) {
				if (!job.handlerDone) {
					job.released = true;
					unfinished.add(job);
				}
			}
		}
		// Interrupt first: a handler that stops now has the least time to finish work whose outcome is
		// already decided (the job goes back and runs again).
		for (Held job : unfinished) {
			Thread thread = job.thread;
			if (thread != null) {
				thread.interrupt();
			}
		}
		return unfinished;
	}

	/**
	 * Returns jobs taken from their workers to the queue without using an attempt; returns how many
	 * were still this owner's.
	 * @throws DataAccessException when the database could not be reached
	 */
	public int release(List<Held> jobs) {
		return this.repository.releaseLeased(this.owner, jobs.stream().map((job) -> job.job.id()).toList());
	}

	private void warnLeaseLostBeforeStart(Held job, long now) {
		logger.warn("Job {} of kind '{}' in queue '{}' was not started: its lease was lost while it waited for a "
				+ "worker, {} ms after it was claimed (it expired while this process was paused or could not reach the "
				+ "database, so the job may be another instance's now); it was not run here and goes back to the queue, "
				+ "released now if it is still this instance's, or by the rescuer", job.job.job().id(),
				job.job.job().kind(), this.queue, TimeUnit.NANOSECONDS.toMillis(now - job.claimedAt));
	}

	/** A job this poller holds: claimed ahead, running, or finished with its outcome not yet written. */
	public static final class Held {

		private final ClaimedJob job;

		private final long claimedAt;

		/** When this poller's lease ends as far as it knows, in {@link System#nanoTime()}. */
		private volatile long leaseUntil;

		private volatile @Nullable Thread thread;

		private volatile boolean released;

		private volatile boolean handlerDone;

		/** Taken from its worker at its time limit; its outcome was submitted then. */
		private volatile boolean timedOut;

		private volatile long timedOutAt;

		Held(ClaimedJob job, long claimedAt, long leaseUntil) {
			this.job = job;
			this.claimedAt = claimedAt;
			this.leaseUntil = leaseUntil;
		}

		public ClaimedJob job() {
			return this.job;
		}

		/** When it was taken from its worker at its time limit, in {@link System#nanoTime()}. */
		long timedOutAt() {
			return this.timedOutAt;
		}

		boolean leaseLost(long now) {
			return now - this.leaseUntil >= 0;
		}

	}

}
