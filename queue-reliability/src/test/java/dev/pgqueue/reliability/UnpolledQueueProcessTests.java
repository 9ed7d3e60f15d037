package dev.pgqueue.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.maintenance.PollingHeartbeat;
import dev.pgqueue.engine.maintenance.StatsReader;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.schema.SchemaName;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Which queues are polled, as a producer in this JVM learns it from worker processes: a queue a
 * worker process polls takes jobs of any kind without a warning; once that worker died (SIGKILL,
 * nothing said at exit), its kind still enqueues quietly, as it would while the worker restarts,
 * while a kind nobody ever handled warns; the queue is listed with its waiting jobs until a new
 * worker polls it, and that worker runs the job enqueued while none did. Every party heartbeats
 * every 200 ms, so a queue counts as polled for 600 ms after its last poller's last heartbeat.
 */
class UnpolledQueueProcessTests {

	private static final Duration HEARTBEAT = Duration.ofMillis(200);

	private static final String WARNINGS = "dev.pgqueue.engine.UnpolledQueueWarnings";

	@Test
	void aProducerLearnsFromWorkerProcessesWhichQueuesArePolledAndWhichKindsAreHandled() throws Exception {
		ListAppender<ILoggingEvent> logs = new ListAppender<>();
		logs.start();
		((Logger) LoggerFactory.getLogger(WARNINGS)).addAppender(logs);
		try (Workload workload = Workload.create("unpolled");
				WorkerFleet fleet = new WorkerFleet("unpolled", workload, Scenarios.options(QueueMode.TRANSACTIONAL,
						Map.of("polling-heartbeat-ms", Long.toString(HEARTBEAT.toMillis()))));
				QueueEngine producer = QueueEngine.builder(workload.schema().dataSource())
					.settings(EngineSettings.defaults(SchemaName.of(workload.schemaName()))
						.withNotifications(false, EngineSettings.DEFAULT_NOTIFY_INTERVAL))
					.processing(false)
					.pollingHeartbeat(HEARTBEAT)
					.build()) {
			PollingHeartbeat polling = EngineInternals.of(producer).pollingHeartbeat();
			StatsReader stats = EngineInternals.of(producer).statsReader();
			JobClient client = producer.client();
			Worker first = fleet.start("w1").awaitReady();
			await().atMost(Duration.ofSeconds(30)).until(() -> polling.refresh().isPolled(WorkerProcess.QUEUE));

			client.enqueue(JobRequest.of("report.slwo", 1).queue(WorkerProcess.QUEUE));
			assertThat(messages(logs)).as("a worker process polls the queue").isEmpty();
			client.enqueue(JobRequest.of("report.slwo", 2).queue("nowhere"));
			assertThat(messages(logs)).singleElement()
				.satisfies((message) -> assertThat(message).contains("kind 'report.slwo' was enqueued into queue "
						+ "'nowhere', which no instance polls"));

			first.kill();
			await().atMost(Duration.ofSeconds(30)).until(() -> !polling.refresh().isPolled(WorkerProcess.QUEUE));
			UUID waiting = client.enqueue(JobRequest.of(WorkerProcess.KIND, Map.of("n", 1)).queue(WorkerProcess.QUEUE));
			assertThat(messages(logs)).as("the dead worker's kind was seen handled in its queue").hasSize(1);
			client.enqueue(JobRequest.of("report.never", 3).queue(WorkerProcess.QUEUE));
			assertThat(messages(logs)).hasSize(2)
				.last()
				.satisfies((message) -> assertThat(message).contains("kind 'report.never' was enqueued into queue '"
						+ WorkerProcess.QUEUE + "', which no instance polls, and no instance has been seen handling "
						+ "that kind"));
			stats.readStats();
			assertThat(stats.lastUnpolledQueues()).containsOnlyKeys(WorkerProcess.QUEUE, "nowhere");
			assertThat(stats.lastUnpolledQueues().get(WorkerProcess.QUEUE).available()).isEqualTo(3);

			fleet.start("w2").awaitReady();
			await().atMost(Duration.ofSeconds(30)).until(() -> polling.refresh().isPolled(WorkerProcess.QUEUE));
			stats.readStats();
			assertThat(stats.lastUnpolledQueues()).containsOnlyKeys("nowhere");
			await().atMost(Duration.ofSeconds(30))
				.until(() -> workload.jdbc().queryForObject("SELECT count(*) FROM ledger WHERE job_id = ?", Long.class,
						waiting) == 1);
		}
		finally {
			((Logger) LoggerFactory.getLogger(WARNINGS)).detachAppender(logs);
		}
	}

	private static List<String> messages(ListAppender<ILoggingEvent> logs) {
		List<ILoggingEvent> events;
		synchronized (logs) {
			events = new ArrayList<>(logs.list);
		}
		return events.stream().map(ILoggingEvent::getFormattedMessage).toList();
	}

}
