package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.pgqueue.QueueHistory;
import dev.pgqueue.QueueHistory.Point;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * Each queue's history over a window ({@code GET /actuator/pgqueue/history}), summed over every
 * instance.
 *
 * @param window how far back it reaches
 * @param step how long each point covers
 * @param queues each queue's points, oldest first, by queue name, sorted
 */
public record HistoryDescriptor(Duration window, Duration step, Map<String, List<PointDescriptor>> queues)
		implements OperationResponseBody {

	static HistoryDescriptor of(Duration window, Duration step, List<QueueHistory> histories) {
		Map<String, List<PointDescriptor>> queues = new TreeMap<>();
		for (QueueHistory history : histories) {
			queues.put(history.queue(), history.points().stream().map(PointDescriptor::of).toList());
		}
		return new HistoryDescriptor(window, step, queues);
	}

	/**
	 * One step of a queue's history; times in milliseconds.
	 *
	 * @param start when the step starts
	 * @param completed attempts that completed
	 * @param failed attempts that failed for good
	 * @param retried attempts that failed and were retried
	 * @param meanWaitMs mean time from due to start
	 * @param maxWaitMs longest time from due to start
	 * @param meanRunMs mean run time
	 * @param maxRunMs longest run time
	 */
	public record PointDescriptor(Instant start, long completed, long failed, long retried, long meanWaitMs,
			long maxWaitMs, long meanRunMs, long maxRunMs) {

		static PointDescriptor of(Point point) {
			return new PointDescriptor(point.start(), point.completed(), point.failed(), point.retried(),
					point.meanWait().toMillis(), point.maxWait().toMillis(), point.meanRun().toMillis(),
					point.maxRun().toMillis());
		}

	}

}
