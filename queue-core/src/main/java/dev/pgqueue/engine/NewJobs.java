package dev.pgqueue.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Supplier;

import dev.pgqueue.JobRequest;
import dev.pgqueue.OnConflict;
import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.engine.buckets.Buckets;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.job.NewJob;
import dev.pgqueue.engine.job.Uniqueness;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.RateLimit;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Turns a {@link JobRequest} into the {@link NewJob} an enqueue inserts, and refuses one that cannot
 * work before anything is written: a payload Jackson cannot write or over
 * {@code pgqueue.max-payload-size}, a rate weight above a limit this process knows the job falls
 * under, a unique key held for a period with a policy that would change a finished job, a shard other
 * than the one it writes to.
 */
final class NewJobs {

	private final JsonMapper jsonMapper;

	private final QueueCatalog queues;

	private final JobHandlerRegistry handlers;

	private final long maxPayloadBytes;

	private final Supplier<UUID> publicIds;

	private final @Nullable String shard;

	/**
	 * @param maxPayloadBytes largest serialized payload accepted, in bytes of UTF-8 JSON
	 * @param publicIds makes each new job's public id
	 * @param shard the shard the jobs are written to, or {@code null} without shards
	 */
	NewJobs(JsonMapper jsonMapper, QueueCatalog queues, JobHandlerRegistry handlers, long maxPayloadBytes,
			Supplier<UUID> publicIds, @Nullable String shard) {
		this.shard = shard;
		this.jsonMapper = jsonMapper;
		this.queues = queues;
		this.handlers = handlers;
		this.maxPayloadBytes = maxPayloadBytes;
		this.publicIds = publicIds;
	}

	/**
	 * The row a request makes: its queue (the request's, else its listener's, else the default), the
	 * queue's defaults where the request gives none, its payload as JSON, its bucket, and its weight
	 * and uniqueness once checked.
	 * @throws IllegalArgumentException naming the kind and queue when the payload cannot be written or
	 * is too large, when the weight is above a limit the job falls under, or when the uniqueness asked
	 * for cannot work
	 */
	NewJob of(JobRequest request) {
		Objects.requireNonNull(request, "request must not be null");
		if (request.shard() != null && !request.shard().equals(this.shard)) {
			throw new IllegalArgumentException("A '" + request.kind() + "' job names shard '" + request.shard() + "', but "
					+ ((this.shard != null) ? "this client writes to shard '" + this.shard + "'. Enqueue it through the "
							+ "application's JobClient, which routes to every shard."
							: "no shards are configured (pgqueue.shards). Remove the shard from the request, or "
									+ "configure it."));
		}
		String queue = request.queue();
		if (queue == null) {
			String listenerQueue = this.handlers.queueOf(request.kind());
			queue = (listenerQueue != null) ? listenerQueue : JobRequest.DEFAULT_QUEUE;
		}
		QueueSettings settings = this.queues.settings(queue);
		int maxAttempts = (request.maxAttempts() != null) ? request.maxAttempts() : settings.maxAttempts();
		Duration jitter = (request.jitter() != null) ? request.jitter() : settings.runAtJitter();
		String payload;
		try {
			payload = this.jsonMapper.writeValueAsString(request.payload());
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException("Payload of a '" + request.kind() + "' job (queue '" + queue
					+ "') cannot be serialized to JSON: " + ex.getOriginalMessage()
					+ ". Pass a record, bean, map or other value Jackson can write.", ex);
		}
		if (holdsNul(payload)) {
			// Jackson writes U+0000 as an escape that PostgreSQL's jsonb refuses, failing the caller's transaction.
			throw new IllegalArgumentException("Payload of a '" + request.kind() + "' job (queue '" + queue
					+ "') holds the character U+0000 (NUL), which PostgreSQL's jsonb cannot store; remove it or "
					+ "encode the value (Base64 for binary data)");
		}
		if (StorableText.loneSurrogate(payload) >= 0) {
			throw new IllegalArgumentException("Payload of a '" + request.kind() + "' job (queue '" + queue
					+ "') holds half of a surrogate pair without its other half, which is no character and which "
					+ "PostgreSQL would store as '?'; pass whole characters");
		}
		// A char is at most 3 bytes in UTF-8: only long payloads need counting.
		if ((long) payload.length() * 3 > this.maxPayloadBytes) {
			long bytes = payload.getBytes(StandardCharsets.UTF_8).length;
			if (bytes > this.maxPayloadBytes) {
				throw new IllegalArgumentException("Payload of a '" + request.kind() + "' job (queue '" + queue
						+ "') is " + bytes + " bytes of JSON, over the limit of " + this.maxPayloadBytes
						+ " bytes (pgqueue.max-payload-size). Store large data elsewhere and pass its key, or raise "
						+ "the limit.");
			}
		}
		NewJob job = new NewJob(this.publicIds.get(), request.kind(), queue, payload, request.priority(), request.runAt(),
				request.delay(), maxAttempts, jitter, Buckets.of(request.bucketKey(), settings.buckets()),
				request.concurrencyKey());
		if (!request.tags().isEmpty()) {
			job = job.withTags(request.tags());
		}
		if (request.rateWeight() != null) {
			job = job.withRateWeight(checkedWeight(request, queue, settings));
		}
		return (request.uniqueKey() != null) ? job.withUnique(uniqueness(request, queue)) : job;
	}

