package dev.pgqueue.testkit;

import java.time.Instant;
import java.util.UUID;

import dev.pgqueue.JobState;
import org.jspecify.annotations.Nullable;

/**
 * A job as the jobs table holds it when a {@link QueueTester} reads it: what was enqueued, and where
 * it stands. Jobs deleted as they complete ({@code pgqueue.retention.completed=0}) are not there.
 *
 * @param id public id, returned by {@code JobClient} at enqueue
 * @param kind kind of job
 * @param queue queue the job runs in
 * @param state state as stored; a job a transactional batch is running shows
 * {@link JobState#AVAILABLE} until the batch commits
 * @param priority priority; higher runs first
 * @param attempt attempts made
 * @param maxAttempts attempts allowed
 * @param runAt when the job became (or becomes) due
 * @param createdAt when it was enqueued
 * @param uniqueKey its unique key, or {@code null}
 * @param lastError exception and first frames of its last failure, or {@code null}
 * @param payload raw JSON payload
 */
public record EnqueuedJob(UUID id, String kind, String queue, JobState state, int priority, int attempt,
		int maxAttempts, Instant runAt, Instant createdAt, @Nullable String uniqueKey, @Nullable String lastError,
		String payload) {

	/** Whether the job waits to run: available, or scheduled for later. */
	public boolean isWaiting() {
		return this.state == JobState.AVAILABLE || this.state == JobState.SCHEDULED;
	}

	/** The first line of the last error, or {@code null}. */
	public @Nullable String lastErrorLine() {
		return firstLine(this.lastError);
	}

	static @Nullable String firstLine(@Nullable String text) {
		if (text == null) {
			return null;
		}
		int end = text.indexOf('\n');
		return ((end >= 0) ? text.substring(0, end) : text).strip();
	}

	/**
	 * One line for failure messages, payload included: a test's payloads are the difference its
	 * author needs to see (pgqueue keeps payloads out of its own logs).
	 */
	String describe() {
		StringBuilder line = new StringBuilder();
		line.append(this.id)
			.append(" kind '")
			.append(this.kind)
			.append("', queue '")
			.append(this.queue)
			.append("', ")
			.append(this.state.sqlValue())
			.append(", attempt ")
			.append(this.attempt)
			.append('/')
			.append(this.maxAttempts);
		if (this.priority != 0) {
			line.append(", priority ").append(this.priority);
		}
		if (this.state == JobState.SCHEDULED) {
			line.append(", run at ").append(this.runAt);
		}
		if (this.uniqueKey != null) {
			line.append(", unique key '").append(this.uniqueKey).append('\'');
		}
		line.append(", payload ").append(abbreviated(this.payload, 300));
		String error = lastErrorLine();
		if (error != null) {
			line.append(", last error: ").append(abbreviated(error, 300));
		}
		return line.toString();
	}

	static String abbreviated(String text, int most) {
		return (text.length() <= most) ? text : text.substring(0, most - 1) + "…";
	}

	@Override
	public String toString() {
		// As the API's types: the payload stays out of toString, which logs may print.
		return "EnqueuedJob[id=" + this.id + ", kind=" + this.kind + ", queue=" + this.queue + ", state=" + this.state
				+ ", attempt=" + this.attempt + "/" + this.maxAttempts + "]";
	}

}
