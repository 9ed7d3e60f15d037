package dev.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pgqueue.AdminResult.Outcome;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.schema.SchemaName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * {@link JobAdmin} on a real PostgreSQL, in both modes: every operation does what it says to the
 * jobs it applies to, refuses the others with the state that kept it, and never touches a job a
 * worker has. Each mode has a queue of its own ({@code transactional}, {@code leased}) whose kinds are
 * named after it.
 */
class JobAdminTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private static QueueFixture fixture;

	private static JobAdmin admin;

	/** Runs of each job's listener, by job id. */
	private static final Map<UUID, AtomicInteger> runs = new ConcurrentHashMap<>();

	/** Jobs whose listener waits for this latch, by job id. */
	private static final Map<UUID, CountDownLatch> blocked = new ConcurrentHashMap<>();

	private static final Map<UUID, CountDownLatch> entered = new ConcurrentHashMap<>();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("job_admin");
		for (QueueMode mode : QueueMode.values()) {
			String queue = queue(mode);
			fixture.configure(QueueSettings.defaults(queue).withMode(mode).withPollInterval(Duration.ofMillis(50))
				.withLeaseDuration(Duration.ofSeconds(5)));
			fixture.handle("ok." + queue, queue, JobAdminTests::run);
			// Fails on its first run, completes on any later one.
			fixture.handle("fail-once." + queue, queue, (job) -> {
				if (run(job) == 1) {
					throw new IllegalStateException("first run fails");
				}
			});
			fixture.handle("block." + queue, queue, (job) -> {
				run(job);
				latch(entered, job.id()).countDown();
				latch(blocked, job.id()).await(30, TimeUnit.SECONDS);
			});
		}
		admin = fixture.admin();
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	private static CountDownLatch latch(Map<UUID, CountDownLatch> latches, UUID id) {
		return latches.computeIfAbsent(id, (key) -> new CountDownLatch(1));
	}

	private static int run(Job job) {
		return runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
	}

	private static String queue(QueueMode mode) {
		return mode.name().toLowerCase(Locale.ROOT);
	}

	private static int runsOf(UUID id) {
		AtomicInteger count = runs.get(id);
		return (count != null) ? count.get() : 0;
	}

	private static JobState state(UUID id) {
		return admin.find(id).orElseThrow().state();
	}

	@Test
	void findsAJobWithItsPayloadOnlyWhenAskedFor() {
		UUID id = fixture.client().enqueue(JobRequest.of("report.render", Map.of("account", "acct-7")).queue("idle")
			.priority(3).maxAttempts(4));

		JobDetails job = admin.find(id).orElseThrow();
		assertThat(job.id()).isEqualTo(id);
		assertThat(job.kind()).isEqualTo("report.render");
		assertThat(job.queue()).isEqualTo("idle");
		assertThat(job.state()).isEqualTo(JobState.AVAILABLE);
		assertThat(job.priority()).isEqualTo(3);
		assertThat(job.attempt()).isZero();
		assertThat(job.maxAttempts()).isEqualTo(4);
		assertThat(job.createdAt()).isNotNull();
		assertThat(job.runAt()).isNotNull();
		assertThat(job.startedAt()).isNull();
		assertThat(job.finishedAt()).isNull();
		assertThat(job.lastError()).isNull();
		assertThat(job.payload()).isNull();
		assertThat(job.concurrencyKey()).isNull();
		assertThat(job.rateWeight()).as("no weight of its own: its kind's applies").isNull();
		assertThat(job.toString()).doesNotContain("acct-7");
		UUID keyed = fixture.client().enqueue(JobRequest.of("report.render", Map.of("account", "acct-8")).queue("idle")
			.concurrencyKey("acct-8").rateWeight(4));
		assertThat(admin.find(keyed).orElseThrow()).extracting(JobDetails::concurrencyKey, JobDetails::rateWeight)
			.containsExactly("acct-8", 4);

		assertThat(admin.findWithPayload(id).orElseThrow().payload()).isEqualTo("{\"account\": \"acct-7\"}");
		assertThat(admin.find(UUID.randomUUID())).isEmpty();
	}

	@Test
	void listsJobsNewestFirstByQueueKindAndStateOnePageAtATime() {
		List<UUID> ids = new ArrayList<>();
		for (int i = 0; i < 7; i++) {
			ids.add(fixture.client().enqueue(JobRequest.of((i % 2 == 0) ? "list.even" : "list.odd", i).queue("listing")));
		}
		admin.cancel(ids.get(1));
		admin.cancel(ids.get(4));

		JobPage first = admin.list(JobQuery.all().queue("listing").limit(3));
		JobPage second = admin.list(JobQuery.all().queue("listing").limit(3).before(first.next()));
		JobPage third = admin.list(JobQuery.all().queue("listing").limit(3).before(second.next()));
		assertThat(first.jobs()).extracting(JobDetails::id).containsExactly(ids.get(6), ids.get(5), ids.get(4));
		assertThat(second.jobs()).extracting(JobDetails::id).containsExactly(ids.get(3), ids.get(2), ids.get(1));
		assertThat(third.jobs()).extracting(JobDetails::id).containsExactly(ids.get(0));
		assertThat(third.next()).isNull();

		assertThat(admin.list(JobQuery.all().queue("listing").kind("list.odd")).jobs()).extracting(JobDetails::id)
			.containsExactly(ids.get(5), ids.get(3), ids.get(1));
		assertThat(admin.list(JobQuery.all().queue("listing").state(JobState.CANCELLED)).jobs())
			.extracting(JobDetails::id)
			.containsExactly(ids.get(4), ids.get(1));
		assertThat(admin.list(JobQuery.all().kind("list.even").state(JobState.AVAILABLE)).jobs())
			.extracting(JobDetails::id)
			.containsExactly(ids.get(6), ids.get(2), ids.get(0));
		assertThat(admin.list(JobQuery.all().queue("no-such-queue")).jobs()).isEmpty();
		assertThat(admin.counts()).containsEntry("listing", Map.of(JobState.AVAILABLE, 5L, JobState.CANCELLED, 2L));
	}

	@Test
	void countsTheJobsOfEachQueueThatFinishedWithinAWindow() {
		List<UUID> ids = fixture.client().enqueueAll(IntStream.range(0, 6)
			.mapToObj((i) -> JobRequest.of("report.render", i).queue("finishing"))
			.toList());
		// As workers leave them: three completed and one failed just now, one failed two minutes ago,
		// one still waiting.
		finish(ids.subList(0, 3), "completed", "now()");
		finish(ids.subList(3, 4), "failed", "now()");
		finish(ids.subList(4, 5), "failed", "now() - interval '2 minutes'");

		assertThat(admin.finishedWithin(Duration.ofMinutes(1))).containsEntry("finishing", 4L);
		assertThat(admin.finishedWithin(Duration.ofMinutes(5))).containsEntry("finishing", 5L);
		assertThat(admin.finishedWithin(Duration.ofMinutes(1))).doesNotContainKey("no-such-queue");
	}

	private static void finish(List<UUID> ids, String state, String finishedAt) {
		for (UUID id : ids) {
			fixture.jdbc().update("UPDATE " + fixture.table() + " SET state = ?, attempt = 1, finished_at = "
					+ finishedAt + " WHERE public_id = ?", state, id);
		}
	}

	@Test
	void refusesACursorThatIsNotOne() {
		assertThatIllegalArgumentException().isThrownBy(() -> JobQuery.all().before("'; DROP TABLE x"));
		assertThatIllegalArgumentException().isThrownBy(() -> JobQuery.all().before("9999999999999999999"));
		assertThatIllegalArgumentException().isThrownBy(() -> JobQuery.all().limit(0));
		assertThatIllegalArgumentException().isThrownBy(() -> JobQuery.all().limit(JobQuery.MAX_LIMIT + 1));
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void retriesAFailedJobWhichRunsAgainWithOneMoreAttempt(QueueMode mode) {
		String queue = queue(mode);
		JobPoller poller = fixture.poller(queue);
		poller.start();
		try {
			UUID id = fixture.client().enqueue(JobRequest.of("fail-once." + queue, "x").maxAttempts(1));
			await().atMost(WAIT).until(() -> state(id) == JobState.FAILED);
			assertThat(admin.find(id).orElseThrow().lastError()).contains("first run fails");

			assertThat(admin.retry(id)).isEqualTo(new AdminResult(id, Outcome.APPLIED, JobState.AVAILABLE));
			await().atMost(WAIT).until(() -> state(id) == JobState.COMPLETED);
			JobDetails job = admin.find(id).orElseThrow();
			assertThat(job.attempt()).isEqualTo(2);
			assertThat(job.maxAttempts()).isEqualTo(2);
			assertThat(runsOf(id)).isEqualTo(2);

			assertThat(admin.retry(id)).isEqualTo(new AdminResult(id, Outcome.NOT_ALLOWED, JobState.COMPLETED));
			assertThat(admin.retry(UUID.randomUUID()).outcome()).isEqualTo(Outcome.NOT_FOUND);
		}
		finally {
			poller.stop();
		}
	}

	@Test
	void retriesEveryFailedJobOfAQueueOfAKindOrOfBoth() {
		UUID mailWelcome = failed("mail-bulk", "email.welcome");
		UUID mailReset = failed("mail-bulk", "email.reset");
		UUID smsWelcome = failed("sms-bulk", "email.welcome");
		UUID smsOther = failed("sms-bulk", "sms.other");
		UUID waiting = fixture.client().enqueue(JobRequest.of("email.welcome", "w").queue("mail-bulk"));

		assertThat(admin.retryFailed("mail-bulk", "email.welcome")).isEqualTo(1);
		assertThat(state(mailWelcome)).isEqualTo(JobState.AVAILABLE);
		assertThat(state(mailReset)).isEqualTo(JobState.FAILED);
		assertThat(admin.retryFailed(null, "email.welcome")).isEqualTo(1);
		assertThat(state(smsWelcome)).isEqualTo(JobState.AVAILABLE);
		assertThat(admin.retryFailed("sms-bulk", null)).isEqualTo(1);
		assertThat(state(smsOther)).isEqualTo(JobState.AVAILABLE);
		assertThat(state(mailReset)).isEqualTo(JobState.FAILED);
		assertThat(admin.find(waiting).orElseThrow().runAt()).isNotNull();
		assertThatIllegalArgumentException().isThrownBy(() -> admin.retryFailed(null, null));
	}

	/** A job that failed for good, made so directly in the table. */
	private static UUID failed(String queue, String kind) {
		UUID id = fixture.client().enqueue(JobRequest.of(kind, "f").queue(queue).maxAttempts(1));
		fixture.jdbc().update("UPDATE " + fixture.table() + " SET state = 'failed', attempt = 1, "
				+ "finished_at = now(), last_error = 'boom' WHERE public_id = ?", id);
		return id;
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void cancelsWaitingJobsWhichThenNeverRun(QueueMode mode) {
		String queue = queue(mode);
		UUID due = fixture.client().enqueue(JobRequest.of("ok." + queue, "due"));
		UUID later = fixture.client().enqueue(JobRequest.of("ok." + queue, "later").delay(Duration.ofMillis(200)));

		assertThat(admin.cancel(due)).isEqualTo(new AdminResult(due, Outcome.APPLIED, JobState.CANCELLED));
		assertThat(admin.cancel(later)).isEqualTo(new AdminResult(later, Outcome.APPLIED, JobState.CANCELLED));
		assertThat(admin.find(due).orElseThrow().finishedAt()).isNotNull();

		JobPoller poller = fixture.poller(queue);
		poller.start();
		try {
			UUID marker = fixture.client().enqueue(JobRequest.of("ok." + queue, "marker").delay(Duration.ofMillis(400)));
			await().atMost(WAIT).until(() -> {
				fixture.maintenanceRepository().promoteDue(100);
				return state(marker) == JobState.COMPLETED;
			});
			assertThat(runsOf(due)).isZero();
			assertThat(runsOf(later)).isZero();
			assertThat(state(due)).isEqualTo(JobState.CANCELLED);
			assertThat(state(later)).isEqualTo(JobState.CANCELLED);

			assertThat(admin.cancel(marker)).isEqualTo(new AdminResult(marker, Outcome.NOT_ALLOWED, JobState.COMPLETED));
			assertThat(admin.cancel(due)).isEqualTo(new AdminResult(due, Outcome.NOT_ALLOWED, JobState.CANCELLED));
			assertThat(admin.cancel(UUID.randomUUID()).outcome()).isEqualTo(Outcome.NOT_FOUND);
		}
		finally {
			poller.stop();
		}
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void deletesFinishedJobsOnly(QueueMode mode) {
		String queue = queue(mode);
		UUID cancelled = fixture.client().enqueue(JobRequest.of("ok." + queue, "c"));
		admin.cancel(cancelled);
		UUID waiting = fixture.client().enqueue(JobRequest.of("ok." + queue, "w").delay(Duration.ofHours(1)));
		JobPoller poller = fixture.poller(queue);
		poller.start();
		UUID completed;
		try {
			completed = fixture.client().enqueue(JobRequest.of("ok." + queue, "done"));
			await().atMost(WAIT).until(() -> state(completed) == JobState.COMPLETED);
		}
		finally {
			poller.stop();
		}

		assertThat(admin.delete(waiting)).isEqualTo(new AdminResult(waiting, Outcome.NOT_ALLOWED, JobState.SCHEDULED));
		assertThat(admin.delete(completed)).isEqualTo(new AdminResult(completed, Outcome.APPLIED, null));
		assertThat(admin.delete(cancelled)).isEqualTo(new AdminResult(cancelled, Outcome.APPLIED, null));
		assertThat(admin.find(completed)).isEmpty();
		assertThat(admin.find(cancelled)).isEmpty();
		assertThat(admin.delete(completed).outcome()).isEqualTo(Outcome.NOT_FOUND);
		admin.cancel(waiting);
	}

	/**
	 * While a listener runs, its job is the worker's: in transactional mode its batch holds the row
	 * (the job still reads {@code available}), and an operation answers at once, through
	 * {@code FOR UPDATE NOWAIT}, instead of waiting for the batch; in leased mode the job is
	 * {@code running}. Either way nothing changes, and the worker's outcome stands.
	 */
	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void answersRunningAtOnceForAJobAWorkerHasAndLeavesItsOutcomeAlone(QueueMode mode) throws Exception {
		String queue = queue(mode);
		UUID id = fixture.client().enqueue(JobRequest.of("block." + queue, "b"));
		JobPoller poller = fixture.poller(queue);
		poller.start();
		try {
			UUID running = id;
			assertThat(latch(entered, running).await(20, TimeUnit.SECONDS)).isTrue();

			for (String operation : List.of("cancel", "retry", "delete")) {
				long start = System.nanoTime();
				AdminResult result = CompletableFuture.supplyAsync(() -> switch (operation) {
					case "cancel" -> admin.cancel(running);
					case "retry" -> admin.retry(running);
					default -> admin.delete(running);
				}).get(2, TimeUnit.SECONDS);
				assertThat(result).as(operation).isEqualTo(new AdminResult(running, Outcome.RUNNING, JobState.RUNNING));
				assertThat(Duration.ofNanos(System.nanoTime() - start)).as(operation).isLessThan(Duration.ofSeconds(1));
			}
		}
		finally {
			latch(blocked, id).countDown();
			await().atMost(WAIT).until(() -> state(id) == JobState.COMPLETED);
			poller.stop();
		}
		assertThat(runsOf(id)).isEqualTo(1);
	}

	@Test
	void cleanerPrunesCancelledJobsAfterTheFailedRetention() {
		UUID old = fixture.client().enqueue(JobRequest.of("prune.me", "o").queue("pruning"));
		UUID recent = fixture.client().enqueue(JobRequest.of("prune.me", "r").queue("pruning"));
		admin.cancel(old);
		admin.cancel(recent);
		fixture.jdbc().update("UPDATE " + fixture.finishedTable() + " SET finished_at = now() - interval '2 days' "
				+ "WHERE public_id = ?", old);

		fixture.maintenanceRepository().pruneAllFinished(Duration.ofHours(1), Duration.ofDays(1), 100);

		assertThat(admin.find(old)).isEmpty();
		assertThat(admin.find(recent)).isPresent();
	}

	@Test
	void pausesAndResumesAQueueOnceEach() {
		assertThat(admin.pause("paused-once")).isTrue();
		assertThat(admin.pause("paused-once")).isFalse();
		assertThat(admin.pausedQueues()).contains("paused-once");
		assertThat(fixture.jdbc().queryForObject("SELECT paused_by FROM "
				+ SchemaName.of(fixture.schema().name()).qualify("pgqueue_queue_pauses") + " WHERE queue = 'paused-once'",
				String.class)).isEqualTo("test");
		assertThat(admin.resume("paused-once")).isTrue();
		assertThat(admin.resume("paused-once")).isFalse();
		assertThat(admin.pausedQueues()).doesNotContain("paused-once");
	}

	@Test
	void valuesFromARequestCannotForgeALogLine() {
		ListAppender<ILoggingEvent> logs = new ListAppender<>();
		logs.start();
		Logger logger = (Logger) LoggerFactory.getLogger(dev.pgqueue.engine.JdbcJobAdmin.class);
		logger.addAppender(logs);
		String forged = "mail\n12:00:00.000 INFO  [main] everything is fine";
		try {
			fixture.admin().pause(forged);
			fixture.admin().resume(forged);
			fixture.admin().cancelAll(JobQuery.all().kind("kind\r\nforged").state(JobState.AVAILABLE));
		}
		finally {
			logger.detachAppender(logs);
		}
		assertThat(logs.list).hasSize(3).allSatisfy((event) -> assertThat(event.getFormattedMessage())
			.doesNotContain("\n")
			.doesNotContain("\r"));
		assertThat(logs.list.get(0).getFormattedMessage()).contains("queue 'mail\\n12:00:00.000 INFO");
		assertThat(logs.list.get(2).getFormattedMessage()).contains("kind 'kind\\r\\nforged'");
	}

}
