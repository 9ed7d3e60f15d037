package dev.pgqueue;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.poll.ClaimProgress;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.sql.MaintenanceRepository.LockWaits;
import dev.pgqueue.metrics.MicrometerQueueMetrics;
import dev.pgqueue.metrics.PollCycleAssessment;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The four degradation signals, each produced by the real thing against PostgreSQL: pollers that
 * step over each other's rows, a claim that waits behind a table lock, a connection that waits on a
 * row lock, jobs claimed past their SLA. Each test keeps to a queue of its own.
 */
class DegradationSignalsTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final Duration POLL = Duration.ofMillis(50);

	private static final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private static final MicrometerQueueMetrics metrics = new MicrometerQueueMetrics(registry, List.of());

	private static QueueFixture fixture;

	private static final Map<String, CountDownLatch> gates = new java.util.concurrent.ConcurrentHashMap<>();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("signals");
		fixture.metrics(metrics);
		for (String queue : List.of("contended", "alone", "leased-held", "idle-app")) {
			gates.put(queue, new CountDownLatch(1));
			fixture.handle(queue + ".job", queue, (job) -> gates.get(queue).await(WAIT.toSeconds(), TimeUnit.SECONDS));
		}
		fixture.configure(QueueSettings.defaults("contended").withConcurrency(1).withBatchSize(10).withPollInterval(POLL));
		fixture.configure(QueueSettings.defaults("alone").withConcurrency(1).withBatchSize(10).withPollInterval(POLL));
		fixture.configure(QueueSettings.defaults("idle-app").withConcurrency(4).withBatchSize(10).withPollInterval(POLL));
		fixture.configure(QueueSettings.defaults("leased-held").withMode(QueueMode.LEASED).withBatchSize(10)
			.withPollInterval(POLL));
		fixture.handle("idle-checks.job", "idle-checks", (job) -> {
		});
		fixture.configure(QueueSettings.defaults("idle-checks").withConcurrency(2).withPollInterval(POLL));
		fixture.handle("assessed.job", "assessed", (job) -> {
		});
		fixture.configure(QueueSettings.defaults("assessed").withPollInterval(POLL));
		for (QueueMode mode : QueueMode.values()) {
			fixture.handle(slaQueue(mode) + ".job", slaQueue(mode), (job) -> {
			});
			fixture.configure(QueueSettings.defaults(slaQueue(mode)).withMode(mode).withPollInterval(POLL)
				.withSla(Duration.ofMinutes(1)));
		}
	}

	@AfterAll
	static void tearDown() {
		gates.values().forEach(CountDownLatch::countDown);
		fixture.close();
	}

	@Test
	void aShortClaimThatSteppedOverAnotherPollersBatchIsUnproductive() {
		enqueue("contended", 15);
		List<JobPoller> pollers = fixture.startPollers("contended", 2);
		try {
			// One poller's batch holds ten rows while its listener waits; the other claim found five.
			await().atMost(WAIT).until(() -> counter("pgqueue.claims.unproductive", "contended") >= 1);
			gates.get("contended").countDown();
			await().atMost(WAIT).until(() -> completed("contended") == 15);
			assertThat(counter("pgqueue.jobs.claimed", "contended")).isEqualTo(15);
		}
		finally {
			pollers.forEach(JobPoller::stop);
		}
	}

	@Test
	void aClaimsOwnJobsDoNotMakeItUnproductive() {
		enqueue("alone", 3);
		JobPoller poller = fixture.poller("alone");
		poller.start();
		try {
			// The check runs while this poller's batch still holds its three rows.
			ClaimProgress progress = fixture.signals().get("alone");
			await().atMost(WAIT).until(() -> progress != null && progress.checkedClaims() >= 1);
			assertThat(counter("pgqueue.claims.unproductive", "alone")).isZero();
			assertThat(counter("pgqueue.jobs.claimed", "alone")).isEqualTo(3);
		}
		finally {
			gates.get("alone").countDown();
			poller.stop();
		}
	}

	@Test
	void jobsRunningInThisPollersOtherBatchesDoNotMakeAClaimUnproductive() {
		// An application that keeps up: jobs arrive one at a time, and each is claimed by a batch of its
		// own while the earlier ones still run. Each claim comes back short and steps over the rows the
		// poller's other batches hold: its own work, not contention.
		JobPoller poller = fixture.poller("idle-app");
		poller.start();
		try {
			ClaimProgress progress = await().atMost(WAIT).until(() -> fixture.signals().get("idle-app"),
					java.util.Objects::nonNull);
			for (int i = 1; i <= 3; i++) {
				enqueue("idle-app", 1);
				long claimed = i;
				await().atMost(WAIT).until(() -> counter("pgqueue.jobs.claimed", "idle-app") >= claimed);
				await().atMost(WAIT).until(() -> progress.checkedClaims() >= claimed);
			}
			// Three slots hold the three jobs; a fourth may still be finishing an empty claim of its own.
			await().atMost(WAIT).until(poller::busySlots, (busy) -> busy == 3);
			assertThat(counter("pgqueue.claims.unproductive", "idle-app")).isZero();
		}
		finally {
			gates.get("idle-app").countDown();
			poller.stop();
		}
	}

	@Test
	void anIdlePollersShortClaimsAreCheckedAtMostOnceASecond() throws Exception {
		// Every poll of an empty queue comes back short; checking each would keep a connection reading
		// the claim index for nothing.
		JobPoller poller = fixture.poller("idle-checks");
		poller.start();
		try {
			ClaimProgress progress = await().atMost(WAIT).until(() -> fixture.signals().get("idle-checks"),
					java.util.Objects::nonNull);
			await().atMost(WAIT).until(() -> progress.checkedClaims() >= 1);
			long polls = registry.get("pgqueue.poll.cycle").tag("queue", "idle-checks").timer().count();
			long checks = progress.checkedClaims();
			Thread.sleep(2_500);
			long pollsSince = registry.get("pgqueue.poll.cycle").tag("queue", "idle-checks").timer().count() - polls;
			long checksSince = progress.checkedClaims() - checks;
			assertThat(pollsSince).as("short claims in 2.5 s").isGreaterThanOrEqualTo(10);
			assertThat(checksSince).as("checks in 2.5 s").isBetween(1L, 3L);
		}
		finally {
			poller.stop();
		}
	}

	@Test
	void aLeasedClaimThatSteppedOverRowsAnotherTransactionHoldsIsUnproductive() throws Exception {
		enqueue("leased-held", 8);
		gates.get("leased-held").countDown();
		try (Connection holder = fixture.dataSource().getConnection()) {
			holder.setAutoCommit(false);
			try (Statement statement = holder.createStatement()) {
				// As another instance's transactional batch would.
				statement.executeQuery("SELECT id FROM " + fixture.table() + " WHERE queue = 'leased-held' ORDER BY id "
						+ "LIMIT 5 FOR UPDATE").close();
			}
			JobPoller poller = fixture.poller("leased-held");
			poller.start();
			try {
				await().atMost(WAIT).until(() -> counter("pgqueue.claims.unproductive", "leased-held") >= 1);
				assertThat(counter("pgqueue.jobs.claimed", "leased-held")).isEqualTo(3);
				holder.rollback();
				await().atMost(WAIT).until(() -> counter("pgqueue.jobs.claimed", "leased-held") == 8);
			}
			finally {
				poller.stop();
			}
		}
	}

	@Test
	void countsOnlyDueJobsThatAnotherTransactionHolds() throws Exception {
		enqueue("counted", 6);
		List<Long> rowIds = fixture.jdbc().queryForList("SELECT id FROM " + fixture.allJobs()
				+ " WHERE queue = 'counted' ORDER BY id", Long.class);
		try (Connection holder = fixture.dataSource().getConnection()) {
			holder.setAutoCommit(false);
			try (Statement statement = holder.createStatement()) {
				statement.executeQuery("SELECT id FROM " + fixture.table() + " WHERE id IN (" + rowIds.get(0) + ", "
						+ rowIds.get(1) + ") FOR UPDATE").close();
			}
			// Two held elsewhere, one the caller's own, three free: as if they became due after the claim.
			assertThat(fixture.repository().countHeldElsewhere("counted", new String[] { "counted.job" },
					new Long[] { rowIds.get(2) }, 10)).isEqualTo(2);
			holder.rollback();
		}
	}

	@Test
	void aClaimThatWaitedBehindATableLockMakesThePollCycleBroken() throws Exception {
		QueueFixture.Maintenance maintenance = fixture.maintenance((m) -> m);
		JobPoller poller = fixture.poller("assessed");
		poller.start();
		try (Connection holder = fixture.dataSource().getConnection()) {
			ClaimProgress progress = fixture.signals().get("assessed");
			await().atMost(WAIT).until(() -> registry.get("pgqueue.poll.cycle").tag("queue", "assessed").timer()
				.count() >= 2);
			maintenance.assessPollCycles();
			assertThat(progress.pollCycleAssessment()).isNotEqualTo(PollCycleAssessment.BROKEN);
			assertThat(gauge("pgqueue.poll.cycle.assessment", "assessed")).isLessThan(3.0);
			holder.setAutoCommit(false);
			try (Statement statement = holder.createStatement()) {
				// Conflicts with the claim's row locks, not with plain reads.
				statement.execute("LOCK TABLE " + fixture.table() + " IN EXCLUSIVE MODE");
			}
			await().atMost(WAIT).until(() -> fixture.jdbc().queryForObject("SELECT count(*) FROM pg_stat_activity "
					+ "WHERE wait_event_type = 'Lock' AND position(? IN query) > 0 "
					+ "AND clock_timestamp() - query_start > interval '600 milliseconds'", Long.class,
					fixture.schema().name()) > 0);
			holder.commit();
			await().atMost(WAIT).untilAsserted(() -> {
				maintenance.assessPollCycles();
				assertThat(progress.pollCycleP99()).isGreaterThan(Duration.ofMillis(600));
				assertThat(progress.pollCycleAssessment()).isEqualTo(PollCycleAssessment.BROKEN);
				assertThat(gauge("pgqueue.poll.cycle.assessment", "assessed")).isEqualTo(3.0);
			});
		}
		finally {
			poller.stop();
		}
	}

	@Test
	void countsTheConnectionsOfThisApplicationThatWaitOnALock() throws Exception {
		String application = "pgqueue-signals-" + UUID.randomUUID().toString().substring(0, 8);
		List<UUID> ids = enqueue("locked", 1);
		long rowId = fixture.jdbc().queryForObject("SELECT id FROM " + fixture.allJobs() + " WHERE public_id = ?",
				Long.class, ids.get(0));
		try (HikariDataSource pool = fixture.schema().newPool(4, application);
				QueueEngine engine = QueueEngine.builder(pool)
					.settings(fixture.engineSettings())
					.metrics(metrics)
					.build()) {
			QueueFixture.Maintenance maintenance = QueueFixture.Maintenance.of(engine);
			assertThat(maintenance.readLockWaits()).isEqualTo(new LockWaits(application, 0));
			List<CompletableFuture<Void>> waiters = new ArrayList<>();
			try (Connection holder = pool.getConnection()) {
				holder.setAutoCommit(false);
				try (Statement statement = holder.createStatement()) {
					statement.executeQuery("SELECT id FROM " + fixture.table() + " WHERE id = " + rowId + " FOR UPDATE")
						.close();
				}
				// One of this application's connections waits on the row, and one of another application's.
				waiters.add(updateRow(pool, rowId));
				waiters.add(updateRow(fixture.dataSource(), rowId));
				await().atMost(WAIT).until(() -> fixture.jdbc().queryForObject("SELECT count(*) FROM pg_stat_activity "
						+ "WHERE wait_event_type = 'Lock' AND pg_blocking_pids(pid) <> '{}' AND position(? IN query) > 0",
						Long.class, fixture.schema().name()) == 2);
				assertThat(maintenance.readLockWaits()).isEqualTo(new LockWaits(application, 1));
				assertThat(registry.get("pgqueue.database.lock.waits").gauge().value()).isEqualTo(1.0);
				holder.rollback();
			}
			CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
			assertThat(maintenance.readLockWaits().waiting()).isZero();
			assertThat(registry.get("pgqueue.database.lock.waits").gauge().value()).isZero();
		}
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void countsJobsClaimedLaterThanTheirRunAtPlusTheSla(QueueMode mode) {
		String queue = slaQueue(mode);
		JobClient client = fixture.client();
		UUID late = client.enqueue(JobRequest.of(queue + ".job", 1).queue(queue)
			.runAt(Instant.now().minus(Duration.ofHours(1))));
		UUID onTime = client.enqueue(JobRequest.of(queue + ".job", 2).queue(queue));
		JobPoller poller = fixture.poller(queue);
		poller.start();
		try {
			await().atMost(WAIT).until(() -> "completed".equals(fixture.row(late).get("state"))
					&& "completed".equals(fixture.row(onTime).get("state")));
			ClaimProgress progress = fixture.signals().get(queue);
			assertThat(progress.slaMissed()).isEqualTo(1);
			assertThat(progress.slaSlipping()).isTrue();
			assertThat(counter("pgqueue.jobs.sla.missed", queue)).isEqualTo(1);
		}
		finally {
			poller.stop();
		}
	}

	private static String slaQueue(QueueMode mode) {
		return "sla-" + mode.name().toLowerCase(java.util.Locale.ROOT);
	}

	private static List<UUID> enqueue(String queue, int count) {
		return fixture.client().enqueueAll(IntStream.range(0, count)
			.mapToObj((i) -> JobRequest.of(queue + ".job", i).queue(queue))
			.toList());
	}

	private static long completed(String queue) {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs()
				+ " WHERE queue = ? AND state = 'completed'", Long.class, queue);
	}

	private static CompletableFuture<Void> updateRow(DataSource dataSource, long rowId) {
		// A thread of its own: the common pool may have a single thread on a small machine, and the
		// second waiter would then wait for the first to finish instead of waiting on the lock.
		return CompletableFuture.runAsync(() -> new JdbcTemplate(dataSource)
			.update("UPDATE " + fixture.table() + " SET priority = priority WHERE id = ?", rowId),
				(task) -> new Thread(task, "lock-waiter").start());
	}

	private static double counter(String name, String queue) {
		var counter = registry.find(name).tag("queue", queue).counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static double gauge(String name, String queue) {
		return registry.get(name).tag("queue", queue).gauge().value();
	}

}
