package dev.pgqueue.engine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.Objects;
import java.util.UUID;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@link JobClient} that inserts into the jobs table through {@link JobRepository}, joining the
 * caller's transaction.
 *
 * <p>Public ids are random (version 4) UUIDs made here rather than by the database, so a many-job
 * enqueue needs no {@code RETURNING} and keeps the requests' order.
 *
 * <p>Given this application's {@link PollerWakeUps}, it wakes the pollers of a queue it enqueued due
 * jobs in as soon as the enqueue commits, without waiting for the notification to come back.
 */
public class JdbcJobClient implements JobClient {

	/** Default largest payload: 1 MiB of JSON. */
	public static final long DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

	private final JobRepository repository;

	private final JsonMapper jsonMapper;

	private final QueueCatalog queues;

	private final JobHandlerRegistry handlers;

	private final long maxPayloadBytes;

	private final PollerWakeUps wakeUps;

	/** A client that accepts payloads up to {@value #DEFAULT_MAX_PAYLOAD_BYTES} bytes of JSON. */
	public JdbcJobClient(JobRepository repository, JsonMapper jsonMapper, QueueCatalog queues,
			JobHandlerRegistry handlers) {
		this(repository, jsonMapper, queues, handlers, DEFAULT_MAX_PAYLOAD_BYTES);
	}

	/**
	 * @param maxPayloadBytes largest serialized payload accepted, in bytes of UTF-8 JSON
	 */
	public JdbcJobClient(JobRepository repository, JsonMapper jsonMapper, QueueCatalog queues,
			JobHandlerRegistry handlers, long maxPayloadBytes) {
		this(repository, jsonMapper, queues, handlers, maxPayloadBytes, null);
	}

	/**
	 * @param maxPayloadBytes largest serialized payload accepted, in bytes of UTF-8 JSON
	 * @param wakeUps this application's pollers, woken after commit for jobs due now; {@code null}
	 * to leave waking to notifications and polling
	 */
	public JdbcJobClient(JobRepository repository, JsonMapper jsonMapper, QueueCatalog queues,
			JobHandlerRegistry handlers, long maxPayloadBytes, PollerWakeUps wakeUps) {
		if (maxPayloadBytes < 1) {
			throw new InvalidQueueConfigurationException("pgqueue.max-payload-size",
					"pgqueue.max-payload-size must be positive, was " + maxPayloadBytes + " bytes",
					"Set pgqueue.max-payload-size to a size such as 64KB or 1MB.");
		}
		this.repository = repository;
		this.jsonMapper = jsonMapper;
		this.queues = queues;
		this.handlers = handlers;
		this.maxPayloadBytes = maxPayloadBytes;
		this.wakeUps = wakeUps;
	}

	@Override
	public UUID enqueue(JobRequest request) {
		NewJob job = resolve(request);
		this.repository.insert(job);
		if (this.wakeUps != null && job.isDueNow()) {
			this.wakeUps.wakeAfterCommit(List.of(job.queue()));
		}
		return job.publicId();
	}

	@Override
	public List<UUID> enqueueAll(List<JobRequest> requests) {
		Objects.requireNonNull(requests, "requests must not be null");
		List<NewJob> jobs = new ArrayList<>(requests.size());
		List<UUID> ids = new ArrayList<>(requests.size());
		for (JobRequest request : requests) {
			NewJob job = resolve(request);
			jobs.add(job);
			ids.add(job.publicId());
		}
		this.repository.insertAll(jobs);
		if (this.wakeUps != null) {
			Set<String> queues = new LinkedHashSet<>();
			jobs.stream().filter(NewJob::isDueNow).forEach((job) -> queues.add(job.queue()));
			this.wakeUps.wakeAfterCommit(queues);
		}
		return ids;
	}

	private NewJob resolve(JobRequest request) {
		Objects.requireNonNull(request, "request must not be null");
		String queue = request.queue();
		if (queue == null) {
			String listenerQueue = this.handlers.queueOf(request.kind());
			queue = (listenerQueue != null) ? listenerQueue : JobRequest.DEFAULT_QUEUE;
		}
		int maxAttempts = (request.maxAttempts() != null) ? request.maxAttempts()
				: this.queues.settings(queue).maxAttempts();
		String payload;
		try {
			payload = this.jsonMapper.writeValueAsString(request.payload());
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException("Payload of a '" + request.kind() + "' job (queue '" + queue
					+ "') cannot be serialized to JSON: " + ex.getOriginalMessage()
					+ ". Pass a record, bean, map or other value Jackson can write.", ex);
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
		return new NewJob(UUID.randomUUID(), request.kind(), queue, payload, request.priority(), request.runAt(),
				request.delay(), maxAttempts);
	}

}
