package dev.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.maintenance.PollingHeartbeat;
import dev.pgqueue.engine.maintenance.StatsReader;
import dev.pgqueue.metrics.MicrometerQueueMetrics;
import dev.pgqueue.metrics.QueueStats;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Jobs that nobody will run are reported: an enqueue of a kind never seen handled, into a queue no
 * live instance polls, warns once; the stats reader lists queues with waiting jobs and no poller
 * anywhere, for health and a gauge. The other instances are engines with pools of their own, as
 * other JVMs would be, all heartbeating every 200 ms (a poller's queue counts as polled for 600 ms
 * after its last heartbeat).
 */
class UnpolledQueueTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final Duration HEARTBEAT = Duration.ofMillis(200);

	private static final String WARNINGS = "dev.pgqueue.engine.UnpolledQueueWarnings";

	private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final List<AutoCloseable> closing = new ArrayList<>();

	private QueueFixture fixture;

	private QueueEngine producer;

	@BeforeEach
	void setUp() {
		this.fixture = QueueFixture.create("unpolled");
		this.logs.start();
		((Logger) LoggerFactory.getLogger(WARNINGS)).addAppender(this.logs);
		((Logger) LoggerFactory.getLogger(StatsReader.class)).addAppender(this.logs);
		// An application that only enqueues: it polls nothing and knows no listener.
		this.producer = this.fixture.engineBuilder()
			.handlers(new JobHandlerRegistry())
			.processing(false)
			.pollingHeartbeat(HEARTBEAT)
			.metrics(new MicrometerQueueMetrics(this.registry, List.of()))
			.build();
		this.closing.add(this.producer);
	}

	@AfterEach
	void tearDown() throws Exception {
		for (int i = this.closing.size() - 1; i >= 0; i--) {
			this.closing.get(i).close();
		}
		((Logger) LoggerFactory.getLogger(WARNINGS)).detachAppender(this.logs);
		((Logger) LoggerFactory.getLogger(StatsReader.class)).detachAppender(this.logs);
		this.fixture.close();
	}

	@Test
	void warnsOnceWhenAKindNobodyHandlesGoesToAQueueNobodyPollsAndStillEnqueuesIt() {
		producersHeartbeat().refresh();
		JobClient client = this.producer.client();

		UUID first = client.enqueue("report.slwo", Map.of("month", "2026-10"));
		UUID second = client.enqueue("report.slwo", Map.of("month", "2026-11"));
		client.enqueueAll(List.of(JobRequest.of("report.slwo", Map.of("month", "2026-12"))));

		assertThat(warnings()).singleElement()
			.satisfies((message) -> assertThat(message).contains("A job of kind 'report.slwo' was enqueued into queue "
					+ "'default' (the request named no queue, and no listener in this application handles the kind), "
					+ "which no instance polls, and no instance has been seen handling that kind")
				.contains("Add a @JobListener for kind 'report.slwo'", "poll queue 'default'",
						"logged once per kind and queue"));
		assertThat(this.fixture.row(first)).containsEntry("state", "available").containsEntry("queue", "default");
		assertThat(this.fixture.row(second)).containsEntry("state", "available");
	}

	@Test
	void staysQuietForAKindNobodyHandlesInAQueueAnotherInstancePolls() throws Exception {
		worker("reports", "report.monthly");
		await().atMost(WAIT).until(() -> producersHeartbeat().refresh().isPolled("reports"));
		JobClient client = this.producer.client();

		client.enqueue(JobRequest.of("report.slwo", 1).queue("reports"));
		assertThat(warnings()).as("the queue has a live poller elsewhere").isEmpty();

		client.enqueue(JobRequest.of("report.slwo", 2).queue("nowhere"));
		assertThat(warnings()).singleElement()
			.satisfies((message) -> assertThat(message).contains("kind 'report.slwo' was enqueued into queue 'nowhere', "
					+ "which no instance polls"));
	}

	@Test
	void namesTheQueueWhereAnotherInstanceHandlesTheKind() throws Exception {
		worker("reports", "report.monthly");
		await().atMost(WAIT).until(() -> producersHeartbeat().refresh().isPolled("reports"));

		// No listener here, no queue named: the job goes to 'default', which nobody polls.
		UUID id = this.producer.client().enqueue("report.monthly", Map.of("month", "2026-10"));

		assertThat(this.fixture.row(id)).containsEntry("queue", "default");
		assertThat(warnings()).singleElement()
			.satisfies((message) -> assertThat(message).contains("A job of kind 'report.monthly' was enqueued into queue "
					+ "'default' (the request named no queue, and no listener in this application handles the kind), "
					+ "which no instance polls; that kind is handled in queue 'reports'")
				.contains("enqueue it into queue 'reports' (JobRequest.queue)",
						"or add a @JobListener for kind 'report.monthly' in queue 'default'"));
	}

	@Test
	void staysQuietForAKindSeenHandledWhileTheInstancesPollingItsQueueAreAway() throws Exception {
		QueueEngine worker = worker("reports", "report.monthly");
		await().atMost(WAIT).until(() -> producersHeartbeat().refresh().isPolled("reports"));
		worker.close();
		await().atMost(WAIT).until(() -> !producersHeartbeat().refresh().isPolled("reports"));
		JobClient client = this.producer.client();

		client.enqueue(JobRequest.of("report.monthly", 1).queue("reports"));
		assertThat(warnings()).as("a worker of that kind may be restarting").isEmpty();

		client.enqueue(JobRequest.of("report.yearly", 1).queue("reports"));
		assertThat(warnings()).singleElement()
			.satisfies((message) -> assertThat(message).contains("kind 'report.yearly' was enqueued into queue 'reports', "
					+ "which no instance polls, and no instance has been seen handling that kind"));
	}

	@Test
	void listsWaitingJobsOfAQueueNobodyPollsUntilAnInstancePollsIt() throws Exception {
		worker("reports", "report.monthly");
		await().atMost(WAIT).until(() -> producersHeartbeat().refresh().isPolled("reports"));
		JobClient client = this.producer.client();
		client.enqueue(JobRequest.of("report.slwo", 1).queue("nowhere").runAt(Instant.now().minusSeconds(120)));
		client.enqueue(JobRequest.of("report.slwo", 2).queue("nowhere").delay(Duration.ofHours(1)));
		// A kind the worker does not handle, in the queue it polls: waiting, but the queue is polled.
		client.enqueue(JobRequest.of("report.slwo", 3).queue("reports"));
		StatsReader stats = EngineInternals.of(this.producer).statsReader();

		stats.readStats();

		assertThat(stats.lastUnpolledQueues()).containsOnlyKeys("nowhere");
		QueueStats nowhere = stats.lastUnpolledQueues().get("nowhere");
		assertThat(nowhere.available()).isEqualTo(1);
		assertThat(nowhere.scheduled()).isEqualTo(1);
		assertThat(nowhere.oldestAvailableAge()).isGreaterThanOrEqualTo(Duration.ofSeconds(100));
		assertThat(gauge("nowhere")).isEqualTo(2);
		assertThat(gauge("reports")).isZero();
		assertThat(statsWarnings()).anySatisfy((message) -> assertThat(message).startsWith("1 due jobs in queue "
				+ "'nowhere' have waited up to ")
			.contains("no instance polls that queue: nobody runs them until one does",
					"Start an instance with a @JobListener in queue 'nowhere'"));

		worker("nowhere", "report.slwo");
		await().atMost(WAIT).until(() -> producersHeartbeat().refresh().isPolled("nowhere"));
		stats.readStats();

		assertThat(stats.lastUnpolledQueues()).isEmpty();
		assertThat(gauge("nowhere")).isZero();
	}

	/**
	 * Starts another instance, with a pool of its own, whose one listener handles {@code kind} in
	 * {@code queue} (and leaves every job waiting, so that the queue's depth stays as the test made it).
	 */
	/** The producer's record of which queues any instance polls. */
	private PollingHeartbeat producersHeartbeat() {
		return EngineInternals.of(this.producer).pollingHeartbeat();
	}

	private QueueEngine worker(String queue, String kind) {
		HikariDataSource pool = this.fixture.schema().newPool(4);
		this.closing.add(pool);
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		handlers.register(QueueFixture.handler(kind, queue, (job) -> {
			throw new IllegalStateException("not run in this test");
		}));
		QueueEngine worker = this.fixture.engineBuilder(pool)
			.handlers(handlers)
			.pollingHeartbeat(HEARTBEAT)
			.build();
		this.closing.add(worker);
		worker.admin().pause(queue);
		worker.start();
		return worker;
	}

	/** What was logged at enqueue about jobs nobody will run. */
	private List<String> warnings() {
		return messagesOf(WARNINGS);
	}

	/** What the stats readers (the producer's and the workers') logged. */
	private List<String> statsWarnings() {
		return messagesOf(StatsReader.class.getName());
	}

	private List<String> messagesOf(String logger) {
		List<ILoggingEvent> events;
		// The workers' threads append too; the appender appends under its own lock.
		synchronized (this.logs) {
			events = new ArrayList<>(this.logs.list);
		}
		return events.stream()
			.filter((event) -> event.getLoggerName().equals(logger))
			.map(ILoggingEvent::getFormattedMessage)
			.toList();
	}

	private double gauge(String queue) {
		return this.registry.get("pgqueue.queue.unpolled.jobs").tag("queue", queue).gauge().value();
	}

}
