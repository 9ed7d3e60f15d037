package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import dev.pgqueue.Job;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobListener;
import dev.pgqueue.observation.DefaultEnqueueObservationConvention;
import dev.pgqueue.observation.EnqueueObservationConvention;
import dev.pgqueue.observation.JobLogContext;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.test.TestTracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration;
import org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration;
import org.springframework.boot.opentelemetry.autoconfigure.OpenTelemetrySdkAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link QueueObservationAutoConfiguration}: the application's observation registry (and
 * with it its tracer) sees every enqueue and attempt, unless turned off.
 */
@SuppressWarnings("try") // spans are put in scope for what runs inside, which never reads them
class QueueObservationAutoConfigurationTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final FreshSchema SCHEMA = FreshSchema.named("pgqueue_observations");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class, ObservationAutoConfiguration.class,
				QueueAutoConfiguration.class, QueueObservationAutoConfiguration.class))
		.withPropertyValues(SCHEMA.properties())
		.withPropertyValues("pgqueue.shutdown-timeout=5s", "pgqueue.queues.observed.poll-interval=100ms");

	@AfterAll
	static void dropSchema() {
		SCHEMA.drop();
	}

	@Test
	void backsOffWithoutAnObservationRegistry() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					JdbcTemplateAutoConfiguration.class, QueueAutoConfiguration.class,
					QueueObservationAutoConfiguration.class))
			.withPropertyValues(SCHEMA.properties())
			.withPropertyValues("pgqueue.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(QueueObservations.class));
	}

	@Test
	void observesNothingByDefaultInAnApplicationThatDoesNotTrace() {
		this.contextRunner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
			.withPropertyValues("pgqueue.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(QueueObservations.class));
	}

	@Test
	void observesEnqueuesAndAttemptsOnTheApplicationsRegistryWhenTurnedOn() {
		TestObservationRegistry registry = TestObservationRegistry.create();
		this.contextRunner.withBean(ObservationRegistry.class, () -> registry)
			.withPropertyValues("pgqueue.observations.enabled=true")
			.withUserConfiguration(ReportListener.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(QueueObservations.class);
				context.getBean(JobClient.class).enqueue("report.render", "monthly");
				await().atMost(TIMEOUT).untilAsserted(() -> assertThat(registry)
					.hasObservationWithNameEqualTo("pgqueue.process")
					.that()
					.hasBeenStopped()
					.hasLowCardinalityKeyValue("queue", "observed")
					.hasLowCardinalityKeyValue("outcome", "completed"));
				assertThat(registry).hasObservationWithNameEqualTo("pgqueue.enqueue")
					.that()
					.hasLowCardinalityKeyValue("kind", "report.render")
					.hasLowCardinalityKeyValue("mode", "transactional");
			});
	}

	@Test
	void runsTheListenerInTheTraceThatEnqueuedItsJobByDefaultInAnApplicationThatTraces() {
		try (TestTracing tracing = new TestTracing()) {
			this.contextRunner.withBean(ObservationRegistry.class, tracing::observationRegistry)
				.withBean(Tracer.class, tracing::tracer)
				.withUserConfiguration(ReportListener.class)
				.run((context) -> {
					ReportListener listener = context.getBean(ReportListener.class);
					Span request = tracing.tracer().nextSpan().name("request").start();
					try (Tracer.SpanInScope scope = tracing.tracer().withSpan(request)) {
						context.getBean(JobClient.class).enqueue("report.render", "monthly");
					}
					finally {
						request.end();
					}
					await().atMost(TIMEOUT).until(() -> listener.span.get() != null);
					assertThat(listener.span.get().getTraceId()).isEqualTo(request.context().traceId());
					assertThat(listener.mdc.get()).containsEntry("traceId", request.context().traceId())
						.containsEntry(JobLogContext.KIND, "report.render")
						.containsEntry(JobLogContext.QUEUE, "observed");
				});
		}
	}

	@Test
	void actuatorsMeterHandlerTimesEnqueuesAndAttemptsByTheirLowCardinalityKeyValues() {
		this.contextRunner
			.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
			.withPropertyValues("pgqueue.observations.enabled=true")
			.withUserConfiguration(ReportListener.class)
			.run((context) -> {
				context.getBean(JobClient.class).enqueue("report.render", "monthly");
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				await().atMost(TIMEOUT)
					.untilAsserted(() -> assertThat(meters.find("pgqueue.process")
						.tags("queue", "observed", "kind", "report.render", "mode", "transactional", "outcome", "completed")
						.timer()).isNotNull());
				assertThat(meters.get("pgqueue.enqueue")
					.tags("queue", "observed", "kind", "report.render", "mode", "transactional")
					.timer()
					.count()).isOne();
			});
	}

	@Test
	void springBootsObservationPropertiesTurnThemOff() {
		this.contextRunner
			.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
			.withPropertyValues("pgqueue.enabled=false", "pgqueue.observations.enabled=true",
					"management.observations.enable.pgqueue=false")
			.run((context) -> {
				context.getBean(JobClient.class).enqueue("report.render", "monthly");
				assertThat(context.getBean(MeterRegistry.class).find("pgqueue.enqueue").timer()).isNull();
			});
	}

	@Test
	void anEnqueueConventionBeanReplacesTheDefault() {
		TestObservationRegistry registry = TestObservationRegistry.create();
		this.contextRunner.withBean(ObservationRegistry.class, () -> registry)
			.withPropertyValues("pgqueue.enabled=false", "pgqueue.observations.enabled=true")
			.withBean(EnqueueObservationConvention.class, () -> new DefaultEnqueueObservationConvention() {
				@Override
				public String getName() {
					return "shop.jobs.enqueue";
				}
			})
			.run((context) -> {
				context.getBean(JobClient.class).enqueue("report.render", "monthly");
				assertThat(registry).hasObservationWithNameEqualTo("shop.jobs.enqueue")
					.that()
					.hasLowCardinalityKeyValue("kind", "report.render");
			});
	}

	@Test
	void turnedOffByPropertyInAnApplicationThatTraces() {
		TestObservationRegistry registry = TestObservationRegistry.create();
		this.contextRunner.withBean(ObservationRegistry.class, () -> registry)
			.withBean(Tracer.class, () -> Tracer.NOOP)
			.withPropertyValues("pgqueue.enabled=false", "pgqueue.observations.enabled=false")
			.run((context) -> {
				assertThat(context).doesNotHaveBean(QueueObservations.class);
				context.getBean(JobClient.class).enqueue("report.render", "monthly");
				assertThat(registry).doesNotHaveAnyObservation();
			});
	}

	/**
	 * Spring Boot's own OpenTelemetry tracing, as an application gets it from its starter: its
	 * propagating handlers write the enqueue's {@code traceparent} and continue it in the listener.
	 */
	@Test
	void continuesTracesWithSpringBootsOpenTelemetryTracing() {
		this.contextRunner
			.withConfiguration(AutoConfigurations.of(OpenTelemetrySdkAutoConfiguration.class,
					OpenTelemetryTracingAutoConfiguration.class, MicrometerTracingAutoConfiguration.class))
			.withPropertyValues("management.tracing.sampling.probability=1.0")
			.withUserConfiguration(ReportListener.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(QueueObservations.class);
				Tracer tracer = context.getBean(Tracer.class);
				ReportListener listener = context.getBean(ReportListener.class);
				Span request = tracer.nextSpan().name("request").start();
				java.util.UUID id;
				try (Tracer.SpanInScope scope = tracer.withSpan(request)) {
					id = context.getBean(JobClient.class).enqueue("report.render", "monthly");
				}
				finally {
					request.end();
				}
				await().atMost(TIMEOUT).until(() -> listener.traceId.get() != null);
				assertThat(listener.traceId.get()).isEqualTo(request.context().traceId());
				assertThat(context.getBean(JdbcTemplate.class)
					.queryForObject("SELECT trace_context->>'traceparent' FROM " + SCHEMA.name() + ".pgqueue_all_jobs "
							+ "WHERE public_id = ?", String.class, id))
					.startsWith("00-" + request.context().traceId() + "-");
			});
	}

	static class ReportListener {

		final AtomicReference<SpanData> span = new AtomicReference<>();

		final AtomicReference<Map<String, String>> mdc = new AtomicReference<>();

		final AtomicReference<String> traceId = new AtomicReference<>();

		@JobListener(kind = "report.render", queue = "observed")
		void render(String period, Job job) {
			this.mdc.set(MDC.getCopyOfContextMap());
			this.span.set(TestTracing.currentSpan());
			io.opentelemetry.api.trace.SpanContext current = io.opentelemetry.api.trace.Span.current().getSpanContext();
			this.traceId.set(current.isValid() ? current.getTraceId() : "none");
		}

	}

}
