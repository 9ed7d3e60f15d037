package dev.pgqueue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Job lifecycle events reach the application only once the state change they tell of has committed
 * (checked from a connection of its own), and never for a rolled-back enqueue; interceptors run
 * around each attempt in their order, see its failures, and work inside a transactional attempt's
 * transaction. Both modes, real pollers, committed rows.
 */
class JobEventsAndInterceptorsTests {

	private static QueueFixture fixture;

	private static QueueFixture.Maintenance maintenance;

	/** Every event, with the job's state as a connection of its own saw it when the event arrived. */
	private static final List<Seen> seen = new CopyOnWriteArrayList<>();

	/** What the interceptors saw, per job. */
	private static final Map<UUID, List<String>> trail = new ConcurrentHashMap<>();

	private static final AtomicInteger flakyRuns = new AtomicInteger();

	record Seen(JobEvent event, String stateSeen) {
	}

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("events");
		fixture.jdbc().execute("CREATE TABLE intercepted (job_id uuid)");
		fixture.events((event) -> {
			seen.add(new Seen(event, stateFromAnotherConnection(event.id())));
			if (event.kind().startsWith("events.listener-throws")) {
				throw new IllegalStateException("a broken event listener");
			}
		});
		fixture.interceptors(List.of((job, invocation) -> {
			note(job, "outer before");
			try {
				invocation.proceed();
				note(job, "outer after");
			}
			catch (Throwable failure) {
				note(job, "outer saw " + failure.getClass().getSimpleName());
				throw failure;
			}
		}, (job, invocation) -> {
			note(job, "inner before");
			fixture.jdbc().update("INSERT INTO intercepted VALUES (?)", job.id());
			if (job.kind().startsWith("events.skipped")) {
				return;
			}
			invocation.proceed();
			note(job, "inner after");
		}));
		for (QueueMode mode : QueueMode.values()) {
			String queue = queue(mode);
			fixture.configure(QueueSettings.defaults(queue)
				.withMode(mode)
				.withPollInterval(Duration.ofMillis(50))
				// One job per batch: no neighbour's failure runs a job twice, so each trail is exact.
				.withBatchSize(1)
				.withMaxBatchSize(1)
				.withMaxAttempts(2)
				.withRetry(new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(10), 1.0, 0.0)));
			fixture.handle("events.ok." + mode, queue, (job) -> note(job, "listener"));
			fixture.handle("events.listener-throws." + mode, queue, (job) -> note(job, "listener"));
			fixture.handle("events.skipped." + mode, queue, (job) -> note(job, "listener"));
			fixture.handle("events.fails." + mode, queue, (job) -> {
				note(job, "listener");
				throw new IllegalArgumentException("fails on attempt " + job.attempt());
			});
			fixture.handle("events.snoozes." + mode, queue, (job) -> {
				if (flakyRuns.incrementAndGet() % 2 == 1) {
					throw new JobSnoozedException(Duration.ZERO, "later");
				}
			});
		}
		// Retried and snoozed jobs are scheduled: the promoter makes them due again.
		maintenance = fixture.promotingEvery(Duration.ofMillis(50));
		maintenance.start();
	}

	@AfterAll
	static void tearDown() {
		maintenance.stop();
		fixture.close();
	}

	private static String queue(QueueMode mode) {
		return (mode == QueueMode.TRANSACTIONAL) ? "events_tx" : "events_leased";
	}

	private static void note(Job job, String what) {
		trail.computeIfAbsent(job.id(), (id) -> new CopyOnWriteArrayList<>()).add(what);
	}

	@Test
	void anEnqueueIsPublishedOnceItCommitsAndNeverWhenItRollsBack() {
		UUID[] ids = new UUID[2];
		fixture.transactionTemplate().executeWithoutResult((status) -> {
			ids[0] = fixture.client().enqueue("events.ok.TRANSACTIONAL", null);
			assertThat(events(ids[0])).as("nothing before the commit").isEmpty();
		});
		fixture.transactionTemplate().executeWithoutResult((status) -> {
			ids[1] = fixture.client().enqueue("events.ok.TRANSACTIONAL", null);
			status.setRollbackOnly();
		});
		UUID outside = fixture.client().enqueue("events.ok.TRANSACTIONAL", null);

		assertThat(seenOf(ids[0])).singleElement().satisfies((s) -> {
			assertThat(s.event()).isEqualTo(new JobEvent.Enqueued(ids[0], "events.ok.TRANSACTIONAL", "events_tx"));
			assertThat(s.stateSeen()).as("committed when published").isEqualTo("available");
		});
		assertThat(events(ids[1])).as("rolled back: never published").isEmpty();
		assertThat(seenOf(outside)).singleElement().extracting(Seen::stateSeen).isEqualTo("available");
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void outcomesArePublishedOnceTheyAreWrittenAndInterceptorsRunInOrder(QueueMode mode) {
		UUID ok = fixture.client().enqueue("events.ok." + mode, null);
		UUID fails = fixture.client().enqueue("events.fails." + mode, null);
		UUID snoozes = fixture.client().enqueue("events.snoozes." + mode, null);
		runUntilFinished(mode, List.of(ok, fails, snoozes));

		// In a transactional batch, a neighbour's failure runs the job again carefully: it starts twice,
		// and its outcome is published once.
		assertThat(outcomes(ok)).containsExactly("Enqueued", "Succeeded");
		assertThat(starts(ok)).isBetween(1L, (mode == QueueMode.TRANSACTIONAL) ? 2L : 1L);
		assertThat(last(ok).stateSeen()).as("completed when published").isEqualTo("completed");
		assertThat(trail.get(ok)).containsExactly("outer before", "inner before", "listener", "inner after",
				"outer after");

		assertThat(outcomes(fails)).containsExactly("Enqueued", "Retried", "Failed");
		JobEvent.Failed failed = (JobEvent.Failed) last(fails).event();
		assertThat(failed.attempt()).isEqualTo(2);
		assertThat(failed.error()).contains("fails on attempt 2");
		assertThat(seenOf(fails).stream().filter((s) -> s.event() instanceof JobEvent.Retried).findFirst().orElseThrow()
			.stateSeen()).as("scheduled again when published").isIn("scheduled", "available", "running");
		assertThat(last(fails).stateSeen()).isEqualTo("failed");
		assertThat(trail.get(fails)).containsExactly("outer before", "inner before", "listener",
				"outer saw IllegalArgumentException", "outer before", "inner before", "listener",
				"outer saw IllegalArgumentException");

		assertThat(outcomes(snoozes)).containsExactly("Enqueued", "Snoozed", "Succeeded");
		assertThat(last(snoozes).stateSeen()).isEqualTo("completed");
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void anInterceptorWorksInsideTheAttemptsTransactionAndMaySkipTheListener(QueueMode mode) {
		UUID fails = fixture.client().enqueue(JobRequest.of("events.fails." + mode, null).maxAttempts(1));
		UUID skipped = fixture.client().enqueue("events.skipped." + mode, null);
		runUntilFinished(mode, List.of(fails, skipped));

		long writesOfTheFailedJob = fixture.jdbc()
			.queryForObject("SELECT count(*) FROM intercepted WHERE job_id = ?", Long.class, fails);
		assertThat(writesOfTheFailedJob).as("rolled back with the attempt in a transactional queue")
			.isEqualTo((mode == QueueMode.TRANSACTIONAL) ? 0 : 1);
		assertThat(fixture.admin().find(skipped).orElseThrow().state()).isEqualTo(JobState.COMPLETED);
		assertThat(trail.get(skipped)).as("the listener never ran").containsExactly("outer before", "inner before",
				"outer after");
	}

	@Test
	void aListenerOfEventsThatThrowsChangesNothing() {
		UUID id = fixture.client().enqueue("events.listener-throws.LEASED", null);
		runUntilFinished(QueueMode.LEASED, List.of(id));
		assertThat(fixture.admin().find(id).orElseThrow().state()).isEqualTo(JobState.COMPLETED);
		assertThat(events(id)).extracting((e) -> e.getClass().getSimpleName())
			.containsExactly("Enqueued", "Started", "Succeeded");
	}

	@Test
	void aCancelIsPublishedOnceApplied() {
		UUID id = fixture.client().enqueue(JobRequest.of("events.ok.LEASED", null).delay(Duration.ofHours(1)));
		JobAdmin admin = fixture.engine().admin();
		assertThat(admin.cancel(id).applied()).isTrue();
		assertThat(admin.cancel(id).applied()).isFalse();
		assertThat(seenOf(id)).extracting((s) -> s.event().getClass().getSimpleName(), Seen::stateSeen)
			.containsExactly(org.assertj.core.groups.Tuple.tuple("Enqueued", "scheduled"),
					org.assertj.core.groups.Tuple.tuple("Cancelled", "cancelled"));
	}

	private static void runUntilFinished(QueueMode mode, List<UUID> ids) {
		JobPoller poller = fixture.poller(queue(mode));
		poller.start();
		try {
			await().atMost(Duration.ofSeconds(30))
				.until(() -> ids.stream()
					.allMatch((id) -> fixture.admin().find(id).map((job) -> job.state().isFinished()).orElse(false)));
			// Leased outcomes are published once the completer wrote them, a moment after the row changed.
			await().atMost(Duration.ofSeconds(10)).until(() -> ids.stream().allMatch((id) -> {
				List<JobEvent> events = events(id);
				JobEvent last = events.isEmpty() ? null : events.get(events.size() - 1);
				return last instanceof JobEvent.Succeeded || last instanceof JobEvent.Failed;
			}));
		}
		finally {
			poller.stop();
		}
	}

	/** The job's events but its starts, by name. */
	private static List<String> outcomes(UUID id) {
		return events(id).stream()
			.filter((e) -> !(e instanceof JobEvent.Started))
			.map((e) -> e.getClass().getSimpleName())
			.toList();
	}

	private static long starts(UUID id) {
		return events(id).stream().filter((e) -> e instanceof JobEvent.Started).count();
	}

	private static Seen last(UUID id) {
		List<Seen> of = seenOf(id);
		return of.get(of.size() - 1);
	}

	private static List<JobEvent> events(UUID id) {
		return seenOf(id).stream().map(Seen::event).toList();
	}

	private static List<Seen> seenOf(UUID id) {
		List<Seen> of = new ArrayList<>();
		for (Seen s : seen) {
			if (s.event().id().equals(id)) {
				of.add(s);
			}
		}
		return of;
	}

	/** The job's state as a connection outside any transaction of the caller's sees it. */
	private static String stateFromAnotherConnection(UUID id) {
		try (Connection connection = fixture.dataSource().getConnection();
				PreparedStatement statement = connection
					.prepareStatement("SELECT state FROM " + fixture.allJobs() + " WHERE public_id = ?")) {
			statement.setObject(1, id);
			try (ResultSet rs = statement.executeQuery()) {
				return rs.next() ? rs.getString(1) : "none";
			}
		}
		catch (java.sql.SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
