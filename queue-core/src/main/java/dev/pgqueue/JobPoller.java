package dev.pgqueue;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
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

import dev.pgqueue.engine.ClaimedJob;
import dev.pgqueue.engine.Completer;
import dev.pgqueue.engine.JobRepository;
import dev.pgqueue.engine.JobRunner;
import dev.pgqueue.engine.Outcome;
import dev.pgqueue.engine.TransactionalBatchRunner;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.metrics.QueueMetrics.JobOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.SmartLifecycle;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Claims the jobs of one queue with {@code FOR UPDATE SKIP LOCKED} and runs them on the queue's
 * workers.
 *
 * <p>One thread polls: it never claims more than the free worker slots allow, polls again at once
 * while claims come back full, and otherwise waits a jittered poll interval (so that instances
 * started together do not poll in lock-step). In {@link QueueMode#TRANSACTIONAL transactional}
 * mode a slot runs a whole batch in one transaction with a savepoint per job; in
 * {@link QueueMode#LEASED leased} mode a slot runs one job whose claim was committed with a lease.
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

	private final QueueSettings settings;

	private final String[] kinds;

	private final JobRepository repository;

	private final JobRunner runner;

	private final TransactionalBatchRunner batchRunner;

	private final QueueMetrics metrics;

	private final WorkerSettings lifecycle;

	private final String owner;

	private final Semaphore slots;

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition signal = this.lock.newCondition();

	private final Map<Long, RunningJob> runningJobs = new ConcurrentHashMap<>();

	private final Map<Thread, Boolean> batchThreads = new ConcurrentHashMap<>();

	private volatile boolean running;

	private volatile boolean aborting;

	private boolean wakeRequested;

	private boolean slotFreed;

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
					(finished) -> this.runningJobs.remove(finished.job().id()), this.lifecycle::newThread);
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
	 * Waits until a worker slot is free, extending leases meanwhile. A claim is made as soon as one
	 * slot is free: waiting for several would leave freed workers idle, and claims batch up by
	 * themselves under load, since slots that free up while one claim runs are all filled by the next.
	 */
	private boolean awaitFreeSlots() throws InterruptedException {
		while (this.running) {
			extendLeasesIfDue();
			if (this.slots.availablePermits() > 0) {
				return true;
			}
			awaitSlot(Duration.ofMillis(Math.min(this.settings.pollInterval().toMillis(), 50)));
		}
		return false;
	}

	private boolean claimLeased() {
		int wanted = Math.min(this.settings.batchSize(), this.slots.availablePermits());
		long start = System.nanoTime();
		List<ClaimedJob> jobs = this.repository.claimLeased(this.settings.name(), this.kinds, wanted, this.owner,
				this.settings.leaseDuration());
		this.metrics.pollCycle(this.settings.name(), System.nanoTime() - start, jobs.size());
		for (ClaimedJob job : jobs) {
			this.slots.acquireUninterruptibly();
			RunningJob runningJob = new RunningJob(job);
			this.runningJobs.put(job.id(), runningJob);
			try {
				this.workers.execute(() -> runLeased(runningJob));
			}
			catch (RuntimeException ex) {
				this.runningJobs.remove(job.id());
				this.slots.release();
				this.repository.releaseLeased(this.owner, List.of(job.id()));
				throw ex;
			}
		}
		return jobs.size() == wanted;
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

	private void runLeased(RunningJob runningJob) {
		runningJob.thread = Thread.currentThread();
		ClaimedJob job = runningJob.job;
		boolean submitted = false;
		try {
			Outcome outcome = this.runner.run(job.job(), this.settings);
			synchronized (runningJob) {
				if (!runningJob.released) {
					// Until the completer has written the outcome, the job stays ours and its lease extended.
					runningJob.handlerDone = true;
					this.completer.submit(job, outcome);
					submitted = true;
				}
			}
		}
		finally {
			runningJob.thread = null;
			if (!submitted) {
				this.runningJobs.remove(job.id());
			}
			Thread.interrupted();
			releaseSlot();
		}
	}

	private void extendLeasesIfDue() {
		if (this.settings.mode() != QueueMode.LEASED || System.nanoTime() < this.nextLeaseExtension) {
			return;
		}
		this.nextLeaseExtension = System.nanoTime() + leaseExtensionPeriod();
		List<Long> ids = new ArrayList<>(this.runningJobs.keySet());
		if (!ids.isEmpty()) {
			try {
				this.repository.extendLeases(this.owner, ids, this.settings.leaseDuration());
			}
			catch (DataAccessException ex) {
				logger.warn("Queue '{}': could not extend the leases of {} running jobs; retrying: {}",
						this.settings.name(), ids.size(), ex.toString());
				this.nextLeaseExtension = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
			}
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
			List<RunningJob> unfinished = new ArrayList<>();
			for (RunningJob job : this.runningJobs.values()) {
				synchronized (job) {
					if (!job.handlerDone) {
						job.released = true;
						unfinished.add(job);
					}
				}
			}
			// Interrupt first: a handler that stops now has the least time to finish work whose outcome
			// is already decided (the job goes back and runs again).
			unfinished.forEach((job) -> {
				Thread thread = job.thread;
				if (thread != null) {
					thread.interrupt();
				}
			});
			List<Long> ids = unfinished.stream().map((job) -> job.job.id()).toList();
			try {
				int released = this.repository.releaseLeased(this.owner, ids);
				logger.warn("Queue '{}': shutdown timeout ({}) passed; returned {} unfinished jobs to the queue "
						+ "without using an attempt", this.settings.name(), this.lifecycle.shutdownTimeout(), released);
				unfinished.forEach((job) -> this.metrics.jobFinished(this.settings.name(), job.job.job().kind(),
						JobOutcome.RELEASED, 0));
			}
			catch (DataAccessException ex) {
				logger.warn("Queue '{}': could not return {} unfinished jobs at shutdown; they run again once their "
						+ "leases expire: {}", this.settings.name(), ids.size(), ex.toString());
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

	private static final class RunningJob {

		private final ClaimedJob job;

		private volatile Thread thread;

		private volatile boolean released;

		private volatile boolean handlerDone;

		RunningJob(ClaimedJob job) {
			this.job = job;
		}

	}

}
