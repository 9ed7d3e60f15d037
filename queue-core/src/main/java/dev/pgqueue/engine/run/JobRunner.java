package dev.pgqueue.engine.run;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import dev.pgqueue.Job;
import dev.pgqueue.ExternalEffect;
import dev.pgqueue.JobContext;
import dev.pgqueue.JobEvent;
import dev.pgqueue.JobInterceptor;
import dev.pgqueue.JobOutcome;
import dev.pgqueue.JobSnoozedException;
import dev.pgqueue.JobTimeoutException;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.control.RunningJobs;
import dev.pgqueue.engine.control.RunningJobs.Running;
import dev.pgqueue.engine.run.JobTimeouts.TimeLimit;
import dev.pgqueue.engine.run.JobTimeouts.Watch;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.observation.JobLogContext;
import dev.pgqueue.observation.JobProcessingContext;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.job.JobEvents;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.job.JobHandler.Returned;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one attempt of a job through its handler and decides what becomes of it: completed,
 * retried after a backoff, or failed for good. Catches every {@link Throwable} a handler throws, so
 * that a broken job can never stop a poller. Logs job ids and kinds, never payloads.
 *
 * <p>An attempt whose kind or queue has a time limit runs under the watch of {@link JobTimeouts}:
 * past the limit it becomes a failed attempt ({@link JobTimeoutException}), retried by the retry
 * policy like any failure, whatever its handler does afterwards.
 *
 * <p>Each attempt is observed ({@link QueueObservations}), continuing the trace its enqueue stored,
 * and its handler runs in the observation's scope, with the job in the MDC ({@link JobLogContext}).
 */
public class JobRunner {

	/** Longest last error stored, in characters. */

	private static final Logger logger = LoggerFactory.getLogger(JobRunner.class);

	private final JobHandlerRegistry handlers;

	private final QueueMetrics metrics;

	private final JobTimeouts timeouts;

	private final QueueObservations observations;

	/** How many times a job may snooze ({@code pgqueue.max-snoozes}). */
	private final int maxSnoozes;

	/** Largest output kept, in bytes of UTF-8 JSON ({@code pgqueue.max-output-size}). */
	private final long maxOutputBytes;

	/** What runs around each attempt, outermost first. */
	private final List<JobInterceptor> interceptors;

	/** Where attempts' starts and outcomes are published. */
	private final JobEvents events;

	/** The attempts running now, which cancel requests stop. */
	private final RunningJobs running;

	/** Counts waits, run times and outcomes per queue and minute, for the queues' history. */
	private final QueueHistoryRecorder history;

	/** The shard whose jobs this runner runs, which each {@link Job} tells; {@code null} without shards. */
	private final @Nullable String shard;

	public JobRunner(JobHandlerRegistry handlers, QueueMetrics metrics) {
		this(handlers, metrics, QueueObservations.NONE);
	}

	public JobRunner(JobHandlerRegistry handlers, QueueMetrics metrics, QueueObservations observations) {
		this(handlers, metrics, observations, WorkerSettings.DEFAULT);
	}

	public JobRunner(JobHandlerRegistry handlers, QueueMetrics metrics, QueueObservations observations,
			WorkerSettings workers) {
		this(handlers, metrics, observations, workers, List.of(), JobEvents.NONE);
	}

	/**
	 * @param interceptors what runs around each attempt, outermost first
	 * @param events where attempts' starts and outcomes are published
	 */
	public JobRunner(JobHandlerRegistry handlers, QueueMetrics metrics, QueueObservations observations,
			WorkerSettings workers, List<JobInterceptor> interceptors, JobEvents events) {
		this(handlers, metrics, observations, workers, interceptors, events, new RunningJobs());
	}

	/**
	 * @param running the attempts running in this application, which cancel requests stop
	 */
	public JobRunner(JobHandlerRegistry handlers, QueueMetrics metrics, QueueObservations observations,
			WorkerSettings workers, List<JobInterceptor> interceptors, JobEvents events, RunningJobs running) {
		this(handlers, metrics, observations, workers, interceptors, events, running, QueueHistoryRecorder.OFF);
	}

