package dev.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.service.EngineThreads;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.metrics.QueueMetrics;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Leased mode's claim-ahead: a poller whose jobs are short claims beyond its free workers, so that
 * it needs far fewer claims than jobs; jobs it claimed ahead go back to the queue, without using an
 * attempt, when they wait too long behind a busy worker or when the poller stops.
 */
class ClaimAheadTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final int SHORT_JOBS = 2_000;

	private static final int FOLLOWERS = 5;

	private static final Map<String, List<Integer>> claims = new ConcurrentHashMap<>();

	/** Claims made on the queue's worker threads rather than its poll thread, by queue. */
	private static final Map<String, AtomicInteger> workerClaims = new ConcurrentHashMap<>();

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("claim_ahead").metrics(new QueueMetrics() {
			@Override
			public void pollCycle(String queue, long nanos, int claimed) {
				if (claimed > 0) {
					claims.computeIfAbsent(queue, (q) -> java.util.Collections.synchronizedList(new ArrayList<>()))
						.add(claimed);
				}
				// Empty ones too: a worker that claims into an empty queue costs a round trip all the same.
				if (Thread.currentThread().getName().startsWith(EngineThreads.name(queue, "worker"))) {
					workerClaims.computeIfAbsent(queue, (q) -> new AtomicInteger()).incrementAndGet();
				}
			}
		});
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	private static QueueSettings leased(String queue) {
		return QueueSettings.defaults(queue).withMode(QueueMode.LEASED).withConcurrency(1).withBatchSize(100)
			.withPollInterval(Duration.ofMillis(50));
	}

	@Test
	void shortJobsNeedFarFewerClaimsThanJobs() {
		fixture.configure(leased("ahead"));
		Set<UUID> ran = ConcurrentHashMap.newKeySet();
		AtomicInteger calls = new AtomicInteger();
		fixture.handle("ahead.job", "ahead", (job) -> {
			calls.incrementAndGet();
			ran.add(job.id());
		});
		List<UUID> ids = enqueue("ahead.job", "ahead", SHORT_JOBS);
		JobPoller poller = fixture.poller("ahead");
		poller.start();
		try {
			await().atMost(WAIT).until(() -> fixture.jdbc()
				.queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE queue = 'ahead' AND state = "
						+ "'completed' AND attempt = 1", Long.class) == SHORT_JOBS);
		}
		finally {
			poller.stop();
		}
		assertThat(ran).containsExactlyInAnyOrderElementsOf(ids);
		assertThat(calls).hasValue(SHORT_JOBS);
		List<Integer> sizes = List.copyOf(claims.get("ahead"));
		// One worker: without claim-ahead every claim would take one job.
		assertThat(sizes).as("claim sizes").anySatisfy((size) -> assertThat(size).isGreaterThan(1));
		// Claims adapt: at most max-batch-size, beyond the batch size of 100.
		int most = leased("ahead").maxBatchSize();
		assertThat(sizes).as("claim sizes").allSatisfy((size) -> assertThat(size).isLessThanOrEqualTo(most));
		assertThat(sizes.size()).as("claims for %d jobs", SHORT_JOBS).isLessThanOrEqualTo(SHORT_JOBS / 5);
	}

	@Test
	void withoutClaimAheadAClaimNeverExceedsTheFreeWorkers() {
		fixture.configure(leased("strict").withClaimAhead(false).withConcurrency(2));
		AtomicInteger calls = new AtomicInteger();
		fixture.handle("strict.job", "strict", (job) -> calls.incrementAndGet());
		enqueue("strict.job", "strict", 300);
		JobPoller poller = fixture.poller("strict");
		poller.start();
		try {
			await().atMost(WAIT).until(() -> calls.get() == 300);
		}
		finally {
			poller.stop();
		}
		assertThat(claims.get("strict")).as("claim sizes").allSatisfy((size) -> assertThat(size).isLessThanOrEqualTo(2));
		assertThat(poller.claimedAheadJobs()).isZero();
	}

	@Test
	void jobsClaimedAheadBehindABusyWorkerGoBackWithoutUsingAnAttempt() throws Exception {
		fixture.configure(leased("stuck"));
		Blocked blocked = new Blocked();
		fixture.handle("stuck.job", "stuck", blocked::handle);
		List<UUID> followers = blocked.enqueue("stuck");
		JobPoller poller = fixture.poller("stuck");
		poller.start();
		// A second instance of the queue that never claims ahead, free to run what the first returns.
		QueueEngine second = fixture.engineBuilder()
			.settings(fixture.engineSettings().withWorkers(new WorkerSettings(Duration.ofSeconds(10), false, false)))
			.queues(new QueueCatalog(QueueSettings.defaults("default"), List.of(leased("stuck").withClaimAhead(false))))
			.metrics(QueueMetrics.NONE)
			.build();
		JobPoller other = EngineInternals.of(second).newPoller("stuck", null);
		try {
			blocked.awaitHeldAhead(poller);
			other.start();
			await().atMost(WAIT).until(() -> followers.stream()
				.allMatch((id) -> "completed".equals(fixture.row(id).get("state"))));
			for (UUID id : followers) {
				assertThat(fixture.row(id)).as("follower %s", id).containsEntry("attempt", 1);
			}
			assertThat(fixture.row(blocked.blockerId())).containsEntry("state", "running")
				.containsEntry("lease_owner", poller.owner());
		}
		finally {
			blocked.release();
			poller.stop();
			other.stop();
		}
		await().atMost(WAIT).until(() -> "completed".equals(fixture.row(blocked.blockerId()).get("state")));
		assertThat(fixture.row(blocked.blockerId())).containsEntry("attempt", 1);
	}

	@Test
	void stoppingReturnsJobsClaimedAheadAtOnce() throws Exception {
		// A poll interval longer than the shutdown takes: jobs claimed ahead may wait that long, so
		// only the stop can have returned them.
		fixture.configure(leased("stopping").withPollInterval(Duration.ofSeconds(20)));
		Blocked blocked = new Blocked();
		fixture.handle("stopping.job", "stopping", blocked::handle);
		List<UUID> followers = blocked.enqueue("stopping");
		JobPoller poller = fixture.poller("stopping");
		poller.start();
		Thread stopper = null;
		try {
			blocked.awaitHeldAhead(poller);
			stopper = new Thread(poller::stop);
			stopper.start();
			// The blocker still runs (the shutdown timeout is 10 s); the waiting jobs are back already.
			await().atMost(Duration.ofSeconds(5)).until(() -> followers.stream()
				.allMatch((id) -> "available".equals(fixture.row(id).get("state"))));
			for (UUID id : followers) {
				assertThat(fixture.row(id)).as("follower %s", id).containsEntry("attempt", 0)
					.containsEntry("lease_owner", null);
			}
			assertThat(fixture.row(blocked.blockerId())).containsEntry("state", "running");
		}
		finally {
			blocked.release();
			if (stopper != null) {
				stopper.join(WAIT.toMillis());
			}
			poller.stop();
		}
		await().atMost(WAIT).until(() -> "completed".equals(fixture.row(blocked.blockerId()).get("state")));
	}

	@Test
	void jobsClaimedAheadWhoseLeaseWasLostAreNeverStartedHere() throws Exception {
		// A poll interval longer than the test: no stale return can take the jobs out of the FIFO.
		fixture.configure(leased("lost").withPollInterval(Duration.ofSeconds(20)).withLeaseDuration(Duration.ofSeconds(3)));
		Blocked blocked = new Blocked();
		Set<UUID> ran = ConcurrentHashMap.newKeySet();
		fixture.handle("lost.job", "lost", (job) -> {
			ran.add(job.id());
			blocked.handle(job);
		});
		List<UUID> followers = blocked.enqueue("lost");
		JobPoller poller = fixture.poller("lost");
		poller.start();
		List<UUID> taken;
		try {
			blocked.awaitHeldAhead(poller);
			// What a rescuer and another instance do to jobs whose lease ran out while this process was
			// paused: the rows are someone else's now, while the poller still holds them in its FIFO. Only
			// the followers: a warm-up job that ran may still be 'running' until the completer writes it.
			String followerIds = followers.stream().map(UUID::toString).collect(Collectors.joining(",", "{", "}"));
			taken = fixture.jdbc().queryForList("UPDATE " + fixture.table() + " SET lease_owner = 'other-instance', "
					+ "lease_until = now() + interval '1 hour' WHERE queue = 'lost' AND state = 'running' "
					+ "AND lease_owner = ? AND public_id = ANY (?::uuid[]) RETURNING public_id", UUID.class,
					poller.owner(), followerIds);
			assertThat(taken).isNotEmpty();
			// The next lease extension finds them gone and drops them from the FIFO.
			await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
				.until(() -> poller.claimedAheadJobs() == 0);
			blocked.release();
			await().atMost(WAIT).until(() -> "completed".equals(fixture.row(blocked.blockerId()).get("state")));
		}
		finally {
			blocked.release();
			poller.stop();
		}
		assertThat(ran).as("jobs run by this poller").contains(blocked.blockerId()).doesNotContainAnyElementsOf(taken);
		for (UUID id : taken) {
			assertThat(fixture.row(id)).as("job %s", id).containsEntry("state", "running")
				.containsEntry("lease_owner", "other-instance")
				.containsEntry("attempt", 1);
		}
	}

	@Test
	void withBatchSizeOneIdleWorkersClaimTheirOwnNextJobInParallel() {
		String queue = "single";
		fixture.configure(QueueSettings.defaults(queue).withMode(QueueMode.LEASED).withConcurrency(4).withBatchSize(1)
			.withPollInterval(Duration.ofMillis(50)));
		Map<UUID, AtomicInteger> runs = new ConcurrentHashMap<>();
		AtomicInteger running = new AtomicInteger();
		AtomicInteger mostAtOnce = new AtomicInteger();
		// The first two jobs wait for each other, so two must run at once before the queue moves on.
		CountDownLatch twoRunning = new CountDownLatch(2);
		fixture.handle(queue + ".job", queue, (job) -> {
			mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
			runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
			twoRunning.countDown();
			twoRunning.await(10, TimeUnit.SECONDS);
			running.decrementAndGet();
		});
		int jobs = 400;
		enqueue(queue + ".job", queue, jobs);
		JobPoller poller = fixture.poller(queue);
		poller.start();
		try {
			await().atMost(WAIT).until(() -> fixture.jdbc()
				.queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE queue = ? AND state = 'completed' "
						+ "AND attempt = 1", Long.class, queue) == jobs);
		}
		finally {
			poller.stop();
		}
		assertThat(runs).hasSize(jobs).allSatisfy((id, count) -> assertThat(count).hasValue(1));
		// Every claim takes one job (the batch size), made by the poll thread or by a worker for itself.
		assertThat(claims.get(queue)).hasSize(jobs).containsOnly(1);
		assertThat(workerClaims.getOrDefault(queue, new AtomicInteger()).get())
			.as("claims made on worker threads, alongside the poll thread's").isGreaterThan(jobs / 4);
		assertThat(mostAtOnce.get()).isGreaterThan(1);
	}

	@Test
	void aQueueThatKeepsUpCostsNoWorkerClaims() {
		String queue = "trickle";
		fixture.configure(QueueSettings.defaults(queue).withMode(QueueMode.LEASED).withConcurrency(8).withBatchSize(10)
			.withPollInterval(Duration.ofMillis(50)));
		Set<UUID> ran = ConcurrentHashMap.newKeySet();
		fixture.handle(queue + ".job", queue, (job) -> ran.add(job.id()));
		JobPoller poller = fixture.poller(queue);
		poller.start();
		try {
			// One job at a time, the next once the last has run: a claim asks for 8 (the free workers)
			// and finds one, never all it asks for, so there is no backlog for workers to claim into.
			for (int i = 0; i < 15; i++) {
				fixture.client().enqueue(queue + ".job", i);
				int done = i + 1;
				await().atMost(WAIT).until(() -> ran.size() == done);
			}
		}
		finally {
			poller.stop();
		}
		assertThat(claims.get(queue)).isNotEmpty();
		assertThat(workerClaims.get(queue)).as("claims made on worker threads").isNull();
	}

	private static List<UUID> enqueue(String kind, String queue, int count) {
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			requests.add(JobRequest.of(kind, Map.of("n", i)).queue(queue));
		}
		return fixture.client().enqueueAll(requests);
	}

	/**
	 * Short jobs that warm up the poller's estimate, then a job that blocks the only worker, then
	 * followers: the poller claims some of them ahead while the blocker runs.
	 */
	private static final class Blocked {

		private static final int WARM_UP = 500;

		private final CountDownLatch started = new CountDownLatch(1);

		private final CountDownLatch release = new CountDownLatch(1);

		private volatile UUID blockerId;

		List<UUID> enqueue(String queue) {
			List<UUID> ids = ClaimAheadTests.enqueue(queue + ".job", queue, WARM_UP + 1 + FOLLOWERS);
			this.blockerId = ids.get(WARM_UP);
			return List.copyOf(ids.subList(WARM_UP + 1, ids.size()));
		}

		void handle(Job job) throws InterruptedException {
			if (job.id().equals(this.blockerId)) {
				this.started.countDown();
				this.release.await();
			}
		}

		UUID blockerId() {
			return this.blockerId;
		}

		/** Waits until the blocker runs and the poller holds some followers claimed ahead. */
		void awaitHeldAhead(JobPoller poller) throws InterruptedException {
			assertThat(this.started.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("blocker started").isTrue();
			await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5))
				.until(() -> poller.claimedAheadJobs() > 0);
		}

		void release() {
			this.release.countDown();
		}

	}

}
