package dev.pgqueue.engine.job;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.Job;
import org.jspecify.annotations.Nullable;

/**
 * A row claimed by a poller.
 *
 * @param id internal id
 * @param attempt attempt as stored when the claim returned: in leased mode the claim has already
 * counted the attempt; in transactional mode it is counted when the outcome is recorded
 * @param job what the listener sees
 * @param claimedAt when it was claimed, on the database clock (the claim's {@code now()}, which is
 * also the {@code started_at} its attempt records); {@code null} when not read
 * @param traceContext the trace headers stored at enqueue, which its processing continues; empty for
 * none
 * @param snoozes how many times the job has snoozed so far
 * @param rateWeight the units of each rate limit the job's start uses, as enqueued; {@code null} for its
 * kind's weight
 */
public record ClaimedJob(long id, int attempt, Job job, @Nullable Instant claimedAt, Map<String, String> traceContext,
		int snoozes, @Nullable Integer rateWeight) {

	public ClaimedJob(long id, int attempt, Job job, @Nullable Instant claimedAt, Map<String, String> traceContext) {
		this(id, attempt, job, claimedAt, traceContext, 0, null);
	}

	public static ClaimedJob of(long id, UUID publicId, String kind, String queue, int storedAttempt, int runningAttempt,
			int maxAttempts, int priority, String payload, Instant runAt, Instant createdAt) {
		return of(id, publicId, kind, queue, storedAttempt, runningAttempt, maxAttempts, priority, payload, runAt,
				createdAt, null);
	}

	public static ClaimedJob of(long id, UUID publicId, String kind, String queue, int storedAttempt, int runningAttempt,
			int maxAttempts, int priority, String payload, Instant runAt, Instant createdAt, @Nullable Instant claimedAt) {
		return of(id, publicId, kind, queue, storedAttempt, runningAttempt, maxAttempts, priority, payload, runAt,
				createdAt, claimedAt, Map.of());
	}

	public static ClaimedJob of(long id, UUID publicId, String kind, String queue, int storedAttempt, int runningAttempt,
			int maxAttempts, int priority, String payload, Instant runAt, Instant createdAt, @Nullable Instant claimedAt,
			Map<String, String> traceContext) {
		return of(id, publicId, kind, queue, storedAttempt, runningAttempt, maxAttempts, priority, payload, runAt,
				createdAt, claimedAt, traceContext, 0);
	}

	public static ClaimedJob of(long id, UUID publicId, String kind, String queue, int storedAttempt, int runningAttempt,
			int maxAttempts, int priority, String payload, Instant runAt, Instant createdAt, @Nullable Instant claimedAt,
			Map<String, String> traceContext, int snoozes) {
		return of(id, publicId, kind, queue, storedAttempt, runningAttempt, maxAttempts, priority, payload, runAt,
				createdAt, claimedAt, traceContext, snoozes, null);
	}

	public static ClaimedJob of(long id, UUID publicId, String kind, String queue, int storedAttempt, int runningAttempt,
			int maxAttempts, int priority, String payload, Instant runAt, Instant createdAt, @Nullable Instant claimedAt,
			Map<String, String> traceContext, int snoozes, @Nullable Integer rateWeight) {
		return new ClaimedJob(id, storedAttempt,
				new Job(publicId, kind, queue, runningAttempt, maxAttempts, priority, payload, runAt, createdAt),
				claimedAt, traceContext, snoozes, rateWeight);
	}

	/** This claimed job as it runs on the named shard. */
	public ClaimedJob onShard(String shard) {
		return new ClaimedJob(this.id, this.attempt, this.job.onShard(shard), this.claimedAt, this.traceContext,
				this.snoozes, this.rateWeight);
	}

	@Override
	public String toString() {
		return this.job.toString();
	}

}
