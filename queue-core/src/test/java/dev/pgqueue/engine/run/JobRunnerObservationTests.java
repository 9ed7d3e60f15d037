package dev.pgqueue.engine.run;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import dev.pgqueue.QueueFixture;
import dev.pgqueue.QueueMode;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.observation.JobLogContext;
import dev.pgqueue.observation.JobProcessingContext;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.test.TestTracing;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.settings.QueueSettings;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * One attempt as the listener's logs and traces see it: the job in the MDC while the listener runs
 * and nowhere after, one {@code pgqueue.process} observation with low-cardinality key values, in
 * whose scope the listener runs, continuing the trace stored with the job.
 */
class JobRunnerObservationTests {

	private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

	private static final String ENQUEUE_SPAN_ID = "00f067aa0ba902b7";

	private final JobHandlerRegistry handlers = new JobHandlerRegistry();

	private final TestObservationRegistry registry = TestObservationRegistry.create();

	@AfterEach
	void clearMdc() {
		MDC.clear();
	}

	@Test
	void putsTheJobInTheMdcWhileItsListenerRunsAndTakesItOutAfter() {
		AtomicReference<Map<String, String>> seen = new AtomicReference<>();
		this.handlers.register(QueueFixture.handler("email.send", "mail", (job) -> seen.set(MDC.getCopyOfContextMap())));
		ClaimedJob claimed = claimed("email.send", "mail", 2, Map.of());

		new JobRunner(this.handlers, QueueMetrics.NONE).runUnrecorded(claimed, QueueSettings.defaults("mail"));

		assertThat(seen.get()).containsEntry(JobLogContext.JOB_ID, claimed.job().id().toString())
			.containsEntry(JobLogContext.KIND, "email.send")
			.containsEntry(JobLogContext.QUEUE, "mail")
			.containsEntry(JobLogContext.ATTEMPT, "2");
		assertThat(MDC.getCopyOfContextMap()).as("the worker thread's MDC after the attempt").isNullOrEmpty();
	}

	@Test
	void takesTheJobOutOfTheMdcAfterItsListenerThrows() {
		MDC.put("request", "kept");
		this.handlers.register(QueueFixture.handler("email.send", "mail", (job) -> {
			throw new IllegalStateException("mail server down");
		}));

		new JobRunner(this.handlers, QueueMetrics.NONE).runUnrecorded(claimed("email.send", "mail", 1, Map.of()),
				QueueSettings.defaults("mail"));

		assertThat(MDC.getCopyOfContextMap()).containsExactly(Map.entry("request", "kept"));
	}

	@Test
	void observesEachAttemptWithItsQueueKindModeAndOutcome() {
		this.handlers.register(QueueFixture.handler("report.render", "reports", (job) -> {
		}));
		ClaimedJob claimed = claimed("report.render", "reports", 1, Map.of());

		runner().runUnrecorded(claimed, QueueSettings.defaults("reports").withMode(QueueMode.LEASED));

		assertThat(this.registry).hasNumberOfObservationsEqualTo(1)
			.hasObservationWithNameEqualTo("pgqueue.process")
			.that()
			.hasContextualNameEqualTo("process report.render")
			.hasBeenStarted()
			.hasBeenStopped()
			.doesNotHaveError()
			.hasLowCardinalityKeyValue("queue", "reports")
			.hasLowCardinalityKeyValue("kind", "report.render")
			.hasLowCardinalityKeyValue("mode", "leased")
			.hasLowCardinalityKeyValue("outcome", "completed")
			.hasHighCardinalityKeyValue("job.id", claimed.job().id().toString())
			.hasHighCardinalityKeyValue("job.attempt", "1")
			.satisfies((context) -> assertThat(context.getLowCardinalityKeyValues().stream().map(KeyValue::getKey))
				.as("low-cardinality keys").containsExactlyInAnyOrder("queue", "kind", "mode", "outcome"));
	}

	@Test
	void observesAFailedAttemptWithItsOutcomeAndError() {
		IllegalStateException failure = new IllegalStateException("mail server down");
		this.handlers.register(QueueFixture.handler("email.send", "mail", (job) -> {
			throw failure;
		}));

		runner().runUnrecorded(claimed("email.send", "mail", 1, Map.of()), QueueSettings.defaults("mail"));
		runner().runUnrecorded(claimed("email.send", "mail", 3, Map.of()), QueueSettings.defaults("mail"));

		assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo("pgqueue.process", 2)
			.hasAnObservation((observation) -> observation.hasLowCardinalityKeyValue("outcome", "retried")
				.hasLowCardinalityKeyValue("mode", "transactional")
				.hasError(failure))
			.hasAnObservation((observation) -> observation.hasLowCardinalityKeyValue("outcome", "failed")
				.hasHighCardinalityKeyValue("job.attempt", "3")
				.hasError(failure));
	}

