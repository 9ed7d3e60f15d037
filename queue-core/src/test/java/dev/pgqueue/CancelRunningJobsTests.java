package dev.pgqueue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.stream.Collectors;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.job.JobHandler;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.MicrometerQueueMetrics;
import dev.pgqueue.test.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A running job cancelled through the admin API stops within a second on the instance running it,
 * ends {@code cancelled} and is never retried: its database work rolled back in a transactional
 * queue, its worker's slot freed in a leased one. A cancel that races the job's end leaves the job in
 * exactly one state. One engine runs the jobs, with notifications on; another answers the cancel, as
 * an operator's instance would.
 */
class CancelRunningJobsTests {

	private static QueueFixture fixture;

	private static QueueEngine worker;

	private static QueueEngine operator;

	private static final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	/** Jobs whose listener has started, by id. */
	private static final Map<UUID, CountDownLatch> started = new ConcurrentHashMap<>();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("cancel");
		fixture.jdbc().execute("CREATE TABLE cancel_writes (job_id uuid)");
		fixture.metrics(new MicrometerQueueMetrics(registry, List.of("cancel_tx", "cancel_leased")));
		for (QueueMode mode : QueueMode.values()) {
			String queue = queue(mode);
			fixture.configure(QueueSettings.defaults(queue)
				.withMode(mode)
				.withConcurrency(2)
				.withBatchSize(1)
				.withPollInterval(Duration.ofMillis(50))
				.withMaxAttempts(5));
			// Writes, then blocks in a statement: only a cancelled statement or an interrupt ends it.
			fixture.handle("cancel.blocked." + mode, queue, (job) -> {
				fixture.jdbc().update("INSERT INTO cancel_writes VALUES (?)", job.id());
				started.computeIfAbsent(job.id(), (id) -> new CountDownLatch(1)).countDown();
				fixture.jdbc().execute("SELECT pg_sleep(60)");
			});
			// Busy without blocking, checking its context.
			fixture.handlers().register(cooperative("cancel.cooperative." + mode, queue));
			// Spins on its context and returns the moment the request shows: what the cancel's own
			// bookkeeping races.
			fixture.handlers().register(spinning("cancel.spin." + mode, queue));
			// A few milliseconds of work: what a cancel races.
			fixture.handle("cancel.race." + mode, queue, (job) -> {
				fixture.jdbc().update("INSERT INTO cancel_writes VALUES (?)", job.id());
				Thread.sleep(ThreadLocalRandom.current().nextInt(0, 15));
			});
		}
		EngineSettings settings = fixture.engineSettings().withNotifications(true, Duration.ZERO);
		worker = fixture.engineBuilder().settings(settings).build();
		worker.start();
		operator = fixture.engineBuilder().settings(settings).processing(false).adminCaller(() -> "test").build();
	}

	@AfterAll
	static void tearDown() {
		// A leased listener blocked in pg_sleep outlives its cancel (only its thread was interrupted):
		// end its statement rather than wait out the minute.
		fixture.jdbc().queryForList("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = "
				+ "current_database() AND query = 'SELECT pg_sleep(60)' AND pid <> pg_backend_pid()");
		worker.stop();
		fixture.close();
	}

	private static String queue(QueueMode mode) {
		return (mode == QueueMode.TRANSACTIONAL) ? "cancel_tx" : "cancel_leased";
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aRunningJobStopsWithinASecondEndsCancelledAndIsNeverRetried(QueueMode mode) throws Exception {
		UUID id = operator.client().enqueue("cancel.blocked." + mode, null);
		assertThat(started.computeIfAbsent(id, (k) -> new CountDownLatch(1)).await(30, TimeUnit.SECONDS)).isTrue();

		long asked = System.nanoTime();
		AdminResult result = operator.admin().cancel(id);
		assertThat(result.outcome()).isEqualTo(AdminResult.Outcome.CANCEL_REQUESTED);
		await().atMost(Duration.ofSeconds(5)).until(() -> operator.admin().find(id).orElseThrow().state() == JobState.CANCELLED);
		long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked);
		assertThat(tookMillis).as("from the request to the committed cancelled state").isLessThan(1500);

		JobDetails job = operator.admin().find(id).orElseThrow();
		assertThat(job.finishedAt()).isNotNull();
		assertThat(job.lastError()).contains("cancelled by test").contains("not retried");
		assertThat(operator.admin().attempts(id)).extracting(JobAttempt::outcome).containsExactly(JobAttempt.Outcome.CANCELLED);
		long writes = fixture.jdbc().queryForObject("SELECT count(*) FROM cancel_writes WHERE job_id = ?", Long.class, id);
		assertThat(writes).as("rolled back in a transactional queue; done in a leased one")
			.isEqualTo((mode == QueueMode.TRANSACTIONAL) ? 0 : 1);
		await().atMost(Duration.ofSeconds(5)).until(() -> counter("pgqueue.jobs.cancelled", mode) >= 1);
		// Its worker's slot is free: the next job runs at once.
		UUID next = operator.client().enqueue("cancel.race." + mode, null);
		await().atMost(Duration.ofSeconds(10)).until(() -> operator.admin().find(next).orElseThrow().state() == JobState.COMPLETED);
		// And the request leaves no row behind once the job ended.
		await().atMost(Duration.ofSeconds(5)).until(() -> fixture.jdbc().queryForObject(
				"SELECT count(*) FROM " + fixture.schema().name() + ".pgqueue_job_controls c JOIN " + fixture.allJobs()
						+ " j ON j.id = c.job_id WHERE j.public_id = ?", Long.class, id) == 0);
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aNotificationIsAHintOnlyAndCancelsNothingWithoutItsRequest(QueueMode mode) throws Exception {
		UUID id = operator.client().enqueue("cancel.blocked." + mode, null);
		assertThat(started.computeIfAbsent(id, (k) -> new CountDownLatch(1)).await(30, TimeUnit.SECONDS)).isTrue();
		long internalId = fixture.jdbc().queryForObject("SELECT id FROM " + fixture.allJobs() + " WHERE public_id = ?",
				Long.class, id);

		// NOTIFY needs no privilege: any role that can connect, here one granted nothing at all, can
		// announce a cancel nobody asked for.
		String stranger = "pgqueue_stranger_" + UUID.randomUUID().toString().substring(0, 8);
		fixture.jdbc().execute("CREATE ROLE " + stranger + " LOGIN PASSWORD 'stranger'");
		try {
			Properties credentials = new Properties();
			credentials.setProperty("user", stranger);
			credentials.setProperty("password", "stranger");
			try (Connection connection = DriverManager.getConnection(withoutCredentials(TestDatabase.get().jdbcUrl()),
					credentials); PreparedStatement notify = connection.prepareStatement("SELECT pg_notify(?, ?)")) {
				notify.setString(1, "pgqueue_control:" + fixture.schema().name());
				notify.setString(2, internalId + ":mallory");
				notify.execute();
				assertThat(connection.getMetaData().getUserName()).isEqualTo(stranger);
			}
		}
		finally {
			fixture.jdbc().execute("DROP ROLE " + stranger);
		}

		await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(3))
			.until(() -> operator.admin().find(id).orElseThrow().state() != JobState.CANCELLED);
		assertThat(operator.admin().attempts(id)).as("attempts cancelled").extracting(JobAttempt::outcome)
			.doesNotContain(JobAttempt.Outcome.CANCELLED);

		// The request itself still stops it, named after who made it.
		long asked = System.nanoTime();
		operator.admin().cancel(id);
		await().atMost(Duration.ofSeconds(5)).until(() -> operator.admin().find(id).orElseThrow().state() == JobState.CANCELLED);
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked)).as("from the request to the cancelled state")
			.isLessThan(1500);
		assertThat(operator.admin().find(id).orElseThrow().lastError()).contains("cancelled by test").doesNotContain("mallory");
	}

	@Test
	void aListenerThatChecksItsContextStopsCleanlyAndReportsProgress() throws Exception {
		UUID id = operator.client().enqueue("cancel.cooperative.LEASED", null);
		assertThat(started.computeIfAbsent(id, (k) -> new CountDownLatch(1)).await(30, TimeUnit.SECONDS)).isTrue();
		String progress = "SELECT c.progress_percent || ' ' || c.progress_message FROM " + fixture.schema().name()
				+ ".pgqueue_job_controls c JOIN " + fixture.allJobs() + " j ON j.id = c.job_id WHERE j.public_id = ?";
		await().atMost(Duration.ofSeconds(5))
			.until(() -> fixture.jdbc().queryForList(progress, String.class, id), (rows) -> !rows.isEmpty()
					&& rows.get(0).startsWith("10 "));

		assertThat(operator.admin().cancel(id).outcome()).isEqualTo(AdminResult.Outcome.CANCEL_REQUESTED);
		await().atMost(Duration.ofSeconds(5)).until(() -> operator.admin().find(id).orElseThrow().state() == JobState.CANCELLED);
		assertThat(operator.admin().find(id).orElseThrow().attempt()).isEqualTo(1);
	}

	/**
	 * A listener that returns as soon as it sees the request must not turn the cancel into a
	 * completion: the request shows to the listener only once the cancel has won over the attempt's end.
	 */
	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aListenerThatReturnsTheMomentItSeesTheRequestEndsCancelled(QueueMode mode) throws Exception {
		for (int i = 0; i < 12; i++) {
			UUID id = operator.client().enqueue("cancel.spin." + mode, null);
			assertThat(started.computeIfAbsent(id, (k) -> new CountDownLatch(1)).await(30, TimeUnit.SECONDS)).isTrue();
			assertThat(operator.admin().cancel(id).outcome()).isEqualTo(AdminResult.Outcome.CANCEL_REQUESTED);
			await().atMost(Duration.ofSeconds(10)).until(() -> operator.admin().find(id).orElseThrow().state().isFinished());
			assertThat(operator.admin().find(id).orElseThrow().state()).as("job %s, the %s cancelled", id, i + 1)
				.isEqualTo(JobState.CANCELLED);
			long writes = fixture.jdbc().queryForObject("SELECT count(*) FROM cancel_writes WHERE job_id = ?", Long.class, id);
			assertThat(writes).as("rolled back in a transactional queue; done in a leased one")
				.isEqualTo((mode == QueueMode.TRANSACTIONAL) ? 0 : 1);
		}
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aCancelThatRacesTheEndLeavesEachJobInExactlyOneState(QueueMode mode) {
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 150; i++) {
			requests.add(JobRequest.of("cancel.race." + mode, i));
		}
		List<UUID> ids = operator.client().enqueueAll(requests);
		Map<UUID, AdminResult.Outcome> answers = new ConcurrentHashMap<>();
		for (UUID id : ids) {
			answers.put(id, operator.admin().cancel(id).outcome());
			try {
				Thread.sleep(ThreadLocalRandom.current().nextInt(0, 4));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		await().atMost(Duration.ofSeconds(60)).until(() -> ids.stream()
			.allMatch((id) -> operator.admin().find(id).orElseThrow().state().isFinished()));

		int cancelled = 0;
		int completed = 0;
		for (UUID id : ids) {
			JobDetails job = operator.admin().find(id).orElseThrow();
			long writes = fixture.jdbc().queryForObject("SELECT count(*) FROM cancel_writes WHERE job_id = ?", Long.class, id);
			assertThat(job.state()).as("job %s", id).isIn(JobState.COMPLETED, JobState.CANCELLED);
			if (job.state() == JobState.COMPLETED) {
				completed++;
				assertThat(answers.get(id)).as("a completed job was not cancelled while waiting")
					.isNotEqualTo(AdminResult.Outcome.APPLIED);
				assertThat(writes).as("completed job %s wrote once", id).isEqualTo(1);
			}
			else {
				cancelled++;
				if (mode == QueueMode.TRANSACTIONAL) {
					assertThat(writes).as("cancelled job %s kept no write", id).isZero();
				}
				assertThat(writes).isLessThanOrEqualTo(1);
			}
		}
		assertThat(cancelled + completed).isEqualTo(ids.size());
		assertThat(cancelled).as("some cancels won").isPositive();
	}

	@Test
	void aCancelOfAFinishedOrUnknownJobAnswersWithItsState() {
		UUID id = operator.client().enqueue("cancel.race.LEASED", null);
		await().atMost(Duration.ofSeconds(10)).until(() -> operator.admin().find(id).orElseThrow().state() == JobState.COMPLETED);
		AdminResult finished = operator.admin().cancel(id);
		assertThat(finished.outcome()).isEqualTo(AdminResult.Outcome.NOT_ALLOWED);
		assertThat(finished.state()).isEqualTo(JobState.COMPLETED);
		assertThat(operator.admin().cancel(UUID.randomUUID()).outcome()).isEqualTo(AdminResult.Outcome.NOT_FOUND);
	}

	private static double counter(String name, QueueMode mode) {
		var found = registry.find(name).tag("queue", queue(mode)).counters();
		return found.stream().mapToDouble((c) -> c.count()).sum();
	}

	private static JobHandler spinning(String kind, String queue) {
		return withContext(kind, queue, "a listener spinning on its context", (job, context) -> {
			fixture.jdbc().update("INSERT INTO cancel_writes VALUES (?)", job.id());
			started.computeIfAbsent(job.id(), (id) -> new CountDownLatch(1)).countDown();
			long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			while (!context.isCancellationRequested() && System.nanoTime() < until) {
				Thread.onSpinWait();
			}
		});
	}

	private static JobHandler cooperative(String kind, String queue) {
		return withContext(kind, queue, "a cooperative listener", (job, context) -> {
			started.computeIfAbsent(job.id(), (id) -> new CountDownLatch(1)).countDown();
			long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			int step = 0;
			while (!context.isCancellationRequested() && System.nanoTime() < until) {
				// Work in small steps, none of which blocks in a way an interrupt would end.
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
				context.progress(10, "step " + step++);
			}
		});
	}

	/** A handler whose listener runs with its {@link JobContext} and returns nothing. */
	private static JobHandler withContext(String kind, String queue, String description,
			BiConsumer<Job, JobContext> body) {
		return new JobHandler() {

			@Override
			public String kind() {
				return kind;
			}

			@Override
			public String queue() {
				return queue;
			}

			@Override
			public void handle(Job job) {
				throw new IllegalStateException("runs with its context");
			}

			@Override
			public Returned handleForResult(Job job, JobContext context) {
				body.accept(job, context);
				return Returned.NOTHING;
			}

			@Override
			public String description() {
				return description;
			}

		};
	}

	/** The URL without its user and password, for a connection as another role. */
	private static String withoutCredentials(String url) {
		int query = url.indexOf('?');
		if (query < 0) {
			return url;
		}
		String kept = Arrays.stream(url.substring(query + 1).split("&"))
			.filter((parameter) -> !parameter.startsWith("user=") && !parameter.startsWith("password="))
			.collect(Collectors.joining("&"));
		return url.substring(0, query) + (kept.isEmpty() ? "" : "?" + kept);
	}

}
