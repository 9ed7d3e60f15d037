package dev.pgqueue.engine.job;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A row about to be inserted: the request resolved to a queue, serialized, and given its id.
 *
 * @param runAt absolute due time, or {@code null}
 * @param delay delay from the database's clock, or {@code null}; with neither the job is due now
 * @param jitter the job falls due at a random instant up to this much later; zero for none
 * @param bucket the job's bucket (see {@code QueueAssignment.BUCKETS})
 * @param concurrencyKey the key whose jobs are limited together, or {@code null}
 * @param traceContext the enqueue's trace headers (such as {@code traceparent}), empty without tracing
 * @param unique the key that keeps a second such job out, or {@code null}
 * @param tags the job's tags, in order; empty for none
 * @param rateWeight the units of each rate limit the job's start uses, or {@code null} for its kind's weight
 */
public record NewJob(UUID publicId, String kind, String queue, String payloadJson, int priority,
		@Nullable Instant runAt, @Nullable Duration delay, int maxAttempts, Duration jitter, int bucket,
		@Nullable String concurrencyKey, Map<String, String> traceContext, @Nullable Uniqueness unique,
		List<String> tags, @Nullable Integer rateWeight) {

	public NewJob(UUID publicId, String kind, String queue, String payloadJson, int priority, @Nullable Instant runAt,
			@Nullable Duration delay, int maxAttempts, Duration jitter, int bucket, @Nullable String concurrencyKey) {
		this(publicId, kind, queue, payloadJson, priority, runAt, delay, maxAttempts, jitter, bucket, concurrencyKey,
				Map.of(), null, List.of(), null);
	}

	/** This job using {@code rateWeight} units of each rate limit it falls under when it starts. */
	public NewJob withRateWeight(@Nullable Integer rateWeight) {
		return new NewJob(this.publicId, this.kind, this.queue, this.payloadJson, this.priority, this.runAt, this.delay,
				this.maxAttempts, this.jitter, this.bucket, this.concurrencyKey, this.traceContext, this.unique, this.tags,
				rateWeight);
	}

	/** This job with the tags given. */
	public NewJob withTags(List<String> tags) {
		return new NewJob(this.publicId, this.kind, this.queue, this.payloadJson, this.priority, this.runAt, this.delay,
				this.maxAttempts, this.jitter, this.bucket, this.concurrencyKey, this.traceContext, this.unique, tags,
				this.rateWeight);
	}

	/**
	 * The tags as the text of a PostgreSQL array ({@code {"a","b"}}), which the insert statements cast
	 * to {@code text[]}; null for none, which stores none.
	 */
	public @Nullable String tagsLiteral() {
		if (this.tags.isEmpty()) {
			return null;
		}
		StringBuilder literal = new StringBuilder("{");
		for (int i = 0; i < this.tags.size(); i++) {
			if (i > 0) {
				literal.append(',');
			}
			literal.append('"');
			String tag = this.tags.get(i);
			for (int c = 0; c < tag.length(); c++) {
				char ch = tag.charAt(c);
				if (ch == '"' || ch == '\\') {
					literal.append('\\');
				}
				literal.append(ch);
			}
			literal.append('"');
		}
		return literal.append('}').toString();
	}

	/** This job carrying the trace headers given. */
	public NewJob withTraceContext(Map<String, String> headers) {
		return new NewJob(this.publicId, this.kind, this.queue, this.payloadJson, this.priority, this.runAt, this.delay,
				this.maxAttempts, this.jitter, this.bucket, this.concurrencyKey, headers, this.unique, this.tags,
				this.rateWeight);
	}

	/** This job, kept unique by the key given. */
	public NewJob withUnique(@Nullable Uniqueness unique) {
		return new NewJob(this.publicId, this.kind, this.queue, this.payloadJson, this.priority, this.runAt, this.delay,
				this.maxAttempts, this.jitter, this.bucket, this.concurrencyKey, this.traceContext, unique, this.tags,
				this.rateWeight);
	}

	/**
	 * Whether the job will be available at once (by this JVM's clock, which only decides whether to
	 * wake a poller: a wrong guess costs an empty poll or a poll interval, never a job).
	 */
	public boolean isDueNow() {
		if (this.jitter != null && !this.jitter.isZero()) {
			// Most likely scheduled; the promoter wakes the pollers when it falls due.
			return false;
		}
		if (this.delay != null && !this.delay.isZero() && !this.delay.isNegative()) {
			return false;
		}
		return this.runAt == null || !this.runAt.isAfter(Instant.now());
	}

}
