package dev.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

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

	/** About how many points {@link #stepFor} gives a window: enough for a small chart. */
	public static final int CHART_POINTS = 72;

	public QueueHistory {
		points = List.copyOf(points);
	}

	/**
	 * A step that splits the window into about {@value #CHART_POINTS} points: whole minutes, at least
	 * one (an hour in minutes, six hours in five minutes, a day in twenty).
	 */
	public static Duration stepFor(Duration window) {
		long minutes = (window.toMinutes() + CHART_POINTS - 1) / CHART_POINTS;
		return Duration.ofMinutes(Math.max(1, minutes));
	}

	/** The newest point, which covers the current minute; {@code null} when there is none. */
	public @Nullable Point latest() {
		return this.points.isEmpty() ? null : this.points.get(this.points.size() - 1);
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
