package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.pgqueue.JobState;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;

/**
 * What {@code GET /actuator/pgqueue} answers: every queue by name, whether the write operations
 * answer, the lock waits of this application's connections and, with shards, each shard.
 *
 * @param queues each queue by name, sorted
 * @param writes whether the write operations are mapped, and why not
 * @param lockWaits this application's connections waiting for a lock; only where the engine runs
 * jobs (only such an engine reads them)
 * @param shards each shard by name, in declared order; only with {@code pgqueue.shards}
 */
public record QueuesDescriptor(Map<String, QueueDescriptor> queues, WritesDescriptor writes,
		@Nullable LockWaitsDescriptor lockWaits, @Nullable Map<String, ShardDescriptor> shards)
		implements OperationResponseBody {

	/**
	 * One queue. Its counts come from the stats an engine that runs jobs reads (with shards, added up
	 * over the shards' engines, as their pollers' busy workers and concurrency are); {@code polled},
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

	/**
	 * One shard: whether it answers, the slots it owns and its own jobs, counted from its table.
	 *
	 * @param answers whether it answers its probes and its jobs could be counted
	 * @param why while it does not answer, why
	 * @param slots how many of the 16 384 key slots it owns
	 * @param queues its jobs by queue, sorted; absent while it does not answer
	 */
	public record ShardDescriptor(boolean answers, @Nullable String why, int slots,
			@Nullable Map<String, ShardQueueDescriptor> queues) {

		/** Each shard as read, by name in declared order. */
		static Map<String, ShardDescriptor> of(List<ShardReading> readings) {
			Map<String, ShardDescriptor> shards = new LinkedHashMap<>();
			for (ShardReading reading : readings) {
				Map<String, Map<JobState, Long>> counts = reading.counts();
				Map<String, ShardQueueDescriptor> queues = null;
				if (counts != null) {
					queues = new TreeMap<>();
					for (Map.Entry<String, Map<JobState, Long>> queue : counts.entrySet()) {
						queues.put(queue.getKey(), ShardQueueDescriptor.of(queue.getValue()));
					}
				}
				shards.put(reading.shard(), new ShardDescriptor(reading.answers(), reading.why(), reading.slots(), queues));
			}
			return shards;
		}

	}

	/**
	 * One queue's jobs on one shard, by state.
	 *
	 * @param depth jobs available now
	 * @param scheduled jobs waiting for their time
	 * @param running jobs running (leased ones; a transactional batch's jobs count as available)
	 * @param failed failed jobs not yet pruned
	 */
	public record ShardQueueDescriptor(long depth, long scheduled, long running, long failed) {

		static ShardQueueDescriptor of(Map<JobState, Long> states) {
			return new ShardQueueDescriptor(states.getOrDefault(JobState.AVAILABLE, 0L),
					states.getOrDefault(JobState.SCHEDULED, 0L), states.getOrDefault(JobState.RUNNING, 0L),
					states.getOrDefault(JobState.FAILED, 0L));
		}

	}

}