	/**
	 * @param history counts each attempt's wait, run time and outcome for the queues' history
	 */
	public JobRunner(JobHandlerRegistry handlers, QueueMetrics metrics, QueueObservations observations,
			WorkerSettings workers, List<JobInterceptor> interceptors, JobEvents events, RunningJobs running,
			QueueHistoryRecorder history) {
		this(handlers, metrics, new JobTimeouts(handlers), observations, workers.maxSnoozes(), workers.maxOutputBytes(),
				List.copyOf(interceptors), events, running, history);
	}

	JobRunner(JobHandlerRegistry handlers, QueueMetrics metrics, JobTimeouts timeouts, QueueObservations observations,
			int maxSnoozes, long maxOutputBytes, List<JobInterceptor> interceptors, JobEvents events,
			RunningJobs running, QueueHistoryRecorder history) {
		this(handlers, metrics, timeouts, observations, maxSnoozes, maxOutputBytes, interceptors, events, running,
				history, null);
	}

	private JobRunner(JobHandlerRegistry handlers, QueueMetrics metrics, JobTimeouts timeouts,
			QueueObservations observations, int maxSnoozes, long maxOutputBytes, List<JobInterceptor> interceptors,
			JobEvents events, RunningJobs running, QueueHistoryRecorder history, @Nullable String shard) {
		this.shard = shard;
		this.history = history;
		this.handlers = handlers;
		this.metrics = metrics;
		this.timeouts = timeouts;
		this.observations = observations;
		this.maxSnoozes = maxSnoozes;
		this.maxOutputBytes = maxOutputBytes;
		this.interceptors = interceptors;
		this.events = events;
		this.running = running;
	}

	/**
	 * A runner like this one (same handlers, metrics, observations and time limits) whose
	 * {@link #recordUnpublished} (and so {@link #record}) also hands each attempt to {@code recorded},
	 * once the attempt's outcome stands:
	 * for a caller that reports which jobs it ran and what became of them.
	 */
	public JobRunner alsoRecordingTo(Consumer<Attempt> recorded) {
		return new JobRunner(this.handlers, this.metrics, this.timeouts, this.observations, this.maxSnoozes,
				this.maxOutputBytes, this.interceptors, this.events, this.running, this.history, this.shard) {

			@Override
			public void recordUnpublished(Attempt attempt) {
				super.recordUnpublished(attempt);
				recorded.accept(attempt);
			}

		};
	}

	/** A runner like this one for the jobs of one shard, each of which tells it ({@link Job#shard()}). */
	public JobRunner onShard(String shard) {
		return new JobRunner(this.handlers, this.metrics, this.timeouts, this.observations, this.maxSnoozes,
				this.maxOutputBytes, this.interceptors, this.events, this.running, this.history, shard);
	}

	/** The handlers this runner runs jobs through. */
	public JobHandlerRegistry handlers() {
		return this.handlers;
	}

	/**
	 * Runs the job and returns its outcome without recording it: for a caller whose transaction
	 * decides later whether the outcome stands. Pass the attempt that stands to {@link #record}.
	 * An attempt that runs past its time limit has its thread interrupted. Never throws.
	 */
	public Attempt runUnrecorded(ClaimedJob job, QueueSettings settings) {
		return runUnrecorded(job, settings, OnTimeout.INTERRUPT);
	}

	/**
	 * Runs the job on the current thread, under its time limit if it has one, and returns its outcome
	 * without recording it. When the limit passes before the handler returns, the watchdog thread
	 * makes the attempt a failed one and hands it to {@code onTimeout}, which stops the handler or
	 * stops waiting for it; that timed-out attempt is what this returns once the handler has
	 * returned, with the thread's interrupt cleared. Never throws.
	 */
	@SuppressWarnings("try") // the scope is what makes the handler's spans and logs part of the job's trace
	public Attempt runUnrecorded(ClaimedJob claimedHere, QueueSettings settings, OnTimeout onTimeout) {
		ClaimedJob claimed = (this.shard != null) ? claimedHere.onShard(this.shard) : claimedHere;
		Job job = claimed.job();
		Observation observation = this.observations
			.startProcessing(() -> new JobProcessingContext(job, settings.mode(), claimed.traceContext()));
		Attempt attempt = null;
		this.history.waited(job.queue(), job.runAt(), claimed.claimedAt());
		JobLogContext.put(job);
		try (Observation.Scope scope = observation.openScope()) {
			this.events.publish(() -> new JobEvent.Started(job.id(), job.kind(), job.queue(), job.attempt()));
			attempt = runWatched(claimed, settings, onTimeout);
		}
		finally {
			JobLogContext.clear();
			Outcome outcome = (attempt != null) ? attempt.outcome() : null;
			this.observations.stopProcessing(observation, (outcome != null) ? outcome.kind() : JobOutcome.FAILED,
					(outcome != null) ? outcome.cause() : null);
		}
		return attempt;
	}

