package dev.pgqueue.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import dev.pgqueue.engine.DatabaseEngine;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * Waits until a queue, or every queue, has nothing left to run: no job available or running, and
 * none scheduled to fall due before the wait's deadline (on the database clock). A job scheduled for
 * after the deadline is later work, not waited for. Failed jobs do not keep a queue busy. When the
 * deadline passes, fails with what still waits or runs, the failed jobs, and why a job may never run
 * here.
 */
final class IdleWait {

	private static final Duration POLL_INTERVAL = Duration.ofMillis(25);

	/** Most failed jobs a failure lists. */
	private static final int FAILED_LISTED = 10;

	/** Most waiting jobs a failure lists. */
	private static final int WAITING_LISTED = 50;

	private final DatabaseEngine engine;

	private final List<EngineRows> engines;

	/** @param engines the application's engine, or each shard's: the wait is for all of their tables */
	IdleWait(List<EngineRows> engines) {
		this.engine = engines.get(0).engine();
		this.engines = engines;
	}

	void await(@Nullable String queue, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		if (!this.engine.processing()) {
			// Nothing here would run them: say so now rather than after the timeout.
			List<EnqueuedJob> waiting = waiting(queue, timeout);
			if (!waiting.isEmpty()) {
				throw new AssertionError(report(queue, "not idle, and this application runs no job: ", waiting));
			}
			return;
		}
		try {
			Awaitility.await()
				.atMost(timeout)
				.pollDelay(Duration.ZERO)
				.pollInterval(POLL_INTERVAL)
				.pollInSameThread()
				.until(() -> countWaiting(queue, remaining(deadline)) == 0);
		}
		catch (ConditionTimeoutException ex) {
			List<EnqueuedJob> waiting = waiting(queue, Duration.ZERO);
			if (waiting.isEmpty()) {
				// The last job finished between the last look and this one.
				return;
			}
			throw new AssertionError(report(queue, "not idle after " + humanized(timeout) + ": ", waiting));
		}
	}

	private String report(@Nullable String queue, String what, List<EnqueuedJob> waiting) {
		StringBuilder text = new StringBuilder((queue != null) ? "Queue '" + queue + "' is " : "The queues are ")
			.append(what)
			.append(waiting.size())
			.append((waiting.size() == 1) ? " job still waits or runs" : " jobs still wait or run")
			.append(" (jobs scheduled within the timeout count as waiting; a job that a transactional batch is running "
					+ "shows as available until the batch commits).");
		waiting.stream().limit(WAITING_LISTED).forEach((job) -> text.append("\n  - ").append(job.describe()));
		if (waiting.size() > WAITING_LISTED) {
			text.append("\n  … and ").append(waiting.size() - WAITING_LISTED).append(" more");
		}
		List<EnqueuedJob> failed = new ArrayList<>();
		this.engines.forEach((engine) -> failed.addAll(engine.rows().failed(queue, FAILED_LISTED - failed.size())));
		if (!failed.isEmpty()) {
			text.append("\nFailed jobs (newest ").append(failed.size()).append("):");
			failed.forEach((job) -> text.append("\n  - ").append(job.describe()));
		}
		hints(waiting).forEach((hint) -> text.append('\n').append(hint));
		return text.toString();
	}

	/** Why some of these jobs may never run in this application. */
	private Set<String> hints(List<EnqueuedJob> waiting) {
		Set<String> hints = new LinkedHashSet<>();
		if (!this.engine.processing()) {
			hints.add("This application runs no pollers (pgqueue.enabled=false): run the jobs on the test thread "
					+ "with QueueTester.drain(…) or run(id), or start the application with pollers.");
		}
		Set<String> paused = new LinkedHashSet<>();
		this.engines.forEach((engine) -> paused.addAll(engine.engine().admin().pausedQueues()));
		for (EnqueuedJob job : waiting) {
			String handledIn = this.engine.handlers().queueOf(job.kind());
			if (handledIn == null) {
				hints.add("No @JobListener of this application handles kind '" + job.kind() + "': its jobs wait for an "
						+ "application that does (check the kind's spelling against the listener's).");
			}
			else if (!handledIn.equals(job.queue())) {
				hints.add("This application handles kind '" + job.kind() + "' in queue '" + handledIn + "', so no poller "
						+ "here claims its jobs in queue '" + job.queue() + "': enqueue them into '" + handledIn
						+ "' (JobRequest.queue), or move the listener.");
			}
			if (paused.contains(job.queue())) {
				hints.add("Queue '" + job.queue() + "' is paused: resume it with JobAdmin.resume(\"" + job.queue()
						+ "\").");
			}
		}
		if (this.engine.processing() && hints.isEmpty() && !waiting.isEmpty()) {
			hints.add("If the jobs are slow rather than stuck, wait longer: QueueTester.withTimeout(Duration).");
		}
		return hints;
	}

	private int countWaiting(@Nullable String queue, Duration horizon) {
		int count = 0;
		for (EngineRows engine : this.engines) {
			count += engine.rows().countWaiting(queue, horizon);
		}
		return count;
	}

	private List<EnqueuedJob> waiting(@Nullable String queue, Duration horizon) {
		List<EnqueuedJob> waiting = new ArrayList<>();
		this.engines.forEach((engine) -> waiting.addAll(engine.rows().waiting(queue, horizon)));
		return waiting;
	}

	private static Duration remaining(long deadline) {
		return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
	}

	/** As the timeout would be written in a property: {@code 500ms}, {@code 10s}, {@code 2m}. */
	static String humanized(Duration duration) {
		long millis = duration.toMillis();
		if (millis % 60_000 == 0 && millis > 0) {
			return (millis / 60_000) + "m";
		}
		return (millis % 1000 == 0) ? (millis / 1000) + "s" : millis + "ms";
	}

}
