package dev.pgqueue.observation;

import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import dev.pgqueue.QueueMode;
import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.SenderContext;
import org.jspecify.annotations.Nullable;

/**
 * The context of an {@link QueueObservation#ENQUEUE} observation. Its carrier is a map of headers
 * that a tracing handler fills when the observation starts (with the W3C propagator,
 * {@code traceparent} and {@code tracestate}); pgqueue stores them with the jobs.
 */
public class EnqueueContext extends SenderContext<Map<String, String>> {

	private final @Nullable String queue;

	private final @Nullable String kind;

	private final @Nullable QueueMode mode;

	private final @Nullable UUID jobId;

	private final int jobCount;

	/**
	 * @param queue the jobs' queue, or {@code null} when they go to several
	 * @param kind the jobs' kind, or {@code null} when they are of several
	 * @param mode the queue's mode, or {@code null} when the queues have several
	 * @param jobId the job's public id, or {@code null} for an enqueue of several jobs
	 * @param jobCount how many jobs the enqueue inserts
	 */
	public EnqueueContext(@Nullable String queue, @Nullable String kind, @Nullable QueueMode mode, @Nullable UUID jobId,
			int jobCount) {
		super((carrier, key, value) -> {
			if (carrier != null) {
				carrier.put(key, value);
			}
		}, Kind.PRODUCER);
		setCarrier(new HashMap<>(4));
		this.queue = queue;
		this.kind = kind;
		this.mode = mode;
		this.jobId = jobId;
		this.jobCount = jobCount;
	}

	/** The jobs' queue, or {@code null} when they go to several. */
	public @Nullable String queue() {
		return this.queue;
	}

	/** The jobs' kind, or {@code null} when they are of several. */
	public @Nullable String kind() {
		return this.kind;
	}

	/** The queue's mode, or {@code null} when the queues have several. */
	public @Nullable QueueMode mode() {
		return this.mode;
	}

	/** The job's public id, or {@code null} for an enqueue of several jobs. */
	public @Nullable UUID jobId() {
		return this.jobId;
	}

	/** How many jobs the enqueue inserts. */
	public int jobCount() {
		return this.jobCount;
	}

}
