package dev.pgqueue.engine.control;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.pgqueue.Job;
import dev.pgqueue.JobContext;
import dev.pgqueue.engine.job.ClaimedJob;
import org.jspecify.annotations.Nullable;

/**
 * The attempts running in this application, by job id: what a cancel request stops, and what holds
 * each listener's latest progress until it is written. One per engine, shared by every queue; an
 * attempt costs one entry while it runs.
 */
public final class RunningJobs {

	/** Least time between two writes of one job's progress. */
	public static final long PROGRESS_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(2);

	/** Longest progress message kept, in characters. */
	static final int MAX_MESSAGE_LENGTH = 200;

	private final ConcurrentHashMap<Long, Running> running = new ConcurrentHashMap<>();

	/** Jobs that ended after something was written for them: their control rows are to be deleted. */
	private final Set<Long> ended = ConcurrentHashMap.newKeySet();

	/**
	 * Registers an attempt that starts running here.
	 * @param stop how a cancel request stops it
	 * @return the attempt, as its listener's {@link JobContext}; {@link #end} it when it finishes
	 */
	public Running start(ClaimedJob job, Stop stop) {
		Running attempt = new Running(job, stop);
		this.running.put(job.id(), attempt);
		return attempt;
	}

	/** Forgets an attempt that finished, however it did. */
	public void end(Running attempt) {
		this.running.remove(attempt.claimed.id(), attempt);
		if (attempt.hasControlRow()) {
			this.ended.add(attempt.claimed.id());
		}
	}

	/**
	 * Cancels the attempt of this job running here, unless it has already finished.
	 * @param by who asked, for the job's error and the log
	 * @return whether an attempt running here was stopped
	 */
	public boolean cancel(long id, String by) {
		Running attempt = this.running.get(id);
		if (attempt == null || !attempt.cancel(by)) {
			return false;
		}
		// The request did its work: its row goes now, even while a listener that ignores the interrupt
		// keeps its thread (leased mode), which may be long.
		this.ended.add(id);
		return true;
	}

	/** Whether an attempt of this job runs here now. */
	public boolean isRunning(long id) {
		return this.running.containsKey(id);
	}

	/** The ids of the jobs running here now. */
	public Long[] ids() {
		return this.running.keySet().toArray(new Long[0]);
	}

	/** Whether any job runs here now. */
	public boolean isEmpty() {
		return this.running.isEmpty();
	}

	/**
	 * The progress reports due to be written: those changed since last written, and last written at
	 * least {@link #PROGRESS_INTERVAL_NANOS} ago. Each is marked written.
	 */
	public List<Progress> progressDue(long now) {
		List<Progress> due = new ArrayList<>();
		for (Running attempt : this.running.values()) {
			Progress progress = attempt.takeProgress(now);
			if (progress != null) {
				due.add(progress);
			}
		}
		return due;
	}

	/** The jobs that ended since last asked and had a control row written for them. */
	public Long[] takeEnded() {
		List<Long> taken = new ArrayList<>(this.ended);
		this.ended.removeAll(taken);
		return taken.toArray(new Long[0]);
	}

	/**
	 * One job's latest progress.
	 * @param id the job's internal id
	 * @param percent 0 to 100
	 * @param message its note, or {@code null}
	 */
	public record Progress(long id, int percent, @Nullable String message) {
	}

	/**
	 * How a cancel request stops a running attempt: the runner's, which stops it as at a time limit
	 * (see {@code engine.run.JobRunner}).
	 */
	@FunctionalInterface
	public interface Stop {

		/**
		 * Stops the attempt for a cancel request, unless it finished or was stopped first; when this
		 * stops it, runs {@code won} first, before anything of the attempt is stopped.
		 * @param by who asked, for the job's error and the log
		 * @return whether this stopped it
		 */
		boolean stop(String by, Runnable won);

	}

	/** One running attempt, as its listener's {@link JobContext}. */
	public static final class Running implements JobContext {

		final ClaimedJob claimed;

		private final Stop stop;

		private volatile boolean cancelRequested;

		/**
		 * The listener's latest report. Set without a lock: a listener that reports in a tight loop
		 * would otherwise keep the watch from ever taking the lock to read it.
		 */
		private final AtomicReference<@Nullable Progress> latest = new AtomicReference<>();

		/** The report last written; read and written by the watch's thread only. */
		private @Nullable Progress lastWritten;

		private long writtenAt;

		private volatile boolean written;

		Running(ClaimedJob claimed, Stop stop) {
			this.claimed = claimed;
			this.stop = stop;
		}

		@Override
		public Job job() {
			return this.claimed.job();
		}

		@Override
		public boolean isCancellationRequested() {
			return this.cancelRequested;
		}

		@Override
		public void progress(int percent, @Nullable String message) {
			if (percent < 0 || percent > 100) {
				throw new IllegalArgumentException("Progress of job " + this.claimed.job().id() + " must be 0 to 100 "
						+ "percent, was " + percent);
			}
			String kept = (message == null || message.length() <= MAX_MESSAGE_LENGTH) ? message
					: message.substring(0, MAX_MESSAGE_LENGTH - 1) + "…";
			this.latest.set(new Progress(this.claimed.id(), percent, kept));
		}

		/**
		 * Stops the attempt, unless it finished first. The listener sees the request only once the
		 * cancel has won, inside the stop: a listener that returns the moment it sees it then finds its
		 * attempt already cancelled, instead of ending it as completed while the cancel waits.
		 */
		boolean cancel(String by) {
			return this.stop.stop(by, () -> {
				this.cancelRequested = true;
				this.written = true;
			});
		}

		/** The report to write now, if it changed and the last write is old enough; called by the watch only. */
		@Nullable Progress takeProgress(long now) {
			Progress report = this.latest.get();
			if (report == null || report == this.lastWritten
					|| (this.lastWritten != null && now - this.writtenAt < PROGRESS_INTERVAL_NANOS)) {
				return null;
			}
			this.lastWritten = report;
			this.writtenAt = now;
			this.written = true;
			return report;
		}

		boolean hasControlRow() {
			return this.written;
		}

	}

}
