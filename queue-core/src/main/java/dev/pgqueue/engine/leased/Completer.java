package dev.pgqueue.engine.leased;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.run.Attempt;
import dev.pgqueue.engine.run.Outcome;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.service.EngineThreads;
import dev.pgqueue.engine.service.FailureCause;
import dev.pgqueue.engine.service.FailureStreak;
import dev.pgqueue.engine.service.ServiceHealth;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.JobRepository;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;

/**
 * Records the outcomes of leased jobs in batches: every completion waiting when the completer
 * looks is written with one guarded statement, so that a busy queue pays one round trip per flush,
 * not per job, and an idle one adds no delay (a flush starts as soon as an outcome arrives).
 * Failures, which are rare, are written one by one.
 */
final class Completer implements EngineService {

	private static final Logger logger = LoggerFactory.getLogger(Completer.class);

	private static final int MAX_FLUSH = 1_000;

	private static final int ATTEMPTS = 3;

	private final JobRepository repository;

	private final boolean deleteCompleted;

	/** Entries of attempt history each job keeps. */
	private final int attemptHistory;

	private final String queue;

	private final Consumer<Finished> onRecorded;

	private final Consumer<Attempt> onWritten;

	private final LinkedBlockingQueue<Finished> pending = new LinkedBlockingQueue<>();

	private final EngineThreads threads;

	private @Nullable Thread thread;

	private volatile boolean running;

	private final ServiceHealth health;

	/**
	 * @param onRecorded called for each outcome once written (or given up on)
	 */
	public Completer(JobRepository repository, WorkerSettings workers, String queue, Consumer<Finished> onRecorded) {
		this(repository, workers, queue, onRecorded, (attempt) -> {
		});
	}

	/**
	 * @param onRecorded called for each outcome once written (or given up on)
	 * @param onWritten called for each attempt whose outcome was written, after {@code onRecorded}
	 */
	public Completer(JobRepository repository, WorkerSettings workers, String queue, Consumer<Finished> onRecorded,
			Consumer<Attempt> onWritten) {
		this.onWritten = onWritten;
		this.repository = repository;
		this.deleteCompleted = workers.deleteCompleted();
		this.attemptHistory = workers.attemptHistory();
		this.queue = queue;
		this.onRecorded = onRecorded;
		this.threads = workers.threads();
		this.health = new ServiceHealth(queue + " completer");
	}

	@Override
	public ServiceHealth health() {
		return this.health;
	}

	@Override
	public String name() {
		return this.queue + " completer";
	}

	/** Starts the thread that writes outcomes. */
	@Override
	public synchronized void start() {
		this.running = true;
		this.thread = this.threads.newThread(this.queue, "completer", this::run);
		this.thread.start();
	}

	@Override
	public synchronized boolean isRunning() {
		return this.thread != null;
	}

	/** Queues the outcome of an attempt to be written, with the output to store if the job completed. */
	public void submit(ClaimedJob job, Attempt attempt) {
		this.pending.add(new Finished(job, attempt));
	}

