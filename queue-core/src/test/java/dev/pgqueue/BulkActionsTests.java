package dev.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Acting on every job a filter matches, and finding jobs by error text and finish time, on a real
 * PostgreSQL: the count a confirmation states is what the action then touches; an action never
 * touches a job outside its filter or in another state; a bulk cancel racing the pollers leaves each
 * job either cancelled and never run, or run once and completed.
 */
class BulkActionsTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private QueueFixture fixture;

	private final List<JobEvent> events = new CopyOnWriteArrayList<>();

	@AfterEach
	void tearDown() {
		if (this.fixture != null) {
			this.fixture.close();
		}
	}

	@Test
	void retriesTheFailedJobsOfAKindSinceAnInstantAndCountsThemFirst() {
		this.fixture = QueueFixture.create("bulk_retry");
		JobAdmin admin = this.fixture.admin();
		Instant since = Instant.parse("2026-11-26T08:00:00Z");
		List<UUID> recent = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			recent.add(failed("report.daily", since.plusSeconds(60 + i), "upstream timed out"));
		}
		List<UUID> older = List.of(failed("report.daily", since.minusSeconds(1), "upstream timed out"),
				failed("report.daily", since.minusSeconds(3_600), "upstream timed out"));
		UUID otherKind = failed("report.weekly", since.plusSeconds(60), "upstream timed out");
		UUID waiting = this.fixture.client().enqueue(JobRequest.of("report.daily", "w"));
		JobQuery query = JobQuery.all().kind("report.daily").state(JobState.FAILED).finishedSince(since);

		assertThat(admin.count(query)).isEqualTo(30);
		assertThat(admin.list(query.limit(10)).jobs()).hasSize(10)
			.allSatisfy((job) -> assertThat(job.finishedAt()).isAfterOrEqualTo(since));
		assertThat(admin.retryAll(query)).isEqualTo(30);

		assertThat(recent).allSatisfy((id) -> assertThat(state(id)).isEqualTo(JobState.AVAILABLE));
		assertThat(older).allSatisfy((id) -> assertThat(state(id)).isEqualTo(JobState.FAILED));
		assertThat(state(otherKind)).isEqualTo(JobState.FAILED);
		assertThat(state(waiting)).isEqualTo(JobState.AVAILABLE);
		assertThat(admin.count(query)).isZero();
		assertThat(admin.retryAll(query)).isZero();
	}

	@Test
	void retriesMoreFailedJobsThanOneBatchHolds() {
		this.fixture = QueueFixture.create("bulk_retry_many");
		this.fixture.jdbc().update("INSERT INTO " + this.fixture.table() + " (public_id, kind, queue, payload, state, "
				+ "attempt, max_attempts, finished_at, last_error) SELECT gen_random_uuid(), 'sync.account', 'default', "
				+ "'{}', 'failed', 1, 1, now(), 'gone' FROM generate_series(1, 2500)");
		JobQuery query = JobQuery.all().kind("sync.account");

		assertThat(this.fixture.admin().count(query.state(JobState.FAILED))).isEqualTo(2_500);
		assertThat(this.fixture.admin().retryAll(query)).isEqualTo(2_500);
		assertThat(this.fixture.countByState()).containsEntry("available", 2_500L).doesNotContainKey("failed");
	}

	@Test
	void retriesOnlyJobsThatFailedLongEnoughAgoInBatchesUpToTheBound() {
		this.fixture = QueueFixture.create("bulk_retry_options");
		JobAdmin admin = this.fixture.admin();
		Instant now = Instant.now();
		List<UUID> old = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			old.add(failed("payment.capture", now.minus(Duration.ofHours(1)).plusSeconds(i), "gateway down"));
		}
		List<UUID> recent = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			recent.add(failed("payment.capture", now.minusSeconds(30), "gateway down"));
		}
		StatementCounter statements = StatementCounter.on(this.fixture);
		JobQuery query = JobQuery.all().kind("payment.capture");
		RetryOptions options = RetryOptions.defaults().failedFor(Duration.ofMinutes(10)).batchSize(3);

		assertThat(admin.retryAll(query, options.atMost(7))).isEqualTo(7);
		assertThat(statements.count()).as("statements moving 3, 3 and 1 jobs back").isEqualTo(3);
		assertThat(old.stream().filter((id) -> state(id) == JobState.AVAILABLE)).hasSize(7);
		assertThat(recent).allSatisfy((id) -> assertThat(state(id)).isEqualTo(JobState.FAILED));

		assertThat(admin.retryAll(query, options)).isEqualTo(3);
		assertThat(old).allSatisfy((id) -> assertThat(state(id)).isEqualTo(JobState.AVAILABLE));
		assertThat(recent).allSatisfy((id) -> assertThat(state(id)).isEqualTo(JobState.FAILED));
		assertThat(admin.retryAll(query, RetryOptions.defaults())).isEqualTo(5);
	}

	@Test
	void retriesFailedJobsOfEveryQueueOnlyWhenTheCallIsBounded() {
		this.fixture = QueueFixture.create("bulk_retry_bounded");
		JobAdmin admin = this.fixture.admin();
		for (int i = 0; i < 4; i++) {
			failed("kind.a", Instant.now().minusSeconds(600), "down");
			failed("kind.b", Instant.now().minusSeconds(600), "down");
		}

		assertThatIllegalArgumentException().isThrownBy(() -> admin.retryAll(JobQuery.all(), RetryOptions.defaults()))
			.withMessageContaining("Name a queue, a kind");
		assertThat(admin.retryAll(JobQuery.all(), RetryOptions.defaults().atMost(5))).isEqualTo(5);
		assertThat(this.fixture.countByState()).containsEntry("available", 5L).containsEntry("failed", 3L);
		assertThatIllegalArgumentException().isThrownBy(() -> RetryOptions.defaults().batchSize(0))
			.withMessageContaining("batchSize");
		assertThatIllegalArgumentException().isThrownBy(() -> RetryOptions.defaults().failedFor(Duration.ofSeconds(-1)))
			.withMessageContaining("failedFor");
	}

	@Test
	void aCancelOfEveryMatchingJobStopsAtTheJobsThatExistedWhenItStarted() {
		List<UUID> enqueuedMeanwhile = new java.util.concurrent.CopyOnWriteArrayList<>();
		// A producer that keeps enqueueing matching jobs: here, five more as the first batch's events arrive.
		this.fixture = QueueFixture.create("bulk_cancel_bounded").events((event) -> {
			if (event instanceof JobEvent.Cancelled && enqueuedMeanwhile.isEmpty()) {
				for (int i = 0; i < 5; i++) {
					enqueuedMeanwhile.add(this.fixture.client().enqueue(JobRequest.of("mail.send", "late " + i)
						.tags("campaign-9")));
				}
			}
		});
		JobAdmin admin = this.fixture.engine().admin();
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 1_500; i++) {
			requests.add(JobRequest.of("mail.send", i).tags("campaign-9"));
		}
		this.fixture.client().enqueueAll(requests);

		assertThat(admin.cancelAll(JobQuery.all().tag("campaign-9"))).as("the jobs there when it started")
			.isEqualTo(1_500);
		assertThat(enqueuedMeanwhile).hasSize(5)
			.allSatisfy((id) -> assertThat(state(id)).as("enqueued after it started").isEqualTo(JobState.AVAILABLE));
	}

	@Test
	void cancelsTheWaitingJobsOfATagAndPublishesAnEventForEach() {
		this.fixture = QueueFixture.create("bulk_cancel").events(this.events::add);
		JobAdmin admin = this.fixture.engine().admin();
		List<UUID> available = new ArrayList<>();
		List<UUID> scheduled = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			available.add(this.fixture.client().enqueue(JobRequest.of("mail.send", i).tags("campaign-7")));
			scheduled.add(this.fixture.client()
				.enqueue(JobRequest.of("mail.send", i).tags("campaign-7", "eu").delay(Duration.ofHours(1))));
		}
		UUID untagged = this.fixture.client().enqueue(JobRequest.of("mail.send", "u"));
		UUID otherTag = this.fixture.client().enqueue(JobRequest.of("mail.send", "o").tags("campaign-8"));
		UUID failedOfTag = this.fixture.client().enqueue(JobRequest.of("mail.send", "f").tags("campaign-7"));
		this.fixture.jdbc().update("UPDATE " + this.fixture.table() + " SET state = 'failed', finished_at = now() "
				+ "WHERE public_id = ?", failedOfTag);
		JobQuery query = JobQuery.all().tag("campaign-7");

		assertThat(admin.count(query.state(JobState.SCHEDULED))).isEqualTo(5);
		assertThat(admin.count(query)).isEqualTo(11);
		assertThat(admin.cancelAll(query.state(JobState.SCHEDULED))).isEqualTo(5);
		assertThat(scheduled).allSatisfy((id) -> assertThat(state(id)).isEqualTo(JobState.CANCELLED));
		assertThat(available).allSatisfy((id) -> assertThat(state(id)).isEqualTo(JobState.AVAILABLE));
		assertThat(admin.cancelAll(query)).isEqualTo(5);

		assertThat(available).allSatisfy((id) -> assertThat(state(id)).isEqualTo(JobState.CANCELLED));
		assertThat(state(untagged)).isEqualTo(JobState.AVAILABLE);
		assertThat(state(otherTag)).isEqualTo(JobState.AVAILABLE);
		assertThat(state(failedOfTag)).isEqualTo(JobState.FAILED);
		Set<UUID> cancelledEvents = this.events.stream()
			.filter(JobEvent.Cancelled.class::isInstance)
			.map(JobEvent::id)
			.collect(Collectors.toSet());
		assertThat(cancelledEvents).containsExactlyInAnyOrderElementsOf(
				java.util.stream.Stream.concat(available.stream(), scheduled.stream()).toList());
	}

	@Test
	void findsJobsByTheTextOfTheirErrorIgnoringCaseAndWildcards() {
		this.fixture = QueueFixture.create("bulk_search");
		JobAdmin admin = this.fixture.admin();
		Instant now = Instant.now();
		UUID timeout = failed("api.call", now, "java.net.SocketTimeoutException: Read TIMED OUT after 30 s");
		UUID percent = failed("api.call", now, "quota at 50% used");
		UUID other = failed("api.call", now, "HTTP 500 from upstream");

		assertThat(ids(admin.list(JobQuery.all().error("timed out")))).containsExactly(timeout);
		assertThat(ids(admin.list(JobQuery.all().error("50%")))).containsExactly(percent);
		assertThat(ids(admin.list(JobQuery.all().error("_0")))).isEmpty();
		assertThat(ids(admin.list(JobQuery.all().error("500")))).containsExactly(other);
		assertThat(admin.count(JobQuery.all().kind("api.call").error("upstream"))).isEqualTo(1);
		assertThatIllegalArgumentException().isThrownBy(() -> JobQuery.all().error(" "))
			.withMessageContaining("error text");
	}

	@Test
	void refusesToActOnEveryJobOrOnJobsInAnotherState() {
		this.fixture = QueueFixture.create("bulk_refusals");
		JobAdmin admin = this.fixture.admin();
		UUID failed = failed("x.kind", Instant.now(), "boom");

		assertThatIllegalArgumentException().isThrownBy(() -> admin.retryAll(JobQuery.all().state(JobState.FAILED)))
			.withMessageContaining("Name a queue, a kind, a tag");
		assertThatIllegalArgumentException().isThrownBy(() -> admin.cancelAll(JobQuery.all()))
			.withMessageContaining("Name a queue, a kind, a tag");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> admin.retryAll(JobQuery.all().kind("x.kind").state(JobState.COMPLETED)))
			.withMessageContaining("Only failed jobs are retried");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> admin.cancelAll(JobQuery.all().kind("x.kind").state(JobState.RUNNING)))
			.withMessageContaining("cancel a running job by its id");
		assertThat(admin.cancelAll(JobQuery.all().kind("x.kind"))).isZero();
		assertThat(state(failed)).isEqualTo(JobState.FAILED);
	}

	@Test
	void suggestsTheKindsThatPollersHandleAndSchedulesEnqueue() {
		this.fixture = QueueFixture.create("bulk_kinds");
		this.fixture.jdbc().update("INSERT INTO " + this.fixture.schema().name() + ".pgqueue_handled_kinds (queue, kind) "
				+ "VALUES ('default', 'mail.send'), ('reports', 'report.daily'), ('other', 'mail.send')");

		assertThat(this.fixture.admin().kinds()).containsExactly("mail.send", "report.daily");
	}

	/**
	 * A bulk cancel racing three pollers: every job ends in exactly one state, and no cancelled job
	 * ever ran.
	 */
	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aBulkCancelRacingThePollersLeavesEachJobCancelledOrRunOnce(QueueMode mode) {
		this.fixture = QueueFixture.create("bulk_race_" + mode.name().toLowerCase(java.util.Locale.ROOT));
		this.fixture.configure(QueueSettings.defaults("race").withMode(mode).withConcurrency(4).withBatchSize(10)
			.withPollInterval(Duration.ofMillis(20)));
		Map<UUID, AtomicInteger> runs = new ConcurrentHashMap<>();
		this.fixture.handle("race.job", "race", (job) -> {
			runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
			Thread.sleep(1);
		});
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 3_000; i++) {
			requests.add(JobRequest.of("race.job", i).queue("race").tags("batch-1"));
		}
		List<UUID> ids = this.fixture.client().enqueueAll(requests);
		List<JobPoller> pollers = this.fixture.startPollers("race", 3);
		await().atMost(WAIT).until(() -> runs.size() >= 100);
		int cancelled = this.fixture.admin().cancelAll(JobQuery.all().tag("batch-1"));
		await().atMost(WAIT).until(() -> {
			Map<String, Long> states = this.fixture.countByState();
			return states.getOrDefault("completed", 0L) + states.getOrDefault("cancelled", 0L) == 3_000;
		});
		pollers.forEach(JobPoller::stop);

		Map<String, Long> states = this.fixture.countByState();
		assertThat(states.get("cancelled")).as("cancelled jobs").isEqualTo(cancelled).isPositive();
		assertThat(states.get("completed")).as("completed jobs").isPositive();
		for (UUID id : ids) {
			JobState state = state(id);
			int ran = runs.getOrDefault(id, new AtomicInteger()).get();
			if (state == JobState.CANCELLED) {
				assertThat(ran).as("runs of cancelled job %s", id).isZero();
			}
			else {
				assertThat(ran).as("runs of %s job %s", state, id).isEqualTo(1);
			}
		}
	}

	/** A job that failed for good at {@code finishedAt} with this error, made so directly in the table. */
	private UUID failed(String kind, Instant finishedAt, String error) {
		UUID id = this.fixture.client().enqueue(JobRequest.of(kind, "f").maxAttempts(1));
		this.fixture.jdbc().update("UPDATE " + this.fixture.table() + " SET state = 'failed', attempt = 1, "
				+ "finished_at = ?, last_error = ? WHERE public_id = ?", java.sql.Timestamp.from(finishedAt), error, id);
		return id;
	}

	private JobState state(UUID id) {
		return this.fixture.admin().find(id).orElseThrow().state();
	}

	private static List<UUID> ids(JobPage page) {
		return page.jobs().stream().map(JobDetails::id).toList();
	}

}
