package dev.pgqueue;

import java.time.Instant;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A job as a listener sees it while running it.
 *
 * @param id public, unguessable id returned by {@link JobClient} at enqueue
 * @param kind kind of job, which selects the listener
 * @param queue queue the job runs in
 * @param attempt number of this attempt, 1 on the first run
 * @param maxAttempts attempts allowed before the job fails for good
 * @param priority priority; higher runs first
 * @param payload raw JSON payload
 * @param runAt when the job became due
 * @param createdAt when the job was enqueued
 * @param shard the shard ({@code pgqueue.shards.<name>}) the job lives on, or {@code null} where no
 * shards are configured
 */
public record Job(UUID id, String kind, String queue, int attempt, int maxAttempts, int priority, String payload,
		Instant runAt, Instant createdAt, @Nullable String shard) {

	/** A job where no shards are configured. */
	public Job(UUID id, String kind, String queue, int attempt, int maxAttempts, int priority, String payload,
			Instant runAt, Instant createdAt) {
		this(id, kind, queue, attempt, maxAttempts, priority, payload, runAt, createdAt, null);
	}

	/** This job as it runs on the named shard. */
	public Job onShard(String shard) {
		return new Job(this.id, this.kind, this.queue, this.attempt, this.maxAttempts, this.priority, this.payload,
				this.runAt, this.createdAt, shard);
	}

	/** Whether this attempt is the last one allowed; a failure now fails the job for good. */
	public boolean isLastAttempt() {
		return this.attempt >= this.maxAttempts;
	}

	@Override
	public String toString() {
		// The payload stays out of logs and exception messages: it may hold personal data.
		return "Job[id=" + this.id + ", kind=" + this.kind + ", queue=" + this.queue + ", attempt=" + this.attempt
				+ "/" + this.maxAttempts + ((this.shard != null) ? ", shard=" + this.shard : "") + "]";
	}

}