	/** Writes everything submitted so far, then stops. */
	@Override
	public synchronized void stop() {
		if (this.thread == null) {
			return;
		}
		this.running = false;
		this.thread.interrupt();
		try {
			this.thread.join(TimeUnit.SECONDS.toMillis(30));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.thread = null;
	}

	private void run() {
		List<Finished> batch = new ArrayList<>();
		try {
			while (this.running || !this.pending.isEmpty()) {
				try {
					Finished first = this.running ? this.pending.poll(1, TimeUnit.SECONDS) : this.pending.poll();
					if (first == null) {
						continue;
					}
					batch.add(first);
					this.pending.drainTo(batch, MAX_FLUSH - 1);
					flush(batch);
				}
				catch (InterruptedException ex) {
					// stop() interrupts to end the wait; the loop writes what is left.
				}
				catch (Throwable ex) {
					// What flush could not record is released by it; what it had not reached yet, here.
					this.health.failed(ex, "its jobs whose outcome was not written run again once their leases "
							+ "expire; it goes on with the next outcomes");
					batch.forEach(this::released);
				}
				finally {
					batch.clear();
				}
			}
		}
		catch (Throwable ex) {
			this.health.stopped(ex);
		}
	}

	private void flush(List<Finished> batch) {
		List<Long> ids = new ArrayList<>();
		List<Integer> attempts = new ArrayList<>();
		List<@Nullable String> outputs = new ArrayList<>();
		List<Finished> failures = new ArrayList<>();
		for (Finished finished : batch) {
			if (finished.outcome().succeeded()) {
				ids.add(finished.job().id());
				attempts.add(finished.job().attempt());
				outputs.add(finished.output());
			}
			else {
				failures.add(finished);
			}
		}
		Set<Long> recorded = new HashSet<>();
		if (!ids.isEmpty()) {
			List<Long> completed = withRetries(() -> this.repository.completeLeasedMany(ids, attempts, outputs,
					this.deleteCompleted), batch.size() + " completions");
			if (completed != null) {
				recorded.addAll(completed);
			}
		}
		for (Finished failure : failures) {
			Boolean written = withRetries(() -> this.repository.recordLeasedFailure(failure.job().id(),
					failure.job().attempt(), failure.outcome().end(failure.job().job()), this.attemptHistory),
					"a failure");
			if (Boolean.TRUE.equals(written)) {
				recorded.add(failure.job().id());
			}
		}
		for (Finished finished : batch) {
			if (!recorded.contains(finished.job().id())) {
				logger.warn("Job {} of kind '{}' in queue '{}' finished attempt {} after its lease was lost (expired "
						+ "and rescued, released at shutdown, or the database was unreachable); its outcome ({}) was "
						+ "not recorded", finished.job().job().id(), finished.job().job().kind(), this.queue,
						finished.job().attempt(), finished.outcome().kind().name().toLowerCase(java.util.Locale.ROOT));
			}
			released(finished);
			if (recorded.contains(finished.job().id())) {
				try {
					this.onWritten.accept(finished.attempt());
				}
				catch (Throwable ex) {
					this.health.failed(ex, "the outcome of job " + finished.job().job().id() + " is written; the next "
							+ "are handled");
				}
			}
		}
	}

	/**
	 * Hands the outcome back (its lease no longer kept, its worker's slot free), once: after a failure
	 * the lease keeper must not keep extending the lease of a job whose outcome was not written, or it
	 * would stay running until a restart.
	 */
	private void released(Finished finished) {
		if (!finished.release()) {
			return;
		}
		try {
			this.onRecorded.accept(finished);
		}
		catch (Throwable ex) {
			this.health.failed(ex, "job " + finished.job().job().id() + " was handed back");
		}
	}

	private <T> @Nullable T withRetries(Supplier<T> write, String what) {
		for (int attempt = 1;; attempt++) {
			try {
				return write.get();
			}
			catch (RuntimeException | Error ex) {
				if (!(ex instanceof DataAccessException)) {
					// Not the database away: trying again would fail the same way.
					this.health.failed(ex, "could not record " + what + "; those jobs run again once their leases "
							+ "expire");
					return null;
				}
				if (attempt >= ATTEMPTS) {
					logger.error("Queue '{}': could not record {} after {} tries; those jobs run again once their "
							+ "leases expire: {}", this.queue, what, attempt, ex.toString());
					return null;
				}
				try {
					// A lost connection is tried again at once, on a fresh one.
					Thread.sleep(FailureStreak.basePause(FailureCause.of(ex), attempt).toMillis());
				}
				catch (InterruptedException interrupted) {
					if (this.running) {
						Thread.currentThread().interrupt();
						return null;
					}
				}
			}
		}
	}

	/** A leased job whose handler has returned, and what became of it. */
	public record Finished(ClaimedJob job, Attempt attempt, AtomicBoolean handedBack) {

		public Finished(ClaimedJob job, Attempt attempt) {
			this(job, attempt, new AtomicBoolean());
		}

		/** Whether this call is the first to hand the outcome back. */
		boolean release() {
			return this.handedBack.compareAndSet(false, true);
		}

		public Outcome outcome() {
			return this.attempt.outcome();
		}

		public @Nullable String output() {
			return this.attempt.output();
		}

	}

}