	private Attempt runWatched(ClaimedJob claimed, QueueSettings settings, OnTimeout onTimeout) {
		Job job = claimed.job();
		long start = System.nanoTime();
		TimeLimit limit = this.timeouts.limitOf(job, settings);
		Returned[] returned = { Returned.NOTHING };
		Thread thread = Thread.currentThread();
		Watch watch = (limit != null)
				? this.timeouts.watch(limit, () -> timedOut(job, settings, limit, thread, start, onTimeout))
				: JobTimeouts.unlimited();
		Running running = this.running.start(claimed, (by, won) -> watch.stop(() -> {
			won.run();
			return cancelled(job, settings, by, thread, start, onTimeout);
		}));
		Outcome outcome;
		Attempt stopped;
		try {
			outcome = attempt(claimed, running, settings, returned);
		}
		finally {
			stopped = watch.finish();
			this.running.end(running);
		}
		if (stopped != null) {
			// The interrupt was meant for the handler; it must not break what the caller does next.
			Thread.interrupted();
			return stopped;
		}
		return new Attempt(job, outcome, System.nanoTime() - start, false, returned[0]);
	}

	/**
	 * Runs on the thread that delivered a cancel request for an attempt still running: the cancelled
	 * attempt, handed to the mode's action, which stops the handler as at a time limit.
	 */
	private static Attempt cancelled(Job job, QueueSettings settings, String by, Thread thread, long start,
			OnTimeout onTimeout) {
		String effect = (settings.mode() == QueueMode.TRANSACTIONAL)
				? "its running statement was cancelled, its thread interrupted, and its database work rolled back"
				: "its thread was interrupted and its worker moved on (work it did outside a transaction stays done)";
		Attempt attempt = new Attempt(job, Outcome.cancel("Job " + job.id() + " of kind '" + job.kind() + "' in queue '"
				+ job.queue() + "' was cancelled by " + by + " while attempt " + job.attempt() + " ran; " + effect
				+ ". It is not retried."), System.nanoTime() - start, false);
		try {
			onTimeout.timedOut(attempt, thread);
		}
		catch (RuntimeException ex) {
			logger.warn("Job {} of kind '{}' in queue '{}' was cancelled, and stopping it failed: {}", job.id(),
					job.kind(), job.queue(), ex.toString());
		}
		return attempt;
	}

	/**
	 * Counts the attempt in the metrics, logs its failure, if it failed, and publishes its outcome.
	 * Called once the outcome stands and is written.
	 */
	public void record(Attempt attempt) {
		recordUnpublished(attempt);
		published(attempt);
	}

	/**
	 * Counts the attempt in the metrics and logs its failure, if it failed, without publishing its
	 * outcome: for a caller that writes the outcome later ({@link #published} once written).
	 */
	public void recordUnpublished(Attempt attempt) {
		Job job = attempt.job();
		this.metrics.jobFinished(job.queue(), job.kind(), attempt.outcome().kind(), attempt.nanos());
		this.history.ran(job.queue(), attempt.outcome().kind(), attempt.nanos());
		if (attempt.timedOut()) {
			this.metrics.jobTimedOut(job.queue(), job.kind());
		}
		log(job, attempt.outcome());
	}

	/** Publishes the attempt's outcome as a {@link JobEvent}, once it is written. */
	public void published(Attempt attempt) {
		if (attempt.outcome().kind() != JobOutcome.RELEASED) {
			this.events.publish(() -> event(attempt));
		}
	}