	@Test
	void observesAnAttemptPastItsTimeLimitAsTheFailureItIs() {
		this.handlers.register(QueueFixture.handler("report.render", "reports", Duration.ofMillis(50), (job) -> {
			Thread.sleep(10_000);
		}));

		runner().runUnrecorded(claimed("report.render", "reports", 1, Map.of()), QueueSettings.defaults("reports"));

		assertThat(this.registry).hasObservationWithNameEqualTo("pgqueue.process")
			.that()
			.hasLowCardinalityKeyValue("outcome", "retried")
			.assertThatError()
			.isInstanceOf(dev.pgqueue.JobTimeoutException.class);
	}

	@Test
	void runsTheListenerInTheScopeOfItsObservation() {
		AtomicReference<Observation> current = new AtomicReference<>();
		this.handlers.register(QueueFixture.handler("email.send", "mail",
				(job) -> current.set(this.registry.getCurrentObservation())));
		ClaimedJob claimed = claimed("email.send", "mail", 1, Map.of());

		runner().runUnrecorded(claimed, QueueSettings.defaults("mail"));

		assertThat(current.get()).isNotNull();
		assertThat(current.get().getContext()).isInstanceOfSatisfying(JobProcessingContext.class,
				(context) -> assertThat(context.job()).isEqualTo(claimed.job()));
		assertThat(this.registry.getCurrentObservation()).as("after the attempt").isNull();
	}

	@Test
	void continuesTheTraceStoredWithTheJob() {
		AtomicReference<SpanData> inListener = new AtomicReference<>();
		AtomicReference<String> loggedTraceId = new AtomicReference<>();
		this.handlers.register(QueueFixture.handler("email.send", "mail", (job) -> {
			inListener.set(TestTracing.currentSpan());
			loggedTraceId.set(MDC.get("traceId"));
		}));
		ClaimedJob claimed = claimed("email.send", "mail", 1,
				Map.of("traceparent", "00-" + TRACE_ID + "-" + ENQUEUE_SPAN_ID + "-01"));

		try (TestTracing tracing = new TestTracing()) {
			new JobRunner(this.handlers, QueueMetrics.NONE, new QueueObservations(tracing.observationRegistry()))
				.runUnrecorded(claimed, QueueSettings.defaults("mail"));

			assertThat(tracing.finishedSpans()).singleElement().satisfies((span) -> {
				assertThat(span.getName()).isEqualTo("process email.send");
				assertThat(span.getKind()).isEqualTo(SpanKind.CONSUMER);
				assertThat(span.getTraceId()).isEqualTo(TRACE_ID);
				assertThat(span.getParentSpanId()).isEqualTo(ENQUEUE_SPAN_ID);
				assertThat(inListener.get().getSpanId()).as("the span in scope in the listener").isEqualTo(span.getSpanId());
			});
			assertThat(loggedTraceId.get()).as("traceId in the listener's MDC").isEqualTo(TRACE_ID);
		}
	}

	@Test
	void startsANewTraceForAJobEnqueuedWithoutOne() {
		this.handlers.register(QueueFixture.handler("email.send", "mail", (job) -> {
		}));

		try (TestTracing tracing = new TestTracing()) {
			new JobRunner(this.handlers, QueueMetrics.NONE, new QueueObservations(tracing.observationRegistry()))
				.runUnrecorded(claimed("email.send", "mail", 1, Map.of()), QueueSettings.defaults("mail"));

			assertThat(tracing.finishedSpans()).singleElement()
				.satisfies((span) -> assertThat(span.getParentSpanContext().isValid()).isFalse());
		}
	}

	private JobRunner runner() {
		return new JobRunner(this.handlers, QueueMetrics.NONE, new QueueObservations(this.registry));
	}

	private static ClaimedJob claimed(String kind, String queue, int attempt, Map<String, String> traceContext) {
		Instant now = Instant.now();
		return ClaimedJob.of(1, UUID.randomUUID(), kind, queue, attempt - 1, attempt, 3, 0, "{}", now, now, now,
				traceContext);
	}

}