	/**
	 * The row of a schedule's job, a tick's or one run now: the schedule's kind, queue and payload (JSON
	 * already), the queue's defaults.
	 * @param runAt when it becomes due, or {@code null} for now
	 * @param unique the key that makes a tick fire once, or {@code null}
	 * @throws IllegalArgumentException naming the schedule when its payload is over the size limit
	 */
	NewJob of(ScheduleDetails schedule, @Nullable Instant runAt, @Nullable Uniqueness unique) {
		checkPayload(schedule.name(), schedule.kind(), schedule.queue(), schedule.payload());
		QueueSettings settings = this.queues.settings(schedule.queue());
		return new NewJob(this.publicIds.get(), schedule.kind(), schedule.queue(), schedule.payload(), 0, runAt, null,
				settings.maxAttempts(), Duration.ZERO, Buckets.of(null, settings.buckets()), null, Map.of(), unique,
				List.of(), null);
	}

	/**
	 * The request's rate weight, refused when it is above a limit this process knows the job falls under:
	 * such a job would use more than one period ever grants.
	 */
	private int checkedWeight(JobRequest request, String queue, QueueSettings settings) {
		int weight = Objects.requireNonNull(request.rateWeight());
		String queueKey = "pgqueue.queues." + queue + ".";
		requireWeightFits(request, queue, weight, settings.rateLimit(), queueKey + "rate-limit.starts");
		requireWeightFits(request, queue, weight, this.handlers.rateLimitOf(request.kind()),
				"pgqueue.kinds." + request.kind() + ".rate-limit.starts");
		if (request.concurrencyKey() != null) {
			requireWeightFits(request, queue, weight, settings.perKeyRateLimit(), queueKey + "per-key-rate-limit.starts");
		}
		return weight;
	}

	private static void requireWeightFits(JobRequest request, String queue, int weight, @Nullable RateLimit limit,
			String limitKey) {
		if (limit != null && weight > limit.starts()) {
			throw new IllegalArgumentException("Rate weight of a '" + request.kind() + "' job (queue '" + queue + "') is "
					+ weight + ", above " + limitKey + " (" + limit.starts() + "): the job would use more than one period "
					+ "of that limit ever grants. Split the job, or raise the limit.");
		}
	}

	private static Uniqueness uniqueness(JobRequest request, String queue) {
		String key = Objects.requireNonNull(request.uniqueKey());
		Duration period = request.uniquePeriod();
		if (period == null) {
			return Uniqueness.whileUnfinished(key, request.onConflict());
		}
		if (request.onConflict() != OnConflict.KEEP) {
			throw new IllegalArgumentException("A '" + request.kind() + "' job (queue '" + queue + "') with unique key '"
					+ key + "' held for " + period + " cannot use OnConflict." + request.onConflict()
					+ ": a key held for a period may belong to a job that finished, which nothing can replace or "
					+ "delay. Use OnConflict.KEEP, or uniqueKey(key) without a period.");
		}
		return new Uniqueness(key, period.getSeconds(), null, OnConflict.KEEP);
	}

	/**
	 * What a schedule's jobs will be checked for, checked when it is saved: the names of its kind and
	 * queue, as a request's, and its payload.
	 * @throws IllegalArgumentException naming the schedule
	 */
	void check(String schedule, String kind, String queue, String payload) {
		try {
			JobRequest.of(kind, null).queue(queue);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Schedule '" + schedule + "' cannot make its jobs: " + ex.getMessage(),
					ex);
		}
		checkPayload(schedule, kind, queue, payload);
	}

	private void checkPayload(String schedule, String kind, String queue, String payload) {
		long bytes = payload.getBytes(StandardCharsets.UTF_8).length;
		if (bytes > this.maxPayloadBytes) {
			throw new IllegalArgumentException("Payload of schedule '" + schedule + "' (kind '" + kind + "', queue '"
					+ queue + "') is " + bytes + " bytes of JSON, over the limit of " + this.maxPayloadBytes
					+ " bytes (pgqueue.max-payload-size). Save the schedule with a smaller payload (the key of data "
					+ "stored elsewhere), or raise the limit.");
		}
		if (holdsNul(payload)) {
			throw new IllegalArgumentException("Payload of schedule '" + schedule + "' (kind '" + kind + "', queue '"
					+ queue + "') holds the character U+0000 (NUL), which PostgreSQL's jsonb cannot store; remove it");
		}
		if (StorableText.loneSurrogate(payload) >= 0) {
			throw new IllegalArgumentException("Payload of schedule '" + schedule + "' (kind '" + kind + "', queue '"
					+ queue + "') holds half of a surrogate pair without its other half, which PostgreSQL would store "
					+ "as '?'; pass whole characters");
		}
	}

	/**
	 * Whether JSON text holds the escape of U+0000: a backslash-u-0000 that its own backslash starts,
	 * not one that follows an escaped backslash (the text {@code \\u0000}).
	 */
	static boolean holdsNul(String json) {
		for (int at = json.indexOf("\\u0000"); at >= 0; at = json.indexOf("\\u0000", at + 1)) {
			int backslashes = 0;
			for (int i = at - 1; i >= 0 && json.charAt(i) == '\\'; i--) {
				backslashes++;
			}
			if (backslashes % 2 == 0) {
				return true;
			}
		}
		return false;
	}

}