	private static JobEvent event(Attempt attempt) {
		Job job = attempt.job();
		Outcome outcome = attempt.outcome();
		return switch (outcome.kind()) {
			case COMPLETED -> new JobEvent.Succeeded(job.id(), job.kind(), job.queue(), job.attempt(),
					Duration.ofNanos(attempt.nanos()));
			case RETRIED -> new JobEvent.Retried(job.id(), job.kind(), job.queue(), job.attempt(), outcome.error(),
					outcome.retryDelay());
			case SNOOZED -> new JobEvent.Snoozed(job.id(), job.kind(), job.queue(), job.attempt(), outcome.retryDelay());
			case CANCELLED -> new JobEvent.Cancelled(job.id(), job.kind(), job.queue());
			case FAILED, RELEASED -> new JobEvent.Failed(job.id(), job.kind(), job.queue(), job.attempt(),
					outcome.error());
		};
	}

	/**
	 * The outcome of a transactional-mode attempt whose handler returned normally but left the
	 * transaction marked rollback-only (a nested {@code @Transactional} method failed and the handler
	 * swallowed the exception): its work was undone, so it counts as a failed attempt.
	 */
	public Attempt rollbackOnly(Attempt returned, QueueSettings settings) {
		return failedAfterReturning(returned, settings,
				"The handler returned, but marked the transaction rollback-only (a nested @Transactional "
						+ "call failed and its exception was caught); its work was rolled back");
	}

	/**
	 * The outcome of a transactional-mode attempt whose handler returned normally after one of its
	 * statements had failed (the handler caught the exception): PostgreSQL aborted the transaction,
	 * so the handler's work was rolled back and the attempt counts as failed.
	 */
	public Attempt transactionAborted(Attempt returned, QueueSettings settings) {
		return failedAfterReturning(returned, settings, "The handler returned, but a statement it ran had failed "
				+ "and aborted the transaction (its exception was caught); its work was rolled back. Let the "
				+ "exception propagate, or run the statement in a nested transaction (PROPAGATION_NESTED) so that its "
				+ "failure undoes only that statement");
	}

	private Attempt failedAfterReturning(Attempt returned, QueueSettings settings, String error) {
		Job job = returned.job();
		Outcome outcome = job.isLastAttempt() ? Outcome.fail(error, null)
				: Outcome.retry(settings.retry().delayAfter(job.attempt()), error, null);
		return new Attempt(job, outcome, returned.nanos());
	}

	/**
	 * The outcome of a two-phase attempt whose handler returned, but whose external effect then
	 * threw: its prepared transaction was rolled back, so the attempt counts as failed, retried or
	 * not as any failure of the handler would be.
	 */
	public Attempt effectFailed(Attempt returned, Throwable thrown, QueueSettings settings) {
		Outcome outcome = Failures.failed(returned.job(), settings, Failures.unwrap(thrown),
				"The external effect failed, so the job's prepared transaction was rolled back: ");
		return new Attempt(returned.job(), outcome, returned.nanos());
	}

