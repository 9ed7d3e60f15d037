package dev.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * What one queue did over a window, step by step, summed over every instance
 * ({@link JobAdmin#history}).
 *
 * @param queue the queue
 * @param step how long each point covers
 * @param points one per step, oldest first; the last one covers the current minute and is still
 * growing
 */
public record QueueHistory(String queue, Duration step, List<Point> points) {

	public QueueHistory {
		points = List.copyOf(points);
	}

	/**
	 * What the queue did in one step. Waits run from a job's run-at to its claim; runs are attempts,
	 * whatever their outcome. Means and maxima are {@link Duration#ZERO} when nothing was measured.
	 *
	 * @param start when the step began
	 * @param completed attempts that completed their job
	 * @param failed attempts that failed their job for good
	 * @param retried attempts that failed and left their job to be retried
	 */
	public record Point(Instant start, long completed, long failed, long retried, Duration meanWait,
			Duration maxWait, Duration meanRun, Duration maxRun) {
	}

}
