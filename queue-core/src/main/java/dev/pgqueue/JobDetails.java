package dev.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A job as {@link JobAdmin} shows it.
 *
 * <p>A job that a transactional batch is running shows {@link JobState#AVAILABLE} until its batch
 * commits: its outcome is written with the commit. Operations on it answer
 * {@link AdminResult.Outcome#RUNNING} meanwhile.
 *
 * @param id public id, returned by {@link JobClient} at enqueue
 * @param kind kind of job
 * @param queue queue the job runs in
 * @param state state as stored
 * @param priority priority; higher runs first
 * @param attempt attempts made (in leased mode, including a running one)
 * @param maxAttempts attempts allowed
 * @param lastError exception and first frames of the last failure, or {@code null}
 * @param createdAt when the job was enqueued
 * @param runAt when the job became (or becomes) due
 * @param startedAt when its last attempt was claimed, or {@code null}
 * @param finishedAt when it completed, failed or was cancelled, or {@code null}
 * @param snoozes how many times the job has snoozed ({@link JobSnoozedException})
 * @param tags the tags it was enqueued with, in their order; empty for none
 * @param concurrencyKey the concurrency key it was enqueued with ({@link JobRequest#concurrencyKey}), or
 * {@code null}
 * @param rateWeight its own rate weight ({@link JobRequest#rateWeight}), or {@code null} when it uses
 * its kind's
 * @param payload raw JSON payload, only when asked for ({@link JobAdmin#findWithPayload}), else
 * {@code null}
 */
public record JobDetails(UUID id, String kind, String queue, JobState state, int priority, int attempt,
		int maxAttempts, @Nullable String lastError, Instant createdAt, Instant runAt, @Nullable Instant startedAt,
		@Nullable Instant finishedAt, int snoozes, List<String> tags, @Nullable String concurrencyKey,
		@Nullable Integer rateWeight, @Nullable String payload) {

	public JobDetails {
		tags = List.copyOf(tags);
	}

	/**
	 * How long its last attempt ran: from its claim to its end, or {@code null} while it has not ended
	 * (or never ran).
	 */
	public @Nullable Duration runTime() {
		return (this.startedAt != null && this.finishedAt != null && this.state != JobState.CANCELLED)
				? Duration.between(this.startedAt, this.finishedAt) : null;
	}

	@Override
	public String toString() {
		// The payload stays out of logs and exception messages: it may hold personal data.
		return "JobDetails[id=" + this.id + ", kind=" + this.kind + ", queue=" + this.queue + ", state=" + this.state
				+ ", attempt=" + this.attempt + "/" + this.maxAttempts + "]";
	}

}
