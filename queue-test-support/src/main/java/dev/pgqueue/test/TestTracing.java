package dev.pgqueue.test;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.EventPublishingContextWrapper;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.micrometer.tracing.otel.bridge.Slf4JEventListener;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.ContextStorage;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;

/**
 * A real tracer for tests, wired as Spring Boot wires OpenTelemetry through Micrometer Tracing: an
 * {@link ObservationRegistry} whose handlers make spans, write W3C {@code traceparent} headers into
 * a sender's carrier and read them from a receiver's, and put {@code traceId} and {@code spanId} in
 * the MDC while a span is in scope. Every sampled span is kept here once it ends.
 */
public final class TestTracing implements AutoCloseable {

	private static final Slf4JEventListener MDC = new Slf4JEventListener();

	static {
		// As Spring Boot does it: OpenTelemetry's context storage is global, and tells the MDC of every
		// scope it opens and closes. It takes wrappers only before its first use.
		ContextStorage.addWrapper(new EventPublishingContextWrapper(MDC::onEvent));
	}

	private final List<SpanData> finished = new CopyOnWriteArrayList<>();

	private final SdkTracerProvider provider;

	private final OtelTracer tracer;

	private final ObservationRegistry registry = ObservationRegistry.create();

	public TestTracing() {
		this.provider = SdkTracerProvider.builder()
			.addSpanProcessor(SimpleSpanProcessor.create(new Collector(this.finished)))
			.build();
		io.opentelemetry.api.trace.Tracer otelTracer = this.provider.get("dev.pgqueue.test");
		OtelCurrentTraceContext current = new OtelCurrentTraceContext();
		this.tracer = new OtelTracer(otelTracer, current, MDC::onEvent,
				new OtelBaggageManager(current, List.of(), List.of()));
		OtelPropagator propagator = new OtelPropagator(
				ContextPropagators.create(W3CTraceContextPropagator.getInstance()), otelTracer);
		this.registry.observationConfig()
			.observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
					new PropagatingSenderTracingObservationHandler<>(this.tracer, propagator),
					new PropagatingReceiverTracingObservationHandler<>(this.tracer, propagator),
					new DefaultTracingObservationHandler(this.tracer)));
	}

	/** The registry to observe on. */
	public ObservationRegistry observationRegistry() {
		return this.registry;
	}

	/** The tracer behind the registry. */
	public Tracer tracer() {
		return this.tracer;
	}

	/** Every span that ended, in the order they ended. */
	public List<SpanData> finishedSpans() {
		return List.copyOf(this.finished);
	}

	/** The spans that ended with this name. */
	public List<SpanData> finishedSpans(String name) {
		return this.finished.stream().filter((span) -> span.getName().equals(name)).toList();
	}

	/** The span in scope on this thread as it is now (its ids, parent, name and attributes), or {@code null}. */
	public static SpanData currentSpan() {
		return (Span.current() instanceof ReadableSpan span) ? span.toSpanData() : null;
	}

	@Override
	public void close() {
		this.provider.close();
	}

	/** Keeps ended spans in memory. */
	private record Collector(List<SpanData> spans) implements SpanExporter {

		@Override
		public CompletableResultCode export(Collection<SpanData> spans) {
			this.spans.addAll(spans);
			return CompletableResultCode.ofSuccess();
		}

		@Override
		public CompletableResultCode flush() {
			return CompletableResultCode.ofSuccess();
		}

		@Override
		public CompletableResultCode shutdown() {
			return CompletableResultCode.ofSuccess();
		}

	}

}
