package dev.pgqueue.modulith;

import java.util.List;
import java.util.Objects;
import java.util.UUID;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobEvent;
import dev.pgqueue.JobRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationListener;
import org.springframework.context.PayloadApplicationEvent;
import org.springframework.expression.EvaluationContext;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.RoutingTarget;
import org.springframework.modulith.events.core.ConditionalEventListener;
import org.springframework.modulith.events.support.BrokerRouting;

/**
 * Turns each event that the {@link EventExternalizationConfiguration} selects into one pgqueue job,
 * enqueued on the publishing thread while the event is being published.
 *
 * <p>From event to job:
 * <ol>
 * <li>the configuration selects the event ({@code supports}), gives its routing target
 * ({@code determineTarget}: {@code @Externalized("orders.placed::#{customer()}")}, or the
 * configuration's own routing) and maps it to what is sent ({@code map}, the event itself by
 * default);</li>
 * <li>the target, with SpEL templates ({@code #{…}}) evaluated on the mapped event, is the job's
 * kind;</li>
 * <li>the key after {@code ::}, evaluated the same way, is the job's concurrency key: a queue with
 * {@code per-key-concurrency} runs at most that many jobs of one key (one customer, one order) at
 * once, one with {@code ordered-by-key} runs them one at a time in enqueue order; a key that
 * evaluates to {@code null} or blank sets none;</li>
 * <li>the mapped event is the payload, serialized to JSON as {@link JobClient} serializes every
 * payload, with the application's Jackson mapper;</li>
 * <li>the queue is pgqueue's usual one: that of this application's {@code @JobListener} for the
 * kind, else {@value JobRequest#DEFAULT_QUEUE};</li>
 * <li>every {@link ExternalizedJobCustomizer} adjusts the request, then {@link JobClient} enqueues
 * it.</li>
 * </ol>
 * The configuration's headers are not used: a job has none. pgqueue's own {@link JobEvent}s are
 * never externalized here.
 *
 * <p>The guarantee comes from the enqueue being an insert in the publisher's transaction:
 * {@code JobClient} joins it, so the job commits with the business rows and disappears with them on
 * a rollback: exactly one job per event published in a transaction that commits, none otherwise. An
 * event published outside any transaction gets its job committed at once. A failed enqueue (a
 * kind too long, a database error) throws from {@code publishEvent} and so fails the publishing
 * transaction. This is why the listener is neither Modulith's after-commit module listener nor its
 * outbox: pgqueue's table is already an outbox in the application's own database.
 */
public final class JobEventExternalizer
		implements ApplicationListener<PayloadApplicationEvent<?>>, ConditionalEventListener {

	private final JobClient jobs;

	private final EventExternalizationConfiguration configuration;

	private final EvaluationContext evaluationContext;

	private final List<ExternalizedJobCustomizer> customizers;

	/**
	 * Creates an externalizer.
	 * @param jobs enqueues the jobs
	 * @param configuration selects, routes and maps the events
	 * @param evaluationContext evaluates the SpEL templates of routing targets and keys
	 * @param customizers adjust each request, in this order
	 */
	public JobEventExternalizer(JobClient jobs, EventExternalizationConfiguration configuration,
			EvaluationContext evaluationContext, List<ExternalizedJobCustomizer> customizers) {
		this.jobs = Objects.requireNonNull(jobs, "jobs must not be null");
		this.configuration = Objects.requireNonNull(configuration, "configuration must not be null");
		this.evaluationContext = Objects.requireNonNull(evaluationContext, "evaluationContext must not be null");
		this.customizers = List.copyOf(customizers);
	}

	/**
	 * Whether the event is to be externalized; Modulith's multicaster asks before it calls. pgqueue's
	 * own {@link JobEvent}s never are, whatever the configuration selects: each enqueue publishes one,
	 * which would enqueue another.
	 */
	@Override
	public boolean supports(Object event) {
		return !(event instanceof JobEvent) && this.configuration.supports(event);
	}

	@Override
	public void onApplicationEvent(PayloadApplicationEvent<?> applicationEvent) {
		// Spring's own multicaster calls every listener of the type: ask again.
		Object event = applicationEvent.getPayload();
		if (supports(event)) {
			externalize(event);
		}
	}

	/**
	 * Enqueues the job of one event, in the caller's transaction if it has one.
	 * @return the job's public id
	 */
	UUID externalize(Object event) {
		RoutingTarget target = this.configuration.determineTarget(event);
		Object payload = this.configuration.map(event);
		BrokerRouting routing = BrokerRouting.of(target, this.evaluationContext);
		String kind = routing.getTarget(payload);
		JobRequest request = request(event, target, kind, payload);
		// Without "::", a target with a template reports itself as the key: only an explicit key counts.
		String key = (target.getKey() != null) ? routing.getKey(payload) : null;
		if (key != null && !key.isBlank()) {
			concurrencyKey(request, event, target, key);
		}
		this.customizers.forEach((customizer) -> customizer.customize(event, request));
		return this.jobs.enqueue(request);
	}

	private static JobRequest request(Object event, RoutingTarget target, String kind, @Nullable Object payload) {
		try {
			return JobRequest.of(kind, payload);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Event " + event.getClass().getName() + " is externalized to target '"
					+ target + "', which gives no valid pgqueue job kind (" + ex.getMessage() + "). Give its "
					+ "@Externalized a target of at most " + JobRequest.MAX_NAME_LENGTH + " characters, or route "
					+ "it so in the application's EventExternalizationConfiguration bean.", ex);
		}
	}

	private static void concurrencyKey(JobRequest request, Object event, RoutingTarget target, String key) {
		try {
			request.concurrencyKey(key);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Event " + event.getClass().getName() + " is externalized to target '"
					+ target + "', whose key gives no valid pgqueue concurrency key (" + ex.getMessage() + "). "
					+ "Make the key after '::' evaluate to at most " + JobRequest.MAX_NAME_LENGTH + " characters.", ex);
		}
	}

}
