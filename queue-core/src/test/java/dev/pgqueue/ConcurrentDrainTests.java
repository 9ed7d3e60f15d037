package dev.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Eight pollers on one queue, as if in eight instances, drain twenty thousand jobs: each runs
 * exactly once, whichever mode claims it.
 */
class ConcurrentDrainTests {

	private static final int JOBS = 20_000;

	private static final int CHUNK = 1_000;

	private static final int POLLERS = 8;

	private static final int CONCURRENCY = 2;

	private static QueueFixture fixture;

	private static final Map<UUID, AtomicInteger> transactionalRuns = new ConcurrentHashMap<>();

	private static final Map<UUID, AtomicInteger> leasedRuns = new ConcurrentHashMap<>();

	private static final Set<Thread> transactionalWorkers = ConcurrentHashMap.newKeySet();

	private static final Set<Thread> leasedWorkers = ConcurrentHashMap.newKeySet();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("drain");
		fixture.jdbc().execute("CREATE TABLE ledger (job_id uuid PRIMARY KEY)");
		// Every transactional slot holds a connection for its whole batch: 8 pollers x 2 = 16 of the
		// pool's 32. A leased worker holds one only to record its outcome.
		fixture.configure(QueueSettings.defaults("drain-tx")
			.withConcurrency(CONCURRENCY)
			.withBatchSize(50)
			.withPollInterval(Duration.ofMillis(100)));
		fixture.configure(QueueSettings.defaults("drain-leased")
			.withMode(QueueMode.LEASED)
			.withConcurrency(CONCURRENCY)
			.withBatchSize(20)
			.withPollInterval(Duration.ofMillis(100)));
		fixture.handle("drain.ledger", "drain-tx", (job) -> {
			count(transactionalRuns, job);
			transactionalWorkers.add(Thread.currentThread());
			// Joins the batch transaction: the row commits with the job's completion or not at all.
			fixture.jdbc().update("INSERT INTO ledger (job_id) VALUES (?)", job.id());
		});
		fixture.handle("drain.count", "drain-leased", (job) -> {
			count(leasedRuns, job);
			leasedWorkers.add(Thread.currentThread());
		});
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void transactionalPollersRunEachJobExactlyOnceAndCommitItsWorkOnce() {
		List<UUID> ids = enqueue("drain.ledger");
		List<JobPoller> pollers = fixture.startPollers("drain-tx", POLLERS);
		try {
			awaitCompleted("drain-tx");
		}
		finally {
			stopAll(pollers);
		}

		assertThat(fixture.jdbc().queryForObject("SELECT count(DISTINCT job_id) FROM ledger", Long.class))
			.isEqualTo(JOBS);
		assertThat(fixture.jdbc()
			.queryForObject("SELECT count(*) FROM ledger l JOIN " + fixture.allJobs()
					+ " j ON j.public_id = l.job_id WHERE j.queue = 'drain-tx'", Long.class))
			.isEqualTo(JOBS);
		assertOnlyCompletedOnFirstAttempt("drain-tx");
		assertRanOnce(transactionalRuns, ids);
		assertThat(transactionalWorkers).as("worker threads of more than one poller ran jobs")
			.hasSizeGreaterThan(CONCURRENCY);
	}

	@Test
	void leasedPollersRunEachJobExactlyOnce() {
		List<UUID> ids = enqueue("drain.count");
		List<JobPoller> pollers = fixture.startPollers("drain-leased", POLLERS);
		try {
			awaitCompleted("drain-leased");
		}
		finally {
			stopAll(pollers);
		}

		assertOnlyCompletedOnFirstAttempt("drain-leased");
		assertThat(fixture.jdbc()
			.queryForObject("SELECT count(*) FROM " + fixture.allJobs()
					+ " WHERE queue = 'drain-leased' AND (lease_owner IS NOT NULL OR lease_until IS NOT NULL)", Long.class))
			.isZero();
		assertRanOnce(leasedRuns, ids);
		assertThat(leasedWorkers).as("worker threads of more than one poller ran jobs").hasSizeGreaterThan(CONCURRENCY);
	}

	private static List<UUID> enqueue(String kind) {
		List<UUID> ids = new ArrayList<>(JOBS);
		for (int chunk = 0; chunk < JOBS / CHUNK; chunk++) {
			List<JobRequest> requests = new ArrayList<>(CHUNK);
			for (int i = 0; i < CHUNK; i++) {
				requests.add(JobRequest.of(kind, Map.of("n", chunk * CHUNK + i)));
			}
			ids.addAll(fixture.client().enqueueAll(requests));
		}
		assertThat(ids).doesNotHaveDuplicates().hasSize(JOBS);
		return ids;
	}

	private static void awaitCompleted(String queue) {
		await().atMost(Duration.ofSeconds(180))
			.pollInterval(Duration.ofMillis(500))
			.until(() -> fixture.jdbc()
				.queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE queue = ? AND state = 'completed'",
						Long.class, queue) == JOBS);
	}

	private static void assertOnlyCompletedOnFirstAttempt(String queue) {
		Map<String, Object> summary = fixture.jdbc()
			.queryForMap("SELECT count(*) AS total, count(*) FILTER (WHERE state = 'completed') AS completed, "
					+ "count(*) FILTER (WHERE attempt <> 1) AS not_first_attempt FROM " + fixture.allJobs()
					+ " WHERE queue = ?", queue);
		assertThat(summary).containsEntry("total", (long) JOBS)
			.containsEntry("completed", (long) JOBS)
			.containsEntry("not_first_attempt", 0L);
	}

	private static void assertRanOnce(Map<UUID, AtomicInteger> runs, List<UUID> ids) {
		assertThat(runs).hasSize(JOBS).containsOnlyKeys(ids);
		assertThat(runs.entrySet()).filteredOn((entry) -> entry.getValue().get() != 1)
			.as("jobs that ran more than once")
			.isEmpty();
	}

	private static void count(Map<UUID, AtomicInteger> runs, Job job) {
		runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
	}

	private static void stopAll(List<JobPoller> pollers) {
		List<CompletableFuture<Void>> stopped = new ArrayList<>();
		for (JobPoller poller : pollers) {
			CompletableFuture<Void> done = new CompletableFuture<>();
			poller.stop(() -> done.complete(null));
			stopped.add(done);
		}
		CompletableFuture.allOf(stopped.toArray(CompletableFuture[]::new)).orTimeout(60, TimeUnit.SECONDS).join();
	}

}
