package dev.pgqueue.autoconfigure.dashboard;

import java.time.Duration;
import java.util.List;

import dev.pgqueue.engine.settings.RateLimit;
import org.jspecify.annotations.Nullable;

/**
 * One queue as the dashboard shows it.
 *
 * @param queue queue name
 * @param available due jobs waiting for a worker (the queue's depth)
 * @param oldestAge how long the oldest due job has waited, as last read by the stats reader;
 * {@code null} where this application does not read it (it runs no jobs)
 * @param scheduled jobs waiting for their run-at
 * @param running leased jobs being run (transactional ones count as available until their batch
 * commits)
 * @param failed failed jobs not yet pruned
 * @param finishedLastMinute jobs completed or failed in the last minute, by every instance, counted from
 * their rows; {@code null} where this application deletes completed jobs as they finish
 * @param paused whether an operator paused the queue
 * @param mode the queue's mode where this application polls it, else {@code null}
 * @param busyWorkers workers of this application running the queue's jobs, or {@code null}
 * @param concurrency most workers of this application for the queue, or {@code null}
 * @param rate the queue's rate limit and its use, where this application polls the queue and it has
 * one, else {@code null}
 */
record QueueSummary(String queue, long available, @Nullable Duration oldestAge, long scheduled, long running,
		long failed, @Nullable Long finishedLastMinute, boolean paused, @Nullable String mode,
		@Nullable Integer busyWorkers, @Nullable Integer concurrency, @Nullable RateUse rate) {

	/**
	 * A rate limit and how much of it the last period used.
	 * @param used starts granted in the last period, by every instance
	 * @param limit the limit
	 * @param heldFor how long this application's claims have been held by it without a break
	 * @param kinds the limits of the queue's kinds, with their use
	 * @param perKey the queue's limit per concurrency key, or {@code null}
	 * @param keysHeld how many keys that limit holds back now, as this application last saw them
	 */
	record RateUse(int used, @Nullable RateLimit limit, Duration heldFor, List<KindRateUse> kinds,
			@Nullable RateLimit perKey, int keysHeld) {
	}

	/**
	 * A kind's rate limit and how much of it the last period used.
	 * @param kind the kind
	 * @param used units granted in the last period, by every instance
	 * @param limit the limit
	 * @param heldFor how long this application's claims of the kind have been held by it without a break
	 */
	record KindRateUse(String kind, int used, RateLimit limit, Duration heldFor) {
	}

}
