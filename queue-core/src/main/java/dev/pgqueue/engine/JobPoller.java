package dev.pgqueue.engine;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import dev.pgqueue.JobOutcome;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.ClaimedJob;
import dev.pgqueue.engine.JobRunner;
import dev.pgqueue.engine.Outcome;
import dev.pgqueue.engine.leased.ClaimAheadEstimate;
import dev.pgqueue.engine.leased.Completer;
import dev.pgqueue.engine.leased.LeasedJobs;
import dev.pgqueue.engine.leased.LeasedJobs.Held;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.transactional.TransactionalBatchRunner;
import dev.pgqueue.metrics.QueueMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.SmartLifecycle;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.dao.DataAccessException;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Claims the jobs of one queue with {@code FOR UPDATE SKIP LOCKED} and runs them on the queue's
 * workers.
 *
 * <p>One thread polls: it never claims more than the free worker slots allow, polls again at once
 * while claims come back full, and otherwise waits a jittered poll interval (so that instances
 * started together do not poll in lock-step). In {@link QueueMode#TRANSACTIONAL transactional}
 * mode a slot runs a whole batch in one transaction; in {@link QueueMode#LEASED leased} mode a
 * slot runs one job at a time, whose claim was committed with a lease.
 *
 * <p><b>Claiming ahead (leased mode).</b> Claiming only for free slots costs a claim round trip per
 * job when jobs are short, and leaves each freed worker idle for that round trip. With
 * {@link QueueSettings#claimAhead()}, the poller also claims about as many jobs as its workers start
 * during two claim round trips (plus 2 ms), at most the batch size, into a local FIFO. A worker that
 * finishes takes the next job from it without a round trip, and the poller claims again when it is
 * half empty. The estimate follows the observed start rate, so long jobs get no claim-ahead at all.
 * Jobs claimed ahead are leased like running jobs (their leases are extended), go back to the queue
 * without using an attempt if they wait more than {@link #CLAIM_AHEAD_MAX_WAIT} (or the poll
 * interval, if longer), and go back at once when the poller stops. A job claimed ahead whose lease
 * this poller knows it lost (the process was paused, or cut off from the database, for longer than
 * the lease, so the job may have been rescued and run elsewhere) is never started here;
 * {@link LeasedJobs} keeps that account.
 *
 * <p>Stopping is soft, then hard: claiming stops, running jobs get the shutdown timeout to finish,
 * then unfinished jobs go back to the queue without using an attempt and their threads are
 * interrupted.
 */
public class JobPoller implements SmartLifecycle {

	/** Late start and early stop: after everything a listener may use, before the data source. */
	public static final int PHASE = Integer.MAX_VALUE - 100;

	private static final Logger logger = LoggerFactory.getLogger(JobPoller.class);

	private static final Duration MAX_ERROR_BACKOFF = Duration.ofSeconds(30);

	/**
	 * Longest a job claimed ahead waits for a worker before it goes back to the queue, unless the poll
	 * interval is longer: a job may wait that long for any poller anyway.
	 */
	public static final Duration CLAIM_AHEAD_MAX_WAIT = Duration.ofSeconds(1);

	/** Most workers that claim their own next job at once (each borrows a pooled connection). */
	static final int MAX_WORKER_CLAIMS = 4;

	private final QueueSettings settings;

	private final String[] kinds;

	private final JobRepository repository;

	private final JobRunner runner;

	private final TransactionalBatchRunner batchRunner;

	private final QueueMetrics metrics;

	private final WorkerSettings lifecycle;

	private final String owner;

	private final Semaphore slots;

	/** Leased mode: how many workers may claim their next jobs themselves at once, besides the poll thread. */
	private final Semaphore workerClaims;

	/** Leased mode: whether the last claim took all it asked for, so that more jobs are likely due. */
	private volatile boolean backlog;

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition signal = this.lock.newCondition();

	/** Leased mode: the jobs this poller holds, running or claimed ahead, and their leases. */
	private final LeasedJobs leased;

	private final Map<Thread, Boolean> batchThreads = new ConcurrentHashMap<>();

	/** Leased mode: how many jobs to hold claimed ahead. */
	private final ClaimAheadEstimate aheadEstimate;

	private volatile boolean running;

	private volatile boolean aborting;

	private boolean wakeRequested;

	/** Set by workers, cleared by the poll thread once it has looked; read without the lock. */
	private volatile boolean slotFreed;

	private Thread pollThread;

	private Executor workers;

	private volatile Completer completer;

	private long nextLeaseExtension;

	private volatile int batchFailures;

	private volatile long pauseUntil = System.nanoTime();

	/**
	 * @param settings the queue's settings
	 * @param kinds kinds this poller claims (those with a listener in this application)
	 * @param repository the SQL
	 * @param runner runs one attempt
	 * @param transactionTemplate transactions for transactional mode
	 * @param metrics where to report
	 * @param lifecycle thread and shutdown settings shared by all queues
	 */
	public JobPoller(QueueSettings settings, String[] kinds, JobRepository repository, JobRunner runner,
			TransactionTemplate transactionTemplate, QueueMetrics metrics, WorkerSettings lifecycle) {
		if (kinds.length == 0) {
			throw new IllegalArgumentException("Queue '" + settings.name() + "' has no job kinds to claim");
		}
		this.settings = settings;
		this.kinds = kinds.clone();
		this.repository = repository;
		this.runner = runner;
		this.batchRunner = (settings.mode() == QueueMode.TRANSACTIONAL)
				? new TransactionalBatchRunner(settings, kinds, repository, runner, transactionTemplate, metrics,
						lifecycle.deleteCompleted(), () -> this.aborting)
				: null;
		this.metrics = metrics;
		this.lifecycle = lifecycle;
		this.owner = ManagementFactory.getRuntimeMXBean().getName() + "/" + settings.name() + "/"
				+ UUID.randomUUID().toString().substring(0, 8);
		this.slots = new Semaphore(settings.concurrency());
		this.leased = new LeasedJobs(repository, settings.name(), this.owner, settings.leaseDuration());
		this.aheadEstimate = new ClaimAheadEstimate(settings.batchSize());
		int claimers = (settings.mode() == QueueMode.LEASED && settings.claimAhead())
				? Math.min(MAX_WORKER_CLAIMS, settings.concurrency() - 1) : 0;
		this.workerClaims = new Semaphore(claimers);
	}

	public QueueSettings settings() {
		return this.settings;
	}

	/** Kinds this poller claims. */
	public List<String> kinds() {
		return List.of(this.kinds);
	}

	/** Identifies this poller in lease columns and logs. */
	public String owner() {
		return this.owner;
	}

	/** Worker slots in use. */
	public int busySlots() {
		return this.settings.concurrency() - this.slots.availablePermits();
	}

	/** Leased mode: jobs claimed ahead that wait for a free worker. */
	public int claimedAheadJobs() {
		return this.leased.aheadCount();
	}

	/** Asks the poller to poll now rather than at the end of its interval (for example on a notification). */
	public void wakeUp() {
		this.lock.lock();
		try {
			this.wakeRequested = true;
			this.signal.signalAll();
		}
		finally {
			this.lock.unlock();
		}
	}

	private void releaseSlot() {
		this.slots.release();
		signalSlotFreed();
	}

	private void signalSlotFreed() {
		if (this.slotFreed) {
			// The poll thread has not looked since the last signal: it will see this change too.
			// Saves hundreds of workers taking the lock thousands of times a second.
			return;
		}
		this.lock.lock();
		try {
			this.slotFreed = true;
			this.signal.signalAll();
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		this.aborting = false;
		this.workers = newWorkers();
		if (this.settings.mode() == QueueMode.LEASED) {
			this.completer = new Completer(this.repository, this.lifecycle.deleteCompleted(), this.settings.name(),
					(finished) -> this.leased.recorded(finished.job().id()), this.lifecycle::newThread);
		}
		this.pollThread = this.lifecycle.newThread("pgqueue-poller-" + this.settings.name(), this::pollLoop);
		this.pollThread.start();
		logger.info("Polling queue '{}' in {} mode: {} kinds, concurrency {}, batch size {}", this.settings.name(),
				this.settings.mode().name().toLowerCase(java.util.Locale.ROOT), this.kinds.length,
				this.settings.concurrency(), this.settings.batchSize());
	}

	@Override
	public void stop() {
		CompletableFuture<Void> stopped = new CompletableFuture<>();
		stop(() -> stopped.complete(null));
		stopped.join();
	}

	@Override
	public synchronized void stop(Runnable callback) {
		if (!this.running) {
			callback.run();
			return;
		}
		this.running = false;
		wakeUp();
		Thread poller = this.pollThread;
		this.lifecycle.newThread("pgqueue-stop-" + this.settings.name(), () -> {
			try {
				drain(poller);
			}
			finally {
				if (this.completer != null) {
					this.completer.stop();
					this.completer = null;
				}
				if (this.workers instanceof ExecutorService pool) {
					pool.shutdown();
				}
				callback.run();
			}
		}).start();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

	// ---- polling

	private void pollLoop() {
		int failures = 0;
		this.nextLeaseExtension = System.nanoTime() + leaseExtensionPeriod();
		while (this.running) {
			try {
				long pause = this.pauseUntil - System.nanoTime();
				if (pause > 0) {
					awaitNextPoll(Duration.ofNanos(pause));
					continue;
				}
				if (!awaitFreeSlots()) {
					continue;
				}
				boolean full = (this.settings.mode() == QueueMode.LEASED) ? claimLeased() : startTransactionalBatch();
				failures = 0;
				if (!full) {
					awaitNextPoll(jittered(this.settings.pollInterval()));
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (RuntimeException ex) {
				failures++;
				Duration backoff = errorBackoff(failures);
				logger.warn("Queue '{}': polling failed ({} in a row); retrying in {} ms: {}", this.settings.name(),
						failures, backoff.toMillis(), ex.toString());
				try {
					awaitNextPoll(backoff);
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					return;
				}
			}
		}
	}

	/**
	 * Waits until there is room for a claim, extending leases meanwhile. A claim is made as soon as one
	 * slot is free: waiting for several would leave freed workers idle, and claims batch up by
	 * themselves under load, since slots that free up while one claim runs are all filled by the next.
	 * With jobs claimed ahead, the next claim is made when they are down to half the target.
	 */
	private boolean awaitFreeSlots() throws InterruptedException {
		while (this.running) {
			extendLeasesIfDue();
			if (this.settings.mode() == QueueMode.LEASED) {
				this.leased.returnStale(claimAheadMaxWait());
				dispatchClaimedAhead();
			}
			if (claimRoom() > 0) {
				return true;
			}
			awaitSlot(Duration.ofMillis(Math.min(this.settings.pollInterval().toMillis(), 50)));
		}
		return false;
	}

	/** How many jobs the next claim may take now; zero while there is no reason to claim. */
	private int claimRoom() {
		int free = this.slots.availablePermits();
		if (this.settings.mode() != QueueMode.LEASED) {
			return free;
		}
		int waiting = this.leased.aheadCount();
		int target = this.aheadEstimate.target();
		if (waiting == 0 && free > 0) {
			return Math.min(this.settings.batchSize(), free + target);
		}
		if (target > 0 && waiting <= target / 2) {
			return Math.min(this.settings.batchSize(), free + target - waiting);
		}
		return 0;
	}

	private boolean claimLeased() {
		int wanted = claimRoom();
		if (wanted == 0) {
			return true;
		}
		List<Held> jobs = claim(wanted, this.settings.claimAhead());
		this.leased.holdAhead(jobs);
		dispatchClaimedAhead();
		return jobs.size() == wanted;
	}

	/**
	 * Leases up to {@code wanted} jobs and registers them as this poller's (their leases extended
	 * from now on); notes whether the claim found a backlog.
	 * @param estimate whether the claim feeds the claim-ahead estimate (the poll thread's claims do)
	 */
	private List<Held> claim(int wanted, boolean estimate) {
		long start = System.nanoTime();
		List<ClaimedJob> jobs = this.repository.claimLeased(this.settings.name(), this.kinds, wanted, this.owner,
				this.settings.leaseDuration());
		long took = System.nanoTime() - start;
		this.metrics.pollCycle(this.settings.name(), took, jobs.size());
		this.backlog = jobs.size() == wanted;
		if (estimate) {
			this.aheadEstimate.claimed(start, took);
		}
		return this.leased.claimed(jobs, start);
	}

	/** Starts jobs claimed ahead on free slots, oldest first. */
	private void dispatchClaimedAhead() {
		while (this.leased.aheadCount() > 0 && this.slots.tryAcquire()) {
			Held next = this.leased.nextAhead();
			if (next == null) {
				releaseSlot();
				return;
			}
			try {
				this.workers.execute(() -> work(next));
			}
			catch (RuntimeException ex) {
				this.slots.release();
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
		return (this.settings.pollInterval().compareTo(CLAIM_AHEAD_MAX_WAIT) > 0) ? this.settings.pollInterval()
				: CLAIM_AHEAD_MAX_WAIT;
	}

	private boolean startTransactionalBatch() throws InterruptedException {
		this.slots.acquire();
		CompletableFuture<Integer> claimed = new CompletableFuture<>();
		try {
			this.workers.execute(() -> {
				this.batchThreads.put(Thread.currentThread(), Boolean.TRUE);
				try {
					this.batchRunner.run(claimed::complete);
					claimed.complete(0);
					this.batchFailures = 0;
				}
				catch (RuntimeException | Error ex) {
					if (!claimed.completeExceptionally(ex)) {
						// The claim had worked, so the poll loop saw no error: pause it here, or a batch that
						// fails the same way every time would be claimed again at once, over and over.
						int failures = ++this.batchFailures;
						Duration pause = errorBackoff(failures);
						this.pauseUntil = System.nanoTime() + pause.toNanos();
						logger.warn("Queue '{}': a batch was rolled back and its jobs released ({} in a row); pausing "
								+ "claims for {} ms: {}", this.settings.name(), failures, pause.toMillis(), ex.toString());
					}
				}
				finally {
					this.batchThreads.remove(Thread.currentThread());
					Thread.interrupted();
					releaseSlot();
				}
			});
		}
		catch (RuntimeException ex) {
			this.slots.release();
			throw ex;
		}
		try {
			return claimed.get() >= this.settings.batchSize();
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException(ex.getCause());
		}
	}

	// ---- transactional mode

	// ---- leased mode

	/**
	 * A worker: runs the job it was given, then jobs claimed ahead while there are any, holding its
	 * slot throughout.
	 */
	private void work(Held first) {
		Held job = first;
		while (true) {
			try {
				while (job != null) {
					runLeased(job);
					job = this.running ? takeClaimedAhead() : null;
					if (job == null && this.running) {
						job = claimOwnNext();
					}
				}
			}
			finally {
				releaseSlot();
			}
			// A claim may have queued jobs after this worker found none, while it still held its slot.
			if (!this.running || this.leased.aheadCount() == 0 || !this.slots.tryAcquire()) {
				return;
			}
			job = takeClaimedAhead();
			if (job == null) {
				releaseSlot();
				return;
			}
		}
	}

	/**
	 * Claims this worker's next job itself, when nothing is claimed ahead: its own and as many more as
	 * the claim-ahead estimate asks for (at most batch-size), which go to the FIFO. The poll thread
	 * makes one claim at a time of at most batch-size jobs, so with jobs shorter than a claim round
	 * trip its round trips would bound the queue's throughput whatever the concurrency (batch-size 1:
	 * one job per round trip). A few workers that just finished a job claim meanwhile, as workers
	 * with a connection each would. Only while the last claim took all it asked for: a queue that
	 * keeps up (a steady trickle, or empty) is left to the poll thread and its wake-ups, and costs no
	 * extra claims. Returns null when it claimed nothing.
	 */
	private Held claimOwnNext() {
		if (!this.backlog || !this.workerClaims.tryAcquire()) {
			return null;
		}
		try {
			int wanted = Math.max(1, Math.min(this.settings.batchSize(), this.aheadEstimate.target() + 1));
			List<Held> claimed = claim(wanted, false);
			if (claimed.isEmpty()) {
				return null;
			}
			if (!this.running || this.aborting) {
				// Stopped while claiming: the jobs go back rather than start during shutdown.
				this.leased.returnUnstarted(claimed);
				return null;
			}
			if (claimed.size() > 1) {
				this.leased.holdAhead(claimed.subList(1, claimed.size()));
				if (!this.running) {
					// Stopped meanwhile, perhaps after the FIFO was emptied back to the queue.
					this.leased.returnAhead();
				}
				// The poll thread hands them to free workers.
				signalSlotFreed();
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

	private Held takeClaimedAhead() {
		Held next = this.leased.nextAhead();
		if (next != null && this.leased.aheadCount() <= this.aheadEstimate.target() / 2) {
			signalSlotFreed();
		}
		return next;
	}

	private void runLeased(Held held) {
		if (!this.leased.start(held)) {
			return;
		}
		this.aheadEstimate.jobStarted();
		Outcome outcome = null;
		try {
			outcome = this.runner.run(held.job().job(), this.settings);
		}
		finally {
			this.leased.ended(held, outcome, this.completer);
			Thread.interrupted();
		}
	}

	private void extendLeasesIfDue() {
		if (this.settings.mode() != QueueMode.LEASED || System.nanoTime() < this.nextLeaseExtension) {
			return;
		}
		this.nextLeaseExtension = System.nanoTime() + leaseExtensionPeriod();
		try {
			this.leased.extendLeases();
		}
		catch (DataAccessException ex) {
			logger.warn("Queue '{}': could not extend the leases of {} running jobs; retrying: {}",
					this.settings.name(), this.leased.heldCount(), ex.toString());
			this.nextLeaseExtension = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
		}
	}

	/**
	 * Waits until the next poll is due or the poller is woken, extending leases on time meanwhile: a
	 * poll interval (or an error backoff) may be longer than a third of the lease.
	 */
	private void awaitNextPoll(Duration duration) throws InterruptedException {
		long deadline = System.nanoTime() + duration.toNanos();
		while (this.running) {
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0) {
				return;
			}
			if (this.settings.mode() == QueueMode.LEASED) {
				remaining = Math.min(remaining, Math.max(0, this.nextLeaseExtension - System.nanoTime()));
			}
			if (await(Duration.ofNanos(remaining))) {
				return;
			}
			extendLeasesIfDue();
		}
	}

	private long leaseExtensionPeriod() {
		return this.settings.leaseDuration().toNanos() / 3;
	}

	// ---- shutdown

	private void drain(Thread poller) {
		Duration timeout = this.lifecycle.shutdownTimeout();
		long deadline = System.nanoTime() + timeout.toNanos();
		try {
			poller.join(Math.max(1, timeout.toMillis()));
			this.leased.returnAhead();
			int concurrency = this.settings.concurrency();
			if (awaitRunningJobs(poller, deadline)) {
				logger.info("Queue '{}' stopped; every running job finished", this.settings.name());
				return;
			}
			abortRunningJobs();
			if (this.slots.tryAcquire(concurrency, 5, TimeUnit.SECONDS)) {
				this.slots.release(concurrency);
			}
			else {
				logger.warn("Queue '{}': {} handlers ignored interruption and are still running; their jobs are back "
						+ "in the queue and their late outcomes will be discarded", this.settings.name(), busySlots());
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			abortRunningJobs();
		}
	}

	/**
	 * Waits until every worker slot is free or the deadline passes. The poll thread has ended, so in
	 * leased mode the leases of jobs still running are extended here: without that they would expire
	 * during a shutdown timeout longer than the lease, and another instance would run them again.
	 */
	private boolean awaitRunningJobs(Thread poller, long deadline) throws InterruptedException {
		int concurrency = this.settings.concurrency();
		while (true) {
			long remaining = deadline - System.nanoTime();
			boolean extend = this.settings.mode() == QueueMode.LEASED && !poller.isAlive();
			long wait = extend ? Math.min(remaining, this.nextLeaseExtension - System.nanoTime()) : remaining;
			if (this.slots.tryAcquire(concurrency, Math.max(0, wait), TimeUnit.NANOSECONDS)) {
				this.slots.release(concurrency);
				return true;
			}
			if (deadline - System.nanoTime() <= 0) {
				return false;
			}
			if (extend) {
				extendLeasesIfDue();
			}
		}
	}

	private void abortRunningJobs() {
		this.aborting = true;
		if (this.settings.mode() == QueueMode.LEASED) {
			List<Held> unfinished = this.leased.abandonUnfinished();
			try {
				int released = this.leased.release(unfinished);
				logger.warn("Queue '{}': shutdown timeout ({}) passed; returned {} unfinished jobs to the queue "
						+ "without using an attempt", this.settings.name(), this.lifecycle.shutdownTimeout(), released);
				unfinished.forEach((job) -> this.metrics.jobFinished(this.settings.name(), job.job().job().kind(),
						JobOutcome.RELEASED, 0));
			}
			catch (DataAccessException ex) {
				logger.warn("Queue '{}': could not return {} unfinished jobs at shutdown; they run again once their "
						+ "leases expire: {}", this.settings.name(), unfinished.size(), ex.toString());
			}
		}
		else {
			logger.warn("Queue '{}': shutdown timeout ({}) passed; interrupting {} batches, whose unfinished jobs go "
					+ "back to the queue without using an attempt", this.settings.name(),
					this.lifecycle.shutdownTimeout(), this.batchThreads.size());
			this.batchThreads.keySet().forEach(Thread::interrupt);
		}
	}

	// ---- waiting

	/**
	 * Waits for the duration, a wake-up request or stop; finishing jobs do not end the wait. Returns
	 * whether a wake-up was requested.
	 */
	private boolean await(Duration duration) throws InterruptedException {
		long nanos = duration.toNanos();
		this.lock.lock();
		try {
			while (nanos > 0 && this.running && !this.wakeRequested) {
				nanos = this.signal.awaitNanos(nanos);
			}
			boolean woken = this.wakeRequested;
			this.wakeRequested = false;
			return woken;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Waits for the duration, a freed slot or stop. */
	private void awaitSlot(Duration duration) throws InterruptedException {
		long nanos = duration.toNanos();
		this.lock.lock();
		try {
			while (nanos > 0 && this.running && !this.slotFreed) {
				nanos = this.signal.awaitNanos(nanos);
			}
			this.slotFreed = false;
		}
		finally {
			this.lock.unlock();
		}
	}

	private static Duration jittered(Duration interval) {
		long millis = interval.toMillis();
		long spread = millis / 10;
		return Duration.ofMillis(Math.max(1, millis + ((spread > 0) ? ThreadLocalRandom.current().nextLong(-spread, spread + 1) : 0)));
	}

	private static Duration errorBackoff(int failures) {
		long millis = Math.min(MAX_ERROR_BACKOFF.toMillis(), 250L << Math.min(failures - 1, 10));
		return jittered(Duration.ofMillis(millis));
	}

	private Executor newWorkers() {
		String prefix = "pgqueue-" + this.settings.name() + "-";
		if (this.lifecycle.virtualThreads()) {
			SimpleAsyncTaskExecutor executor = new SimpleAsyncTaskExecutor(prefix);
			executor.setVirtualThreads(true);
			// Slots bound what is handed over, so a virtual thread per task never exceeds the concurrency.
			return executor;
		}
		// Slots bound what is handed over, so the pool never queues more than it can run.
		return Executors.newFixedThreadPool(this.settings.concurrency(), new CustomizableThreadFactory(prefix));
	}

}
