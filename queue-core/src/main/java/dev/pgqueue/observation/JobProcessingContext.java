package dev.pgqueue.observation;

import java.util.Map;

import dev.pgqueue.Job;
import dev.pgqueue.JobOutcome;
import dev.pgqueue.QueueMode;
import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.ReceiverContext;
import org.jspecify.annotations.Nullable;

/**
 * The context of a {@link QueueObservation#PROCESS} observation. Its carrier holds the trace headers
 * stored with the job at enqueue, from which a tracing handler continues the enqueue's trace.
 */
public class JobProcessingContext extends ReceiverContext<Map<String, String>> {

	private final Job job;

	private final QueueMode mode;

	private @Nullable JobOutcome outcome;

	/**
	 * @param job the job as its listener sees it
	 * @param mode its queue's mode
	 * @param traceContext the trace headers stored at enqueue; empty for none
	 */
	public JobProcessingContext(Job job, QueueMode mode, Map<String, String> traceContext) {
		super((carrier, key) -> (carrier != null) ? carrier.get(key) : null, Kind.CONSUMER);
		setCarrier(traceContext);
		this.job = job;
		this.mode = mode;
	}

	/** The job as its listener sees it. */
	public Job job() {
		return this.job;
	}

	/** Its queue's mode. */
	public QueueMode mode() {
		return this.mode;
	}

	/** What became of the attempt; {@code null} until it is known. */
	public @Nullable JobOutcome outcome() {
		return this.outcome;
	}

	/** Sets what became of the attempt, before the observation stops. */
	public void outcome(JobOutcome outcome) {
		this.outcome = outcome;
	}

}
