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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A batch whose connection dies mid-way (a failover, an administrator, a network cut) rolls back as
 * a whole: its jobs and their handlers' writes are as if never claimed, and the poller carries on.
 */
class KilledConnectionTests {

	private static final String QUEUE = "killed";

	private static final int CONCURRENCY = 2;

	private static final int BATCH_SIZE = 5;

	private static QueueFixture fixture;

	private static final CountDownLatch release = new CountDownLatch(1);

	private static final AtomicInteger blocked = new AtomicInteger();

	private static final Map<UUID, AtomicInteger> runs = new ConcurrentHashMap<>();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("killed");
		fixture.jdbc().execute("CREATE TABLE ledger (job_id uuid PRIMARY KEY)");
		fixture.configure(QueueSettings.defaults(QUEUE)
			.withConcurrency(CONCURRENCY)
			.withBatchSize(BATCH_SIZE)
			.withPollInterval(Duration.ofMillis(50)));
		fixture.handle("ledger.write-and-wait", QUEUE, (job) -> {
			runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
			fixture.jdbc().update("INSERT INTO ledger (job_id) VALUES (?)", job.id());
			if (release.getCount() > 0) {
				blocked.incrementAndGet();
				release.await();
			}
		});
	}

	@AfterAll
	static void tearDown() {
		release.countDown();
		fixture.close();
	}

	@Test
	void batchWhoseConnectionIsKilledLosesNoJobAndUsesNoAttempt() throws Exception {
		List<UUID> ids = enqueue(CONCURRENCY * BATCH_SIZE);
		JobPoller poller = fixture.poller(QUEUE);
		poller.start();
		try {
			// Each slot's batch holds its transaction open in its first handler.
			await().atMost(Duration.ofSeconds(30)).until(() -> blocked.get() == CONCURRENCY);
			List<Integer> killed = terminateBackendsLockingJobs();
			assertThat(killed).as("backends of the open batches").hasSize(CONCURRENCY);
			await().atMost(Duration.ofSeconds(30)).until(() -> backendsAlive(killed) == 0);
			release.countDown();

			awaitCompleted(ids);
			assertThat(ledgerRows(ids)).isEqualTo(ids.size());
			assertThat(attemptsOf(ids)).as("attempts of a rolled-back batch are not counted").containsOnly(1);
			// The blocked handlers ran again, and so may the jobs after them in the killed batches (they
			// ran on a dead connection, which failed them, and rolled nothing forward).
			assertThat(runs.values().stream().filter((count) -> count.get() == 2).count())
				.as("the handlers of the killed batches ran again")
				.isBetween((long) CONCURRENCY, (long) CONCURRENCY * BATCH_SIZE);
			assertThat(runs.values().stream().filter((count) -> count.get() > 2)).isEmpty();

			assertThat(poller.isRunning()).isTrue();
			List<UUID> later = enqueue(BATCH_SIZE);
			awaitCompleted(later);
			assertThat(ledgerRows(later)).isEqualTo(later.size());
		}
		finally {
			release.countDown();
			poller.stop();
		}
	}

	private static List<UUID> enqueue(int count) {
		return fixture.client()
			.enqueueAll(IntStream.range(0, count).mapToObj((i) -> JobRequest.of("ledger.write-and-wait", i)).toList());
	}

	/** Terminates, from an administrative connection, every backend holding a lock on the jobs table. */
	private static List<Integer> terminateBackendsLockingJobs() throws Exception {
		List<Integer> pids = new ArrayList<>();
		try (Connection admin = TestDatabase.get().connect();
				PreparedStatement statement = admin.prepareStatement("""
						SELECT pid, pg_terminate_backend(pid) FROM (
						    SELECT DISTINCT pid FROM pg_locks
						    WHERE relation = ?::regclass AND granted AND pid <> pg_backend_pid()) holders
						""")) {
			statement.setString(1, fixture.table());
			try (ResultSet rs = statement.executeQuery()) {
				while (rs.next()) {
					assertThat(rs.getBoolean(2)).as("terminated backend %d", rs.getInt(1)).isTrue();
					pids.add(rs.getInt(1));
				}
			}
		}
		return pids;
	}

	private static long backendsAlive(List<Integer> pids) throws Exception {
		try (Connection admin = TestDatabase.get().connect();
				PreparedStatement statement = admin
					.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(?)")) {
			statement.setArray(1, admin.createArrayOf("int4", pids.toArray()));
			try (ResultSet rs = statement.executeQuery()) {
				rs.next();
				return rs.getLong(1);
			}
		}
	}

	private static void awaitCompleted(List<UUID> ids) {
		await().atMost(Duration.ofSeconds(60))
			.until(() -> fixture.jdbc()
				.queryForObject("SELECT count(*) FROM " + fixture.allJobs()
						+ " WHERE public_id = ANY(?::uuid[]) AND state = 'completed'", Long.class, uuidArray(ids)) == ids
							.size());
	}

	private static long ledgerRows(List<UUID> ids) {
		return fixture.jdbc()
			.queryForObject("SELECT count(*) FROM ledger WHERE job_id = ANY(?::uuid[])", Long.class, uuidArray(ids));
	}

	private static List<Integer> attemptsOf(List<UUID> ids) {
		return fixture.jdbc()
			.queryForList("SELECT attempt FROM " + fixture.allJobs() + " WHERE public_id = ANY(?::uuid[])", Integer.class,
					uuidArray(ids));
	}

	private static String uuidArray(List<UUID> ids) {
		return ids.stream().map(UUID::toString).collect(java.util.stream.Collectors.joining(",", "{", "}"));
	}

}
