package dev.pgqueue;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A paused queue, seen by two pollers that stand for two instances (each with its own view of the
 * pause table, as each application has): neither claims its jobs for as long as the pause lasts,
 * from a second after it on, while jobs are still enqueued; after the resume they drain.
 */
class QueuePauseTests {

	/** How soon after a pause no instance claims any more, with or without notifications. */
	private static final Duration WITHIN = Duration.ofSeconds(1);

	private static final Duration PAUSE_WINDOW = Duration.ofSeconds(3);

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("queue_pause");
		for (QueueMode mode : QueueMode.values()) {
			String queue = queue(mode);
			fixture.configure(QueueSettings.defaults(queue).withMode(mode).withPollInterval(Duration.ofMillis(100)));
			fixture.handle("work." + queue, queue, (job) -> {
			});
		}
		fixture.configure(QueueSettings.defaults("backlog").withMode(QueueMode.LEASED).withConcurrency(4)
			.withBatchSize(10).withPollInterval(Duration.ofMillis(100)));
		fixture.handle("work.backlog", "backlog", (job) -> Thread.sleep(5));
		fixture.configure(QueueSettings.defaults("notified").withPollInterval(Duration.ofMillis(100)));
		fixture.handle("work.notified", "notified", (job) -> {
		});
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	private static String queue(QueueMode mode) {
		return mode.name().toLowerCase(Locale.ROOT);
	}

	/**
	 * Without notifications, each instance reads the pause table at most a second apart: that alone
	 * stops every instance's claims within a second.
	 */
	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void noInstanceClaimsAPausedQueueWhileEnqueuesGoOn(QueueMode mode) {
		String queue = queue(mode);
		List<JobPoller> pollers = List.of(fixture.poller(queue, new QueuePauses(fixture.adminRepository(false))),
				fixture.poller(queue, new QueuePauses(fixture.adminRepository(false))));
		JobAdmin admin = fixture.admin();
		pollers.forEach(JobPoller::start);
		try (Producer producer = new Producer("work." + queue)) {
			await().atMost(Duration.ofSeconds(10)).until(() -> completed(queue) > 10);

			Instant pausedAt = pause(admin, queue);
			await().during(PAUSE_WINDOW)
				.atMost(PAUSE_WINDOW.plusSeconds(2))
				.until(() -> noClaimAfter(queue, pausedAt.plus(WITHIN)));
			assertThat(enqueuedAfter(queue, pausedAt)).as("jobs enqueued into the paused queue").isPositive();
			assertThat(waiting(queue)).as("jobs waiting in the paused queue").isPositive();

			admin.resume(queue);
			producer.close();
			await().atMost(Duration.ofSeconds(10)).until(() -> waiting(queue) == 0);
		}
		finally {
			pollers.forEach(JobPoller::stop);
		}
	}

	/**
	 * With a backlog, leased workers claim their next jobs themselves instead of waiting for the poll
	 * thread; they too stop at a pause.
	 */
	@Test
	void workersOfAPausedLeasedQueueStopClaimingForThemselves() {
		String queue = "backlog";
		List<JobRequest> backlog = new java.util.ArrayList<>();
		for (int i = 0; i < 3_000; i++) {
			backlog.add(JobRequest.of("work.backlog", i));
		}
		fixture.client().enqueueAll(backlog);
		JobPoller poller = fixture.poller(queue, new QueuePauses(fixture.adminRepository(false)));
		JobAdmin admin = fixture.admin();
		poller.start();
		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> completed(queue) > 100);

