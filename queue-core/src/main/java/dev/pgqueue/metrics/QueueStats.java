package dev.pgqueue.metrics;

import java.time.Duration;

/**
 * Health signals of one queue, read from the jobs table.
 *
 * @param queue queue name
 * @param available due jobs waiting for a worker (the queue's depth)
 * @param scheduled jobs waiting for their run-at (delayed jobs and retries)
 * @param running leased jobs being run
 * @param oldestAvailableAge how long the oldest due job has been waiting; zero when none is
 */
public record QueueStats(String queue, long available, long scheduled, long running, Duration oldestAvailableAge) {

	public static QueueStats empty(String queue) {
		return new QueueStats(queue, 0, 0, 0, Duration.ZERO);
	}

}
