package dev.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.ConcurrencyLimits;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.test.TestTracing;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The enqueuing trace travels with the job through the jobs table: an enqueue inside a trace stores
 * its span's W3C {@code traceparent} in {@code trace_context}, and the job's processing, claimed by
 * any mode's claim, is a span of that trace whose parent is the enqueue's span.
 */
@SuppressWarnings("try") // spans are put in scope for what runs inside, which never reads them
class TraceContextTests {

	private static QueueFixture fixture;

	private TestTracing tracing;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("trace_context");
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@BeforeEach
	void startTracing() {
		this.tracing = new TestTracing();
		fixture.observations(new QueueObservations(this.tracing.observationRegistry()));
	}

	@AfterEach
	void stopTracing() {
		fixture.observations(QueueObservations.NONE);
		this.tracing.close();
	}

	@Test
	void storesTheTraceparentOfTheEnqueueSpanWithTheJob() {
		Span request = this.tracing.tracer().nextSpan().name("request").start();
		UUID id;
		try (Tracer.SpanInScope scope = this.tracing.tracer().withSpan(request)) {
			id = fixture.client().enqueue("email.send", Map.of("to", "ada@example.com"));
		}
		finally {
			request.end();
		}

		SpanData enqueue = single("enqueue email.send");
		assertThat(enqueue.getKind()).isEqualTo(SpanKind.PRODUCER);
		assertThat(enqueue.getTraceId()).isEqualTo(request.context().traceId());
		assertThat(enqueue.getParentSpanId()).isEqualTo(request.context().spanId());
		assertThat(enqueue.getAttributes().get(AttributeKey.stringKey("queue"))).isEqualTo(JobRequest.DEFAULT_QUEUE);
		assertThat(enqueue.getAttributes().get(AttributeKey.stringKey("job.id"))).isEqualTo(id.toString());
		assertThat(traceparent(id)).isEqualTo(traceparentOf(enqueue));
	}

	@Test
	void storesNoTraceContextWithoutATracer() {
		UUID untraced;
		UUID observedOnly;
		fixture.observations(QueueObservations.NONE);
		untraced = fixture.client().enqueue("email.send", Map.of());
		fixture.observations(new QueueObservations(TestObservationRegistry.create()));
		observedOnly = fixture.client().enqueue("email.send", Map.of());

		assertThat(fixture.row(untraced).get("trace_context")).isNull();
		assertThat(fixture.row(observedOnly).get("trace_context")).as("observed without tracing").isNull();
	}

	@Test
	void jobsEnqueuedTogetherShareOneEnqueueSpan() {
		List<UUID> ids = fixture.client()
			.enqueueAll(List.of(JobRequest.of("email.send", 1).queue("mail"), JobRequest.of("email.send", 2).queue("bulk"),
					JobRequest.of("email.send", 3).queue("mail")));

		SpanData enqueue = single("enqueue email.send");
		assertThat(enqueue.getAttributes().get(AttributeKey.stringKey("queue"))).isEqualTo("several");
		assertThat(enqueue.getAttributes().get(AttributeKey.stringKey("job.count"))).isEqualTo("3");
		assertThat(ids).allSatisfy((id) -> assertThat(traceparent(id)).isEqualTo(traceparentOf(enqueue)));
	}

	@Test
	void observesAnEnqueueWithItsQueueKindAndMode() {
		TestObservationRegistry registry = TestObservationRegistry.create();
		fixture.configure(QueueSettings.defaults("reports").withMode(QueueMode.LEASED));
		fixture.observations(new QueueObservations(registry));

		UUID id = fixture.client().enqueue(JobRequest.of("report.render", 1).queue("reports"));
		fixture.client().enqueueAll(List.of(JobRequest.of("report.render", 1).queue("reports"),
				JobRequest.of("report.archive", 2).queue("reports")));

		assertThat(registry).hasNumberOfObservationsWithNameEqualTo("pgqueue.enqueue", 2)
			.hasAnObservation((observation) -> observation.hasContextualNameEqualTo("enqueue report.render")
				.hasLowCardinalityKeyValue("queue", "reports")
				.hasLowCardinalityKeyValue("kind", "report.render")
				.hasLowCardinalityKeyValue("mode", "leased")
				.hasHighCardinalityKeyValue("job.id", id.toString())
				.hasHighCardinalityKeyValue("job.count", "1")
				.doesNotHaveLowCardinalityKeyValueWithKey("outcome"))
			.hasAnObservation((observation) -> observation.hasContextualNameEqualTo("enqueue several")
				.hasLowCardinalityKeyValue("queue", "reports")
				.hasLowCardinalityKeyValue("kind", "several")
				.hasLowCardinalityKeyValue("mode", "leased")
				.hasHighCardinalityKeyValue("job.count", "2")
				.doesNotHaveHighCardinalityKeyValueWithKey("job.id"));
	}

	/**
	 * Each mode claims with statements of its own (and limited queues with others again): each must
	 * hand the stored context to the job's processing.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "transactional", "leased", "transactional-limited", "leased-limited" })
	void runsTheJobInTheTraceThatEnqueuedIt(String variant) {
		String queue = "traced_" + variant.replace('-', '_');
		QueueSettings settings = QueueSettings.defaults(queue)
			.withMode(variant.startsWith("leased") ? QueueMode.LEASED : QueueMode.TRANSACTIONAL)
			.withPollInterval(Duration.ofMillis(50));
		if (variant.endsWith("limited")) {
			settings = settings.withLimits(ConcurrencyLimits.of(queue, 0, false, 2));
		}
		fixture.configure(settings);
		AtomicReference<SpanData> inListener = new AtomicReference<>();
		fixture.handle(queue + ".job", queue, (job) -> inListener.set(TestTracing.currentSpan()));
		JobPoller poller = fixture.poller(queue);

		Span request = this.tracing.tracer().nextSpan().name("request").start();
		try (Tracer.SpanInScope scope = this.tracing.tracer().withSpan(request)) {
			fixture.client().enqueue(queue + ".job", Map.of());
		}
		finally {
			request.end();
		}
		poller.start();
		try {
			await().atMost(Duration.ofSeconds(30)).until(() -> !this.tracing.finishedSpans("process " + queue + ".job").isEmpty());
		}
		finally {
			poller.stop();
		}

		SpanData enqueue = single("enqueue " + queue + ".job");
		SpanData process = single("process " + queue + ".job");
		assertThat(process.getKind()).isEqualTo(SpanKind.CONSUMER);
		assertThat(process.getTraceId()).isEqualTo(request.context().traceId());
		assertThat(process.getParentSpanId()).isEqualTo(enqueue.getSpanId());
		assertThat(process.getAttributes().get(AttributeKey.stringKey("outcome"))).isEqualTo("completed");
		assertThat(inListener.get().getSpanId()).as("the span in scope in the listener").isEqualTo(process.getSpanId());
	}

	private SpanData single(String name) {
		List<SpanData> spans = this.tracing.finishedSpans(name);
		assertThat(spans).as("spans named '%s' among %s", name, this.tracing.finishedSpans()).hasSize(1);
		return spans.get(0);
	}

	/** The W3C header of a span: version, trace id, span id (the parent of what continues it), flags. */
	private static String traceparentOf(SpanData span) {
		return "00-" + span.getTraceId() + "-" + span.getSpanId() + "-" + span.getSpanContext().getTraceFlags().asHex();
	}

	private static String traceparent(UUID id) {
		return fixture.jdbc()
			.queryForObject("SELECT trace_context->>'traceparent' FROM " + fixture.allJobs() + " WHERE public_id = ?",
					String.class, id);
	}

}