	/**
	 * Runs the handler; puts what it returned that stands (an external effect, an output within its
	 * size limit) in {@code returned[0]}.
	 */
	private Outcome attempt(ClaimedJob claimed, JobContext context, QueueSettings settings, Returned[] returned) {
		Job job = claimed.job();
		JobHandler handler = this.handlers.find(job.kind());
		if (handler == null) {
			return Outcome.fail("No @JobListener for kind '" + job.kind() + "' in queue '" + job.queue()
					+ "' of this application; deploy a listener for it and re-enqueue the job", null);
		}
		Returned result;
		try {
			result = this.interceptors.isEmpty() ? handler.handleForResult(job, context)
					: InterceptorChain.run(this.interceptors, handler, job, context);
		}
		catch (Throwable thrown) {
			Throwable failure = Failures.unwrap(thrown);
			if (failure instanceof JobSnoozedException snooze) {
				return snoozed(claimed, snooze);
			}
			return Failures.failed(job, settings, failure);
		}
		if (result.effect() != null && !settings.twoPhaseCommit()) {
			// Run after a plain commit, the step could happen without the job completing, or twice.
			return Outcome.fail(handler.description() + " returned an ExternalEffect, but queue '" + job.queue()
					+ "' does not use two-phase commit, so the job's work was not committed and the effect not run. "
					+ "Set pgqueue.queues." + job.queue() + ".two-phase-commit=true, or run the step in the listener "
					+ "itself", null);
		}
		String output = result.output();
		if (output != null && output.length() * 3L > this.maxOutputBytes) {
			int bytes = output.getBytes(StandardCharsets.UTF_8).length;
			if (bytes > this.maxOutputBytes) {
				return Outcome.fail("Job " + job.id() + " of kind '" + job.kind() + "' in queue '" + job.queue()
						+ "' returned an output of " + bytes + " bytes as JSON, over the " + this.maxOutputBytes
						+ " bytes pgqueue.max-output-size allows, so the job was not completed and its work was "
						+ "undone where the mode can undo it; retrying would return as much again. Return less (a key "
						+ "to data stored elsewhere), or raise pgqueue.max-output-size", null);
			}
		}
		returned[0] = result;
		return Outcome.COMPLETED;
	}

	/** A snooze, or a failure for good when the job has snoozed as often as it may. */
	private Outcome snoozed(ClaimedJob claimed, JobSnoozedException snooze) {
		if (claimed.snoozes() < this.maxSnoozes) {
			return Outcome.snooze(snooze.delay(), snooze.getMessage());
		}
		Job job = claimed.job();
		return Outcome.fail("Job " + job.id() + " of kind '" + job.kind() + "' in queue '" + job.queue() + "' asked to "
				+ "snooze again after " + claimed.snoozes() + " snoozes, the most pgqueue.max-snoozes allows, so it failed "
				+ "for good: " + snooze.getMessage() + ". Retry it once what it waits for is there, make the listener "
				+ "complete or fail the job when waiting no longer makes sense, or raise pgqueue.max-snoozes", snooze);
	}

	/**
	 * Runs on the watchdog thread when an attempt passes its limit: the failed attempt, its error
	 * carrying the handler thread's stack at this moment, handed to the mode's action.
	 */
	private static Attempt timedOut(Job job, QueueSettings settings, TimeLimit limit, Thread thread, long start,
			OnTimeout onTimeout) {
		JobTimeoutException failure = new JobTimeoutException(Failures.timeoutMessage(job, settings.mode(), limit));
		failure.setStackTrace(thread.getStackTrace());
		Attempt attempt = new Attempt(job, Failures.failed(job, settings, failure), System.nanoTime() - start, true);
		try {
			onTimeout.timedOut(attempt, thread);
		}
		catch (RuntimeException ex) {
			logger.warn("Job {} of kind '{}' in queue '{}' ran past its time limit, and stopping it failed: {}",
					job.id(), job.kind(), job.queue(), ex.toString());
		}
		return attempt;
	}

	private static void log(Job job, Outcome outcome) {
		switch (outcome.kind()) {
			case RETRIED -> logger.warn("Job {} of kind '{}' in queue '{}' failed attempt {} of {}; retrying in {}: {}",
					job.id(), job.kind(), job.queue(), job.attempt(), job.maxAttempts(),
					Failures.humanize(outcome.retryDelay()), Failures.summary(outcome));
			case SNOOZED -> logger.info("Job {} of kind '{}' in queue '{}' snoozed on attempt {}; runs again in {}: {}",
					job.id(), job.kind(), job.queue(), job.attempt(), Failures.humanize(outcome.retryDelay()), outcome.error());
			case FAILED -> logger.error("Job {} of kind '{}' in queue '{}' failed for good on attempt {} of {}: {}",
					job.id(), job.kind(), job.queue(), job.attempt(), job.maxAttempts(), Failures.summary(outcome),
					outcome.cause());
			default -> {
				if (logger.isDebugEnabled()) {
					logger.debug("Job {} of kind '{}' in queue '{}' completed on attempt {}", job.id(), job.kind(),
							job.queue(), job.attempt());
				}
			}
		}
	}

}
