package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.observation.QueueObservations;
import dev.pgqueue.test.TestTracing;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scenario 21: two worker processes, each with a tracer of its own, poll a queue; this JVM enqueues
 * jobs one by one inside a trace. Every job's listener runs in a span of the enqueuing trace whose parent is the
 * span of its enqueue, with that trace id and the job's id in its MDC: the W3C context travelled
 * through the jobs table alone.
 */
@SuppressWarnings("try") // spans are put in scope for what runs inside, which never reads them
class TraceContinuationTests {

	private static final int JOBS = 40;

	@ParameterizedTest(name = "{0}")
	@EnumSource(QueueMode.class)
	void workerProcessesRunEachJobInTheTraceThatEnqueuedIt(QueueMode mode) throws Exception {
		String scenario = "traces_" + Scenarios.name(mode);
		try (Workload workload = Workload.create(scenario);
				TestTracing tracing = new TestTracing();
				WorkerFleet fleet = new WorkerFleet(scenario, workload, Scenarios.options(mode, Map.of("tracing", "true")))) {
			workload.jdbc().execute(WorkerProcess.TRACES_DDL);
			JobClient client = workload.client(new QueueObservations(tracing.observationRegistry()));
			List<Worker> workers = fleet.startReady("w", 2);
			long start = System.nanoTime();
			Span request = tracing.tracer().nextSpan().name("request").start();
			List<UUID> ids = new ArrayList<>();
			try (Tracer.SpanInScope scope = tracing.tracer().withSpan(request)) {
				for (int n = 0; n < JOBS; n++) {
					ids.add(client.enqueue(JobRequest.of(WorkerProcess.KIND, Map.of("n", n)).queue(WorkerProcess.QUEUE)));
				}
			}
			finally {
				request.end();
			}
			Map<String, SpanData> enqueues = tracing.finishedSpans("enqueue " + WorkerProcess.KIND)
				.stream()
				.collect(Collectors.toMap((span) -> span.getAttributes().get(AttributeKey.stringKey("job.id")),
						Function.identity()));
			assertThat(enqueues).as("one enqueue span per job").hasSize(JOBS);
			workload.awaitDrained(Duration.ofMinutes(2));
			Duration took = Duration.ofNanos(System.nanoTime() - start);

			List<Map<String, Object>> runs = workload.jdbc().queryForList("SELECT * FROM traces");
			Set<Long> workerPids = workers.stream().map(Worker::pid).collect(Collectors.toSet());
			assertThat(runs).extracting((run) -> run.get("job_id")).containsAll(ids);
			assertThat(runs).allSatisfy((run) -> {
				String jobId = run.get("job_id").toString();
				SpanData enqueue = enqueues.get(jobId);
				assertThat((Long) run.get("worker_pid")).as("run by a worker process").isIn(workerPids)
					.isNotEqualTo(ProcessHandle.current().pid());
				assertThat(run.get("trace_id")).as("trace of job %s", jobId).isEqualTo(request.context().traceId());
				assertThat(run.get("parent_span_id")).as("parent of job %s's span", jobId).isEqualTo(enqueue.getSpanId());
				assertThat(run.get("span_id")).isNotEqualTo(enqueue.getSpanId());
				assertThat(run.get("mdc_trace_id")).as("traceId in the listener's MDC").isEqualTo(run.get("trace_id"));
				assertThat(run.get("mdc_job_id")).as("job id in the listener's MDC").isEqualTo(jobId);
			});
			Map<Object, Long> perWorker = runs.stream()
				.collect(Collectors.groupingBy((run) -> run.get("worker_pid"), Collectors.counting()));
			Workload.Tally tally = workload.tally(fleet.log());
			Figures.print("21. trace continued in worker processes, " + Scenarios.name(mode), tally, took,
					runs.size() + " runs in the enqueuing trace, each the child of its enqueue span, with the trace id "
							+ "in the listener's MDC; runs per worker " + perWorker.values());
			Guarantees.assertHeld(mode, tally, JOBS);
		}
	}

}
