package dev.pgqueue.engine.run;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.pgqueue.Job;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.service.EngineThreads;
import dev.pgqueue.engine.settings.QueueSettings;
import org.jspecify.annotations.Nullable;

/**
 * Time limits of jobs: which limit applies to an attempt, and the watchdog that acts on the attempts
 * that run past theirs.
 *
 * <p>One per {@link JobRunner}, so one per application, with one watchdog thread for every queue:
 * a daemon thread started by the first watched attempt and ended after a minute without any. An
 * attempt with a limit costs one scheduled task, cancelled (and removed) when it finishes in time;
 * an attempt without one costs two map lookups. What happens at the limit depends on the mode and
 * is decided by the caller of {@link JobRunner#runUnrecorded(ClaimedJob, QueueSettings, OnTimeout)}.
 */
final class JobTimeouts {

	/** How long the idle watchdog thread lives on. */
	private static final long WATCHDOG_KEEP_ALIVE_SECONDS = 60;

	private final JobHandlerRegistry handlers;

	private final ScheduledThreadPoolExecutor watchdog;

	public JobTimeouts(JobHandlerRegistry handlers) {
		this.handlers = handlers;
		this.watchdog = EngineThreads.newScheduler(null, "timeouts", WATCHDOG_KEEP_ALIVE_SECONDS);
	}

	/**
	 * The time limit of one attempt of the job, or {@code null} for none: the kind's
	 * ({@code pgqueue.kinds.<kind>.timeout}, else {@code @JobListener(timeout)}), else the queue's.
	 */
	public @Nullable TimeLimit limitOf(Job job, QueueSettings settings) {
		Duration ofKind = this.handlers.timeoutOf(job.kind());
		if (ofKind != null) {
			Source source = this.handlers.timeoutOverridden(job.kind()) ? Source.KIND : Source.LISTENER;
			return new TimeLimit(ofKind, source, job.kind(), settings.name(), this.handlers.find(job.kind()));
		}
		Duration ofQueue = settings.timeout();
		return (ofQueue != null) ? new TimeLimit(ofQueue, Source.QUEUE, job.kind(), settings.name(), null) : null;
	}

	/**
	 * Starts watching an attempt that runs from now on: once {@code limit} has passed, unless
	 * {@link Watch#finish()} came first, the watchdog thread calls {@code onTimeout}, whose result is
	 * what became of the attempt.
	 */
	Watch watch(TimeLimit limit, Supplier<Attempt> onTimeout) {
		Watch watch = new Watch(onTimeout);
		watch.scheduled = this.watchdog.schedule(watch, limit.duration().toNanos(), TimeUnit.NANOSECONDS);
		return watch;
	}

	/** A watch of an attempt without a time limit, which only a cancel can stop. */
	static Watch unlimited() {
		return new Watch(null);
	}

	/** Which setting gave a job its time limit. */
	public enum Source {

		/** {@code pgqueue.queues.<name>.timeout}. */
		QUEUE,

		/** {@code @JobListener(timeout = ...)}. */
		LISTENER,

		/** {@code pgqueue.kinds.<kind>.timeout}. */
		KIND

	}

	/**
	 * The time limit of one attempt and where it comes from.
	 * @param duration how long the attempt may run
	 * @param source which setting gave it
	 * @param kind the job's kind
	 * @param queue the job's queue
	 * @param handler the kind's handler, for a limit set by its listener; otherwise may be null
	 */
	public record TimeLimit(Duration duration, Source source, String kind, String queue, @Nullable JobHandler handler) {

		/** The setting that gave the limit, as a user would find it. */
		public String setting() {
			return switch (this.source) {
				case QUEUE -> "pgqueue.queues." + this.queue + ".timeout";
				case KIND -> "pgqueue.kinds." + this.kind + ".timeout";
				case LISTENER -> "@JobListener(timeout) on "
						+ ((this.handler != null) ? this.handler.description() : "the listener of kind '" + this.kind + "'");
			};
		}

		/** How to give the kind more time. */
		public String howToRaise() {
			return switch (this.source) {
				case QUEUE -> "raise " + setting() + ", or give the kind a limit of its own (pgqueue.kinds." + this.kind
						+ ".timeout)";
				case KIND -> "raise " + setting();
				case LISTENER -> "raise the timeout of the @JobListener on "
						+ ((this.handler != null) ? this.handler.description() : "the kind's listener")
						+ ", or override it with pgqueue.kinds." + this.kind + ".timeout";
			};
		}

	}

	/**
	 * One watched attempt. What stops it (the watchdog at its time limit, a cancel) and
	 * {@link #finish()} exclude each other, so an attempt either finished, or timed out, or was
	 * cancelled, never two of these, and whoever finishes the attempt sees everything the action did.
	 */
	static final class Watch implements Runnable {

		private final @Nullable Supplier<Attempt> onTimeout;

		private volatile @Nullable ScheduledFuture<?> scheduled;

		private boolean finished;

		private @Nullable Attempt timedOut;

		Watch(@Nullable Supplier<Attempt> onTimeout) {
			this.onTimeout = onTimeout;
		}

		@Override
		public void run() {
			if (this.onTimeout != null) {
				stop(this.onTimeout);
			}
		}

		/**
		 * Stops the attempt with {@code action}, whose result is what became of it, unless it finished
		 * or was stopped before.
		 * @return whether this stopped it
		 */
		synchronized boolean stop(Supplier<Attempt> action) {
			if (this.finished) {
				return false;
			}
			this.finished = true;
			this.timedOut = action.get();
			ScheduledFuture<?> task = this.scheduled;
			if (task != null) {
				task.cancel(false);
			}
			return true;
		}

		/**
		 * Ends the watch as the attempt finishes; waits for the watchdog's action if it is running.
		 * @return the timed-out (or cancelled) attempt, or {@code null} when the attempt finished first
		 */
		synchronized @Nullable Attempt finish() {
			if (!this.finished) {
				this.finished = true;
				ScheduledFuture<?> task = this.scheduled;
				if (task != null) {
					task.cancel(false);
				}
			}
			return this.timedOut;
		}

	}

}