			Instant pausedAt = pause(admin, queue);
			await().during(PAUSE_WINDOW)
				.atMost(PAUSE_WINDOW.plusSeconds(2))
				.until(() -> noClaimAfter(queue, pausedAt.plus(WITHIN)));
			assertThat(waiting(queue)).as("jobs waiting in the paused queue").isPositive();
			admin.resume(queue);
			await().atMost(Duration.ofSeconds(30)).until(() -> waiting(queue) == 0);
		}
		finally {
			poller.stop();
		}
	}

	/**
	 * With notifications, a pause and a resume reach every instance at once: here the instances would
	 * not read the pause table again for ten minutes unless told.
	 */
	@Test
	void pausesAndResumesReachEveryInstanceThroughNotifications() {
		String queue = "notified";
		// The operator's application, which only administers, announces its pauses and resumes.
		QueueEngine operator = fixture.engineBuilder()
			.settings(fixture.engineSettings().withNotifications(true, EngineSettings.DEFAULT_NOTIFY_INTERVAL))
			.adminCaller(() -> "operator")
			.processing(false)
			.build();
		JobAdmin admin = operator.admin();
		List<QueueEngine> instances = List.of(notifiedInstance(queue), notifiedInstance(queue));
		instances.forEach(QueueEngine::start);
		try (Producer producer = new Producer("work." + queue)) {
			await().atMost(Duration.ofSeconds(10)).until(() -> completed(queue) > 10);

			Instant pausedAt = pause(admin, queue);
			await().during(PAUSE_WINDOW)
				.atMost(PAUSE_WINDOW.plusSeconds(2))
				.until(() -> noClaimAfter(queue, pausedAt.plus(WITHIN)));
			assertThat(waiting(queue)).as("jobs waiting in the paused queue").isPositive();

			admin.resume(queue);
			await().atMost(Duration.ofSeconds(5)).until(() -> claimedAfter(queue, pausedAt.plus(PAUSE_WINDOW)));
			producer.close();
			await().atMost(Duration.ofSeconds(10)).until(() -> waiting(queue) == 0);
		}
		finally {
			instances.forEach(QueueEngine::close);
			operator.close();
		}
	}

	/**
	 * An instance that polls only the queue and listens to notifications, and would not read the
	 * pause table again for ten minutes unless told.
	 */
	private static QueueEngine notifiedInstance(String queue) {
		JobHandlerRegistry handlers = new JobHandlerRegistry();
		for (String kind : fixture.handlers().kindsOf(queue)) {
			handlers.register(fixture.handlers().find(kind));
		}
		return EngineInternals.sharing(fixture.engineBuilder()
			.settings(fixture.engineSettings().withNotifications(true, EngineSettings.DEFAULT_NOTIFY_INTERVAL))
			.queues(new QueueCatalog(QueueSettings.defaults(JobRequest.DEFAULT_QUEUE),
					List.of(fixture.catalog().settings(queue))))
			.handlers(handlers), null, new QueuePauses(fixture.adminRepository(true), Duration.ofMinutes(10)))
			.build();
	}

	/** Pauses the queue and returns when, on the database clock, the pause had committed. */
	private static Instant pause(JobAdmin admin, String queue) {
		assertThat(admin.pause(queue)).isTrue();
		return fixture.jdbc().queryForObject("SELECT clock_timestamp()", Timestamp.class).toInstant();
	}

	private static boolean noClaimAfter(String queue, Instant instant) {
		return !claimedAfter(queue, instant);
	}

	private static boolean claimedAfter(String queue, Instant instant) {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs()
				+ " WHERE queue = ? AND started_at > ?", Long.class, queue, Timestamp.from(instant)) > 0;
	}

	private static long completed(String queue) {
		return count(queue, "state = 'completed'");
	}

	private static long waiting(String queue) {
		return count(queue, "state IN ('available', 'running')");
	}

	private static long enqueuedAfter(String queue, Instant instant) {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs()
				+ " WHERE queue = ? AND created_at > ?", Long.class, queue, Timestamp.from(instant));
	}

	private static long count(String queue, String condition) {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE queue = ? AND "
				+ condition, Long.class, queue);
	}

	/** Enqueues a job of the kind every 10 ms until closed. */
	private static final class Producer implements AutoCloseable {

		private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();

		private final AtomicInteger enqueued = new AtomicInteger();

		Producer(String kind) {
			JobClient client = fixture.client();
			this.executor.scheduleAtFixedRate(() -> client.enqueue(kind, this.enqueued.incrementAndGet()), 0, 10,
					TimeUnit.MILLISECONDS);
		}

		@Override
		public void close() {
			this.executor.shutdownNow();
			try {
				this.executor.awaitTermination(5, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
