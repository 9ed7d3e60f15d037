package dev.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.metrics.QueueStats;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The promoter, cleaner and stats reader against real rows. Every service works on all queues of
 * the schema, so each test keeps to a queue of its own and leaves nothing due or expired behind.
 */
class MaintenanceTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final Duration COMPLETED_RETENTION = Duration.ofHours(1);

	private static final Duration FAILED_RETENTION = Duration.ofDays(7);

	private static QueueFixture fixture;

	private static QueueFixture.Maintenance maintenance;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("maintenance");
		maintenance = fixture.maintenance(MaintenanceTests::smallBatches);
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	private static MaintenanceSettings smallBatches(MaintenanceSettings m) {
		return new MaintenanceSettings(m.promoteInterval(), m.rescueInterval(), m.cleanupInterval(),
				m.statsInterval(), COMPLETED_RETENTION, FAILED_RETENTION, 100, m.deadRowsWarning());
	}

	@Test
	void promoterMakesDueScheduledJobsAvailableAndLeavesFutureOnesScheduled() {
		JobClient client = fixture.client();
		UUID soon = client.enqueue(JobRequest.of("promote.job", null).queue("promote").delay(Duration.ofMillis(300)));
		UUID later = client.enqueue(JobRequest.of("promote.job", null).queue("promote").delay(Duration.ofHours(1)));
		assertThat(fixture.row(soon)).containsEntry("state", "scheduled");
		assertThat(fixture.row(later)).containsEntry("state", "scheduled");

		AtomicInteger promoted = new AtomicInteger();
		await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
			promoted.addAndGet(maintenance.promote());
			return "available".equals(fixture.row(soon).get("state"));
		});
		assertThat(promoted).hasValue(1);
		assertThat(fixture.row(later)).containsEntry("state", "scheduled");
		assertThat(maintenance.promote()).isZero();
	}

	@Test
	void cleanerDeletesFinishedJobsPastTheirRetentionInBatchesAndKeepsYoungerOnes() {
		// 1 000 finished rows, 700 of them past retention, deleted 100 per statement.
		List<UUID> ids = enqueueMany("clean", 1000);
		finish(ids.subList(0, 400), "completed", Duration.ofHours(2));
		finish(ids.subList(400, 500), "completed", Duration.ofMinutes(10));
		finish(ids.subList(500, 800), "failed", Duration.ofDays(8));
		finish(ids.subList(800, 1000), "failed", Duration.ofDays(6));

		assertThat(maintenance.clean()).isEqualTo(700);

		assertThat(countByStateIn("clean")).containsExactlyInAnyOrderEntriesOf(Map.of("completed", 100L, "failed", 200L));
		assertThat(countOf(ids.subList(400, 500))).as("young completed jobs kept").isEqualTo(100);
		assertThat(countOf(ids.subList(800, 1000))).as("young failed jobs kept").isEqualTo(200);
		assertThat(maintenance.clean()).isZero();
	}

	@Test
	void twoInstancesCleaningAtOnceTakeTurnsAndDeleteExactlyTheExpiredJobs() throws Exception {
		List<UUID> ids = enqueueMany("clean-twice", 3000);
		finish(ids.subList(0, 2000), "completed", Duration.ofHours(2));
		finish(ids.subList(2000, 2500), "failed", Duration.ofDays(8));
		finish(ids.subList(2500, 3000), "completed", Duration.ofMinutes(1));

		// The second instance has its own pool, repository and transactions, as another JVM would.
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try (HikariDataSource otherPool = fixture.schema().newPool(4)) {
			QueueFixture.Maintenance other = QueueFixture.Maintenance.of(fixture.engineBuilder(otherPool)
				.settings(fixture.engineSettings().withMaintenance(smallBatches(MaintenanceSettings.DEFAULT)))
				.build());
			CyclicBarrier together = new CyclicBarrier(2);
			CompletableFuture<Integer> first = CompletableFuture.supplyAsync(() -> afterBarrier(together, maintenance),
					threads);
			CompletableFuture<Integer> second = CompletableFuture.supplyAsync(() -> afterBarrier(together, other),
					threads);

			int deleted = first.get(WAIT.toSeconds(), TimeUnit.SECONDS) + second.get(WAIT.toSeconds(), TimeUnit.SECONDS);
			assertThat(deleted).isEqualTo(2500);
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(countByStateIn("clean-twice")).containsExactlyEntriesOf(Map.of("completed", 500L));
	}

	@Test
	void cleanerDeletesNothingWhileAnotherInstanceHoldsItsLock() throws Exception {
		List<UUID> ids = enqueueMany("clean-locked", 150);
		finish(ids, "completed", Duration.ofHours(2));
		ExecutorService thread = Executors.newSingleThreadExecutor();
		try {
			Integer deletedMeanwhile = fixture.transactionTemplate().execute((status) -> {
				assertThat(fixture.jdbc().queryForObject("SELECT pg_try_advisory_xact_lock(hashtext(?))", Boolean.class,
						"pgqueue.cleaner:" + fixture.schema().name())).isTrue();
				try {
					return thread.submit(maintenance::clean).get(WAIT.toSeconds(), TimeUnit.SECONDS);
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			});
			assertThat(deletedMeanwhile).isZero();
			assertThat(countOf(ids)).isEqualTo(150);
			assertThat(thread.submit(maintenance::clean).get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(150);
			assertThat(countOf(ids)).isZero();
		}
		finally {
			thread.shutdownNow();
		}
	}

	/**
	 * Behind a pooler in transaction mode (PgBouncer), each transaction may run on another server
	 * connection. A session lock taken by one statement and released by a later one would then stay
	 * with the first server connection, and every cleaner would find it taken for as long as that
	 * connection lives. Simulated here with a connection that sends each statement to the next of two
	 * server connections, as such a pooler may.
	 */
	@Test
	void cleanerLeavesNoLockBehindWhenEachStatementRunsOnAnotherServerConnection() throws Exception {
		List<UUID> ids = enqueueMany("clean-pooled", 250);
		finish(ids, "completed", Duration.ofHours(2));
		try (HikariDataSource servers = fixture.schema().newPool(2);
				java.sql.Connection first = servers.getConnection();
				java.sql.Connection second = servers.getConnection()) {
			QueueFixture.Maintenance behindPooler = QueueFixture.Maintenance.of(fixture.engineBuilder(
					StatementPerServerConnection.dataSource(first, second))
				.settings(fixture.engineSettings().withMaintenance(smallBatches(MaintenanceSettings.DEFAULT)))
				.build());

			assertThat(behindPooler.clean()).isEqualTo(250);

			assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'",
					Integer.class)).as("advisory locks left held").isZero();
			List<UUID> more = enqueueMany("clean-pooled", 10);
			finish(more, "completed", Duration.ofHours(2));
			assertThat(maintenance.clean()).as("another instance's next run").isEqualTo(10);
		}
	}

	private static int afterBarrier(CyclicBarrier barrier, QueueFixture.Maintenance instance) {
		try {
			barrier.await(WAIT.toSeconds(), TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		return instance.clean();
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void completedRetentionOfZeroDeletesACompletedJobAsItFinishes(QueueMode mode) throws Exception {
		String queue = "delete-" + mode.name().toLowerCase(java.util.Locale.ROOT);
		fixture.configure(QueueSettings.defaults(queue).withMode(mode).withPollInterval(Duration.ofMillis(50)));
		CountDownLatch ran = new CountDownLatch(2);
		fixture.handle(queue + ".job", queue, (job) -> ran.countDown());
		JobPoller poller;
		fixture.workerSettings(new WorkerSettings(Duration.ofSeconds(10), false, true));
		try {
			poller = fixture.poller(queue);
		}
		finally {
			fixture.workerSettings(new WorkerSettings(Duration.ofSeconds(10), false, false));
		}
		List<UUID> ids = fixture.client()
			.enqueueAll(List.of(JobRequest.of(queue + ".job", 1), JobRequest.of(queue + ".job", 2)));
		poller.start();
		try {
			assertThat(ran.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
			await().atMost(WAIT).until(() -> countByStateIn(queue).isEmpty());
			assertThat(countOf(ids)).isZero();
		}
		finally {
			poller.stop();
		}
	}

	@Test
	void statsReportDepthScheduledRunningAndOldestAgePerQueue() {
		fixture.handle("stats.job", "stats", (job) -> {
		});
		fixture.handle("stats-idle.job", "stats-idle", (job) -> {
		});
		JobClient client = fixture.client();
		// Claimed first (highest priority) by a worker that holds it under a long lease.
		client.enqueue(JobRequest.of("stats.job", null).priority(100));
		assertThat(fixture.repository().claimLeased("stats", new String[] { "stats.job" }, 1, "stats-worker",
				Duration.ofHours(1))).hasSize(1);
		Instant now = Instant.now();
		client.enqueue(JobRequest.of("stats.job", null).runAt(now.minus(Duration.ofMinutes(5))));
		client.enqueue(JobRequest.of("stats.job", null).runAt(now.minus(Duration.ofMinutes(1))));
		client.enqueue(JobRequest.of("stats.job", null));
		client.enqueue(JobRequest.of("stats.job", null).delay(Duration.ofHours(1)));
		client.enqueue(JobRequest.of("stats.job", null).delay(Duration.ofHours(2)));
		client.enqueue(JobRequest.of("other.job", null).queue("stats-other").runAt(now.minus(Duration.ofHours(3))));

		Map<String, QueueStats> stats = maintenance.readStats();

		QueueStats busy = stats.get("stats");
		assertThat(busy.available()).isEqualTo(3);
		assertThat(busy.scheduled()).isEqualTo(2);
		assertThat(busy.running()).isEqualTo(1);
		assertThat(busy.oldestAvailableAge()).isBetween(Duration.ofMinutes(5).minusSeconds(1), Duration.ofMinutes(6));
		assertThat(stats.get("stats-other").available()).isEqualTo(1);
		assertThat(stats.get("stats-other").oldestAvailableAge()).isBetween(Duration.ofHours(3).minusSeconds(1),
				Duration.ofHours(3).plusMinutes(1));
		assertThat(stats.get("stats-idle")).as("a listened-to queue with no jobs")
			.isEqualTo(QueueStats.empty("stats-idle"));
		assertThat(maintenance.lastStats()).isEqualTo(stats);
	}

	private static List<UUID> enqueueMany(String queue, int count) {
		return fixture.client()
			.enqueueAll(IntStream.range(0, count).mapToObj((i) -> JobRequest.of(queue + ".job", i).queue(queue)).toList());
	}

	/** Marks jobs finished {@code ago}, as if a worker had run them then. */
	private static void finish(List<UUID> ids, String state, Duration ago) {
		int updated = fixture.jdbc()
			.update("UPDATE " + fixture.table() + " SET state = ?, attempt = 1, "
					+ "finished_at = now() - ? * interval '1 second' WHERE public_id = ANY(?::uuid[])", state,
					ago.toSeconds(), texts(ids));
		assertThat(updated).isEqualTo(ids.size());
	}

	private static long countOf(List<UUID> ids) {
		return fixture.jdbc()
			.queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE public_id = ANY(?::uuid[])", Long.class,
					(Object) texts(ids));
	}

	private static String[] texts(List<UUID> ids) {
		return ids.stream().map(UUID::toString).toArray(String[]::new);
	}

	private static Map<String, Long> countByStateIn(String queue) {
		Map<String, Long> counts = new java.util.TreeMap<>();
		fixture.jdbc()
			.query("SELECT state, count(*) FROM " + fixture.allJobs() + " WHERE queue = ? GROUP BY state",
					(java.sql.ResultSet rs) -> {
						counts.put(rs.getString(1), rs.getLong(2));
					}, queue);
		return counts;
	}

}
