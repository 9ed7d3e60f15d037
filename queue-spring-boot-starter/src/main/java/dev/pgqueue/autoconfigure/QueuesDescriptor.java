package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * What {@code GET /actuator/pgqueue} answers: every queue by name, whether the write operations
 * answer, and the lock waits of this application's connections.
 *
 * @param queues each queue by name, sorted
 * @param writes whether the write operations are mapped, and why not
 * @param lockWaits this application's connections waiting for a lock; only where the engine runs
 * jobs (only such an engine reads them)
 */
public record QueuesDescriptor(Map<String, QueueDescriptor> queues, WritesDescriptor writes,
		@Nullable LockWaitsDescriptor lockWaits) implements OperationResponseBody {

	/**
	 * One queue. Its counts come from the stats an engine that runs jobs reads; {@code polled},
	 * {@code busyWorkers}, {@code concurrency} and {@code mode} only where this application polls it;
	 * {@code signals} only once its poller has claimed.
	 *
	 * @param depth jobs available now
	 * @param oldestAge how long the oldest available job has waited
	 * @param scheduled jobs waiting for their time
	 * @param running jobs running
	 * @param polled whether this application's poller of the queue runs
	 * @param busyWorkers workers (leased) or batches (transactional) busy now
	 * @param concurrency the queue's concurrency here
	 * @param mode {@code transactional} or {@code leased}
	 * @param paused whether the queue is paused in every instance
	 * @param signals the signals of a queue being outgrown
	 */
	public record QueueDescriptor(@Nullable Long depth, @Nullable Duration oldestAge, @Nullable Long scheduled,
			@Nullable Long running, @Nullable Boolean polled, @Nullable Integer busyWorkers,
			@Nullable Integer concurrency, @Nullable String mode, boolean paused,
			@Nullable SignalsDescriptor signals) {
	}

	/**
	 * The signals of a queue polled here.
	 *
	 * @param pollCycle the assessment of {@code pollCycleP99}
	 * @param pollCycleP99 99th percentile of the time from one claim to the next
	 * @param jobsClaimed jobs claimed so far
	 * @param unproductiveClaims claims that found nothing to run while jobs were due
	 * @param sla {@code met} or {@code slipping}; only for a queue with an SLA
	 * @param slaMissed jobs that started later than the SLA; only for a queue with an SLA
	 */
	public record SignalsDescriptor(String pollCycle, Duration pollCycleP99, long jobsClaimed,
			long unproductiveClaims, @Nullable String sla, @Nullable Long slaMissed) {
	}

	/**
	 * Whether the write operations answer.
	 *
	 * @param enabled whether the endpoint's access lets Spring Boot map them
	 * @param reason while it does not, why they answer 404 and how to allow them
	 */
	public record WritesDescriptor(boolean enabled, @Nullable String reason) {
	}

	/**
	 * Connections of this application waiting for a lock, as last read.
	 *
	 * @param waiting how many
	 * @param applicationName the {@code application_name} they were counted by
	 */
	public record LockWaitsDescriptor(long waiting, @Nullable String applicationName) {
	}

}
