package dev.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

/**
 * Unique jobs on a real table: the key held while the job is unfinished and for a period, what each
 * conflict policy does, and two transactions or many threads enqueueing one key at once.
 */
class UniqueJobsTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static QueueFixture fixture;

	private static final CountDownLatch heldGate = new CountDownLatch(1);

	private static final CountDownLatch leasedGate = new CountDownLatch(1);

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("unique");
		fixture.handle("invoice.send", "unique", (job) -> {
		});
		fixture.configure(QueueSettings.defaults("unique").withPollInterval(Duration.ofMillis(50)));
		fixture.handle("held.run", "held", (job) -> heldGate.await(WAIT.toSeconds(), TimeUnit.SECONDS));
		fixture.configure(QueueSettings.defaults("held").withPollInterval(Duration.ofMillis(50)));
		fixture.handle("leased.run", "leased", (job) -> leasedGate.await(WAIT.toSeconds(), TimeUnit.SECONDS));
		fixture.configure(QueueSettings.defaults("leased").withMode(QueueMode.LEASED).withPollInterval(Duration.ofMillis(50)));
	}

	@AfterAll
	static void tearDown() {
		heldGate.countDown();
		leasedGate.countDown();
		fixture.close();
	}

	@Test
	void aSecondEnqueueOfAnUnfinishedKeyInsertsNothingAndReturnsTheFirstJobsId() {
		UUID first = fixture.client().enqueue(JobRequest.of("report.build", Map.of("n", 1)).uniqueKey("k-keep")
			.delay(Duration.ofHours(1)));
		UUID second = fixture.client().enqueue(JobRequest.of("report.build", Map.of("n", 2)).uniqueKey("k-keep"));

		assertThat(second).isEqualTo(first);
		assertThat(jobsWithKey("report.build", "k-keep")).isEqualTo(1);
		assertThat(fixture.row(first).get("payload").toString()).contains("\"n\": 1");
		assertThat(fixture.row(first).get("state")).isEqualTo("scheduled");
	}

	@Test
	void theKeyIsPerKind() {
		UUID a = fixture.client().enqueue(JobRequest.of("report.a", null).uniqueKey("shared").delay(Duration.ofHours(1)));
		UUID b = fixture.client().enqueue(JobRequest.of("report.b", null).uniqueKey("shared").delay(Duration.ofHours(1)));

		assertThat(a).isNotEqualTo(b);
	}

	@Test
	void aFinishedJobFreesItsKey() {
		UUID first = fixture.client().enqueue(JobRequest.of("invoice.send", null).uniqueKey("invoice-42"));
		JobPoller poller = fixture.poller("unique");
		poller.start();
		try {
			await().atMost(WAIT).until(() -> "completed".equals(fixture.row(first).get("state")));
		}
		finally {
			poller.stop();
		}
		UUID again = fixture.client().enqueue(JobRequest.of("invoice.send", null).uniqueKey("invoice-42")
			.delay(Duration.ofHours(1)));

		assertThat(again).isNotEqualTo(first);
		assertThat(fixture.row(again).get("state")).isEqualTo("scheduled");
	}

	@Test
	void replaceGivesTheWaitingJobTheRequestsPayloadAndRunTime() {
		UUID first = fixture.client().enqueue(JobRequest.of("report.build", Map.of("v", "old")).uniqueKey("k-replace")
			.delay(Duration.ofHours(1)));
		Instant later = Instant.now().plus(Duration.ofHours(5));
		UUID replaced = fixture.client().enqueue(JobRequest.of("report.build", Map.of("v", "new")).uniqueKey("k-replace")
			.runAt(later).onConflict(OnConflict.REPLACE));

		assertThat(replaced).isEqualTo(first);
		Map<String, Object> row = fixture.row(first);
		assertThat(row.get("payload").toString()).contains("new");
		assertThat(runAt(row)).isCloseTo(later, within(1, ChronoUnit.SECONDS));
		assertThat(jobsWithKey("report.build", "k-replace")).isEqualTo(1);

		// Replaced with a run time of now: due at once.
		fixture.client().enqueue(JobRequest.of("report.build", Map.of("v", "now")).uniqueKey("k-replace")
			.onConflict(OnConflict.REPLACE));
		assertThat(fixture.row(first).get("state")).isEqualTo("available");
	}

	@Test
	void replaceGivesTheWaitingJobTheRequestsRateWeightAndDebounceKeepsItsOwn() {
		UUID first = fixture.client().enqueue(JobRequest.of("report.build", Map.of("items", 2)).uniqueKey("k-weight")
			.rateWeight(2).delay(Duration.ofHours(1)));
		fixture.client().enqueue(JobRequest.of("report.build", Map.of("items", 9)).uniqueKey("k-weight")
			.rateWeight(9).delay(Duration.ofHours(1)).onConflict(OnConflict.REPLACE));
		assertThat(fixture.row(first).get("rate_weight")).as("the replacing request's weight").isEqualTo(9);

		fixture.client().enqueue(JobRequest.of("report.build", Map.of("items", 4)).uniqueKey("k-weight")
			.rateWeight(4).delay(Duration.ofHours(2)).onConflict(OnConflict.DEBOUNCE));
		assertThat(fixture.row(first).get("rate_weight")).as("debounce keeps the waiting job's weight").isEqualTo(9);

		fixture.client().enqueue(JobRequest.of("report.build", Map.of("items", 1)).uniqueKey("k-weight")
			.onConflict(OnConflict.REPLACE));
		assertThat(fixture.row(first).get("rate_weight")).as("a request without a weight takes its kind's")
			.isNull();
	}

	@Test
	void debounceMovesTheWaitingJobLaterNeverEarlierAndKeepsItsPayload() {
		UUID first = fixture.client().enqueue(JobRequest.of("search.reindex", Map.of("v", 1)).uniqueKey("customer-7")
			.delay(Duration.ofSeconds(30)));
		Instant before = runAt(fixture.row(first));
		UUID debounced = fixture.client().enqueue(JobRequest.of("search.reindex", Map.of("v", 2))
			.uniqueKey("customer-7").delay(Duration.ofMinutes(10)).onConflict(OnConflict.DEBOUNCE));
		Instant moved = runAt(fixture.row(first));
		fixture.client().enqueue(JobRequest.of("search.reindex", Map.of("v", 3)).uniqueKey("customer-7")
			.delay(Duration.ofSeconds(1)).onConflict(OnConflict.DEBOUNCE));

		assertThat(debounced).isEqualTo(first);
		assertThat(moved).isAfter(before.plus(Duration.ofMinutes(9)));
		assertThat(runAt(fixture.row(first))).as("an earlier request does not pull it back").isEqualTo(moved);
		assertThat(fixture.row(first).get("payload").toString()).contains("\"v\": 1");
	}

	@Test
	void aJobThatABatchRunsIsKeptEvenByReplace() {
		UUID running = fixture.client().enqueue(JobRequest.of("held.run", Map.of("v", "first")).uniqueKey("k-held"));
		JobPoller poller = fixture.poller("held");
		poller.start();
		try {
			// Claimed by a transactional batch: still 'available', locked by the batch's transaction.
			await().atMost(WAIT).until(() -> poller.busySlots() == 1);
			UUID kept = fixture.client().enqueue(JobRequest.of("held.run", Map.of("v", "second")).uniqueKey("k-held")
				.onConflict(OnConflict.REPLACE));

			assertThat(kept).isEqualTo(running);
			assertThat(fixture.row(running).get("payload").toString()).contains("first");
			assertThat(jobsWithKey("held.run", "k-held")).isEqualTo(1);
		}
		finally {
			heldGate.countDown();
			poller.stop();
		}
	}

	@Test
	void aLeasedJobThatRunsHoldsItsKey() {
		UUID running = fixture.client().enqueue(JobRequest.of("leased.run", null).uniqueKey("k-leased"));
		JobPoller poller = fixture.poller("leased");
		poller.start();
		try {
			// Its listener waits on the gate, so the job stays running under its lease.
			await().atMost(WAIT).until(() -> "running".equals(fixture.row(running).get("state")));
			UUID kept = fixture.client().enqueue(JobRequest.of("leased.run", null).uniqueKey("k-leased")
				.delay(Duration.ofHours(1)).onConflict(OnConflict.DEBOUNCE));
			assertThat(kept).isEqualTo(running);
			assertThat(fixture.row(running).get("state")).isEqualTo("running");
		}
		finally {
			leasedGate.countDown();
			poller.stop();
		}
		await().atMost(WAIT).until(() -> "completed".equals(fixture.row(running).get("state")));
		assertThat(fixture.client().enqueue(JobRequest.of("leased.run", null).uniqueKey("k-leased")
			.delay(Duration.ofHours(1)))).isNotEqualTo(running);
	}

	@Test
	void enqueueAllResolvesKeysWithinTheCallAndAgainstTheTable() {
		UUID existing = fixture.client().enqueue(JobRequest.of("mail.digest", null).uniqueKey("user-1")
			.delay(Duration.ofHours(1)));

		List<UUID> ids = fixture.client().enqueueAll(List.of(
				JobRequest.of("mail.digest", null).uniqueKey("user-1"),
				JobRequest.of("mail.digest", null).uniqueKey("user-2").delay(Duration.ofHours(1)),
				JobRequest.of("mail.other", null).delay(Duration.ofHours(1)),
				JobRequest.of("mail.digest", null).uniqueKey("user-2")));

		assertThat(ids.get(0)).isEqualTo(existing);
		assertThat(ids.get(3)).isEqualTo(ids.get(1));
		assertThat(ids.get(2)).isNotIn(ids.get(0), ids.get(1));
		assertThat(jobsWithKey("mail.digest", "user-2")).isEqualTo(1);
		assertThat(fixture.row(ids.get(2)).get("unique_key")).isNull();
	}

	@Test
	void aKeyHeldForAPeriodOutlivesItsJob() {
		UUID first = fixture.client().enqueue(JobRequest.of("invoice.send", null).uniqueKey("daily-1", Duration.ofDays(1)));
		JobPoller poller = fixture.poller("unique");
		poller.start();
		try {
			await().atMost(WAIT).until(() -> "completed".equals(fixture.row(first).get("state")));
		}
		finally {
			poller.stop();
		}
		// The finished job is pruned: the key still holds for the rest of the day.
		fixture.jdbc().update("DELETE FROM " + fixture.finishedTable() + " WHERE public_id = ?", first);
		UUID again = fixture.client().enqueue(JobRequest.of("invoice.send", null).uniqueKey("daily-1", Duration.ofDays(1)));

		assertThat(again).isEqualTo(first);
		assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE kind = 'invoice.send'"
				+ " AND public_id = ?", Long.class, first)).isZero();
	}

	@Test
	void aPeriodsKeyIsPrunedOnlyOnceThePeriodEnded() {
		UUID held = fixture.client().enqueue(JobRequest.of("report.period", null).uniqueKey("p-1", Duration.ofHours(1))
			.delay(Duration.ofHours(2)));
		String periods = fixture.schema().name() + ".pgqueue_unique_periods";
		fixture.jdbc().update("INSERT INTO " + periods + " VALUES ('report.period', 'p-old', now() - interval '2 hours', "
				+ "now() - interval '1 hour', gen_random_uuid())");
		QueueFixture.Maintenance maintenance = fixture.maintenance((m) -> m);

		assertThat(maintenance.pruneEndedKeys()).isEqualTo(1);
		assertThat(fixture.jdbc().queryForList("SELECT unique_key FROM " + periods + " WHERE kind = 'report.period'",
				String.class)).containsExactly("p-1");
		assertThat(fixture.client().enqueue(JobRequest.of("report.period", null).uniqueKey("p-1", Duration.ofHours(1))))
			.isEqualTo(held);
	}

	@Test
	void aKeyHeldForAPeriodCannotBeReplaced() {
		JobRequest request = JobRequest.of("report.daily", null).uniqueKey("r-1", Duration.ofDays(1))
			.onConflict(OnConflict.REPLACE);

		assertThatIllegalArgumentException().isThrownBy(() -> fixture.client().enqueue(request))
			.withMessageContaining("'report.daily'")
			.withMessageContaining("unique key 'r-1'")
			.withMessageContaining("Use OnConflict.KEEP");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("report.daily", null).uniqueKey("r-1", Duration.ofMillis(1500)))
			.withMessageContaining("whole seconds");
	}

	@Test
	void aSecondTransactionWaitsForTheFirstAndGetsItsJobIfItCommits() throws Exception {
		assertConcurrentEnqueue("k-commit", true);
	}

	@Test
	void aSecondTransactionInsertsItsOwnJobIfTheFirstRollsBack() throws Exception {
		assertConcurrentEnqueue("k-rollback", false);
	}

	private void assertConcurrentEnqueue(String key, boolean commit) throws Exception {
		CountDownLatch firstInserted = new CountDownLatch(1);
		java.util.concurrent.atomic.AtomicInteger firstBackend = new java.util.concurrent.atomic.AtomicInteger();
		CountDownLatch release = new CountDownLatch(1);
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try {
			Future<UUID> first = threads.submit(() -> fixture.transactionTemplate().execute((status) -> {
				UUID id = fixture.client().enqueue(JobRequest.of("order.sync", null).uniqueKey(key).delay(Duration.ofHours(1)));
				firstBackend.set(fixture.jdbc().queryForObject("SELECT pg_backend_pid()", Integer.class));
				firstInserted.countDown();
				await().atMost(WAIT).until(() -> release.getCount() == 0);
				if (!commit) {
					status.setRollbackOnly();
				}
				return id;
			}));
			assertThat(firstInserted.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
			Future<UUID> second = threads.submit(() -> fixture.client()
				.enqueue(JobRequest.of("order.sync", null).uniqueKey(key).delay(Duration.ofHours(1))));
			// The second enqueue waits inside its insert for the first transaction to end.
			await().atMost(WAIT).until(() -> blockedBy(firstBackend.get()) >= 1);
			assertThat(second.isDone()).isFalse();
			release.countDown();

			UUID firstId = first.get(30, TimeUnit.SECONDS);
			UUID secondId = second.get(30, TimeUnit.SECONDS);
			if (commit) {
				assertThat(secondId).isEqualTo(firstId);
			}
			else {
				assertThat(secondId).isNotEqualTo(firstId);
				assertThat(fixture.row(secondId).get("unique_key")).isEqualTo(key);
			}
			assertThat(jobsWithKey("order.sync", key)).isEqualTo(1);
		}
		finally {
			release.countDown();
			threads.shutdownNow();
		}
	}

	@Test
	void manyThreadsEnqueueingTheSameKeysAtOnceMakeOneJobPerKey() throws Exception {
		int threads = 8;
		int keys = 200;
		Map<String, Set<UUID>> idsByKey = new ConcurrentHashMap<>();
		CountDownLatch start = new CountDownLatch(1);
		List<CompletableFuture<Void>> callers = new ArrayList<>();
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			for (int t = 0; t < threads; t++) {
				boolean batched = t % 2 == 0;
				callers.add(CompletableFuture.runAsync(() -> {
					try {
						start.await();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
						return;
					}
					for (int round = 0; round < 3; round++) {
						if (batched) {
							List<JobRequest> requests = new ArrayList<>();
							for (int k = 0; k < keys; k++) {
								requests.add(JobRequest.of("sync.key", null).uniqueKey("key-" + k).delay(Duration.ofHours(1)));
							}
							List<UUID> ids = fixture.client().enqueueAll(requests);
							for (int k = 0; k < keys; k++) {
								idsByKey.computeIfAbsent("key-" + k, (x) -> ConcurrentHashMap.newKeySet()).add(ids.get(k));
							}
						}
						else {
							for (int k = 0; k < keys; k++) {
								UUID id = fixture.client()
									.enqueue(JobRequest.of("sync.key", null).uniqueKey("key-" + k).delay(Duration.ofHours(1)));
								idsByKey.computeIfAbsent("key-" + k, (x) -> ConcurrentHashMap.newKeySet()).add(id);
							}
						}
					}
				}, pool));
			}
			start.countDown();
			CompletableFuture.allOf(callers.toArray(new CompletableFuture[0])).get(120, TimeUnit.SECONDS);
		}
		finally {
			pool.shutdownNow();
		}

		assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE kind = 'sync.key'",
				Long.class)).isEqualTo(keys);
		assertThat(idsByKey).hasSize(keys);
		assertThat(idsByKey.values()).allSatisfy((ids) -> assertThat(ids).as("every caller of a key got one id").hasSize(1));
	}

	@Test
	void enqueueAllCallsWhoseKeysOverlapInOppositeOrdersDoNotDeadlock() throws Exception {
		CountDownLatch held = new CountDownLatch(1);
		java.util.concurrent.atomic.AtomicInteger blockerBackend = new java.util.concurrent.atomic.AtomicInteger();
		CountDownLatch release = new CountDownLatch(1);
		ExecutorService threads = Executors.newFixedThreadPool(3);
		try {
			// A transaction holds o-m, so that the first call stops there, between its other two keys.
			Future<UUID> blocker = threads.submit(() -> fixture.transactionTemplate().execute((status) -> {
				UUID id = fixture.client().enqueue(opposite("o-m"));
				blockerBackend.set(fixture.jdbc().queryForObject("SELECT pg_backend_pid()", Integer.class));
				held.countDown();
				await().atMost(WAIT).until(() -> release.getCount() == 0);
				status.setRollbackOnly();
				return id;
			}));
			assertThat(held.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
			Future<List<UUID>> first = threads
				.submit(() -> fixture.client().enqueueAll(List.of(opposite("o-a"), opposite("o-m"), opposite("o-z"))));
			await().atMost(WAIT).until(() -> blockedBy(blockerBackend.get()) >= 1);
			int firstBackend = fixture.jdbc().queryForObject(
					"SELECT pid FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))", Integer.class,
					blockerBackend.get());
			// In the order given, this call would take o-z and wait for o-a, which the first holds, and the
			// first, once o-m is free, would wait for o-z: a deadlock, one call failing.
			Future<List<UUID>> second = threads
				.submit(() -> fixture.client().enqueueAll(List.of(opposite("o-z"), opposite("o-a"))));
			await().atMost(WAIT).until(() -> blockedBy(firstBackend) >= 1);
			release.countDown();
			blocker.get(30, TimeUnit.SECONDS);

			List<UUID> firstIds = first.get(30, TimeUnit.SECONDS);
			List<UUID> secondIds = second.get(30, TimeUnit.SECONDS);
			assertThat(secondIds).containsExactly(firstIds.get(2), firstIds.get(0));
			assertThat(jobsWithKey("order.opposite", "o-m")).isEqualTo(1);
		}
		finally {
			release.countDown();
			threads.shutdownNow();
		}
	}

	private static JobRequest opposite(String key) {
		return JobRequest.of("order.opposite", null).uniqueKey(key).delay(Duration.ofHours(1));
	}

	/** Sessions waiting on a lock that the backend {@code pid} holds. */
	private static long blockedBy(int pid) {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))",
				Long.class, pid);
	}

	private static long jobsWithKey(String kind, String key) {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs()
				+ " WHERE kind = ? AND unique_key = ?", Long.class, kind, key);
	}

	private static Instant runAt(Map<String, Object> row) {
		Object value = row.get("run_at");
		return (value instanceof OffsetDateTime odt) ? odt.toInstant() : ((java.sql.Timestamp) value).toInstant();
	}


}
