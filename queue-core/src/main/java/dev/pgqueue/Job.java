package dev.pgqueue;

import java.time.Instant;
import java.util.UUID;

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
 */
public record Job(UUID id, String kind, String queue, int attempt, int maxAttempts, int priority, String payload,
		Instant runAt, Instant createdAt) {

	/** Whether this attempt is the last one allowed; a failure now fails the job for good. */
	public boolean isLastAttempt() {
		return this.attempt >= this.maxAttempts;
	}

	@Override
	public String toString() {
		// The payload stays out of logs and exception messages: it may hold personal data.
		return "Job[id=" + this.id + ", kind=" + this.kind + ", queue=" + this.queue + ", attempt=" + this.attempt
				+ "/" + this.maxAttempts + "]";
	}

}
