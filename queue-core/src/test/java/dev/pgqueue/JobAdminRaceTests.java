package dev.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import dev.pgqueue.AdminResult.Outcome;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Operators and workers at the same moment, on real threads and real connections: two pollers run
 * a queue's jobs while an operator's thread cancels or retries the same jobs as fast as it can. The
 * operation must never overwrite what a worker wrote, and no worker what the operation wrote.
 */
class JobAdminRaceTests {

	private static final int JOBS = 300;

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static QueueFixture fixture;

	private static JobAdmin admin;

	/** Runs of each job's listener, by job id. */
	private static final Map<UUID, AtomicInteger> runs = new ConcurrentHashMap<>();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("admin_race");
		for (QueueMode mode : QueueMode.values()) {
			String queue = queue(mode);
			fixture.configure(QueueSettings.defaults(queue).withMode(mode).withConcurrency(2).withBatchSize(5)
				.withPollInterval(Duration.ofMillis(20)).withMaxAttempts(1));
			fixture.handle("work." + queue, queue, (job) -> {
				run(job);
				Thread.sleep(ThreadLocalRandom.current().nextInt(3));
			});
			// Fails on its first run, completes on any later one.
			fixture.handle("fail-once." + queue, queue, (job) -> {
				int run = run(job);
				Thread.sleep(ThreadLocalRandom.current().nextInt(3));
				if (run == 1) {
					throw new IllegalStateException("first run fails");
				}
			});
		}
		admin = fixture.admin();
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	private static int run(Job job) {
		return runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
	}

	private static int runsOf(UUID id) {
		AtomicInteger count = runs.get(id);
		return (count != null) ? count.get() : 0;
	}

	private static String queue(QueueMode mode) {
		return mode.name().toLowerCase(Locale.ROOT);
	}

	/**
	 * Each job is either cancelled before any worker took it, and never runs, or run once and
	 * completed; a cancel that comes while a worker has it answers so and changes nothing.
	 */
	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aJobIsEitherCancelledAndNeverRunOrRunOnceAndCompleted(QueueMode mode) {
		String queue = queue(mode);
		List<UUID> ids = enqueue("work." + queue);
		List<JobPoller> pollers = List.of(fixture.poller(queue), fixture.poller(queue));
		Set<UUID> cancelled = ConcurrentHashMap.newKeySet();
		Map<Outcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
		List<UUID> order = new ArrayList<>(ids);
		Collections.shuffle(order);
		pollers.forEach(JobPoller::start);
		try {
			Thread operator = new Thread(() -> {
				for (UUID id : order) {
					AdminResult result = admin.cancel(id);
					outcomes.computeIfAbsent(result.outcome(), (o) -> new AtomicInteger()).incrementAndGet();
					if (result.applied()) {
						cancelled.add(id);
					}
				}
			}, "operator");
			operator.start();
			await().atMost(WAIT).until(() -> !operator.isAlive() && finished(ids));
		}
		finally {
			pollers.forEach(JobPoller::stop);
		}
		Map<UUID, JobState> states = states(ids);
		for (UUID id : ids) {
			if (cancelled.contains(id)) {
				assertThat(states.get(id)).as("job %s, cancelled", id).isEqualTo(JobState.CANCELLED);
				assertThat(runsOf(id)).as("runs of job %s, cancelled", id).isZero();
			}
			else {
				assertThat(states.get(id)).as("job %s, not cancelled", id).isEqualTo(JobState.COMPLETED);
				assertThat(runsOf(id)).as("runs of job %s, completed", id).isEqualTo(1);
			}
		}
		System.out.printf("cancel race, %s: %d cancelled, %d completed; answers %s%n", queue, cancelled.size(),
				ids.size() - cancelled.size(), outcomes);
		assertThat(cancelled).as("some jobs were cancelled before a worker took them").isNotEmpty();
		assertThat(cancelled).as("some jobs ran before the operator reached them").hasSizeLessThan(ids.size());
	}

	/**
	 * Every job fails its first run for good (one attempt), and completes when run again; the
	 * operator retries each job until one retry is applied. A retry applies only to a job whose
	 * failure a worker has recorded, so each job runs exactly twice and ends completed: a retry that
	 * overwrote a job still waiting or running would leave it with one run, failed.
	 */
	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aRetryAppliesOnlyToAFailureAWorkerHasRecorded(QueueMode mode) {
		String queue = queue(mode);
		List<UUID> ids = enqueue("fail-once." + queue);
		List<JobPoller> pollers = List.of(fixture.poller(queue), fixture.poller(queue));
		Map<Outcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
		pollers.forEach(JobPoller::start);
		try {
			Thread operator = new Thread(() -> {
				Set<UUID> left = new HashSet<>(ids);
				while (!left.isEmpty()) {
					List<UUID> round = new ArrayList<>(left);
					Collections.shuffle(round);
					for (UUID id : round) {
						AdminResult result = admin.retry(id);
						outcomes.computeIfAbsent(result.outcome(), (o) -> new AtomicInteger()).incrementAndGet();
						if (result.applied()) {
							left.remove(id);
						}
					}
				}
			}, "operator");
			operator.start();
			await().atMost(WAIT).until(() -> !operator.isAlive() && finished(ids));
		}
		finally {
			pollers.forEach(JobPoller::stop);
		}
		Map<UUID, JobState> states = states(ids);
		for (UUID id : ids) {
			assertThat(states.get(id)).as("job %s", id).isEqualTo(JobState.COMPLETED);
			assertThat(runsOf(id)).as("runs of job %s", id).isEqualTo(2);
		}
		System.out.printf("retry race, %s: answers %s%n", queue, outcomes);
		assertThat(outcomes.keySet()).as("the operator met jobs that were waiting or running")
			.containsAnyOf(Outcome.NOT_ALLOWED, Outcome.RUNNING);
	}

	private static List<UUID> enqueue(String kind) {
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < JOBS; i++) {
			requests.add(JobRequest.of(kind, i));
		}
		return fixture.client().enqueueAll(requests);
	}

	private static boolean finished(List<UUID> ids) {
		return states(ids).values().stream().allMatch(JobState::isFinished);
	}

	private static Map<UUID, JobState> states(List<UUID> ids) {
		Map<UUID, JobState> states = new ConcurrentHashMap<>();
		fixture.jdbc().query("SELECT public_id, state FROM " + fixture.allJobs() + " WHERE public_id = ANY(?::uuid[])",
				(java.sql.ResultSet rs) -> {
					states.put(rs.getObject(1, UUID.class), JobState.fromSqlValue(rs.getString(2)));
				}, ids.stream().map(UUID::toString).collect(Collectors.joining(",", "{", "}")));
		return states;
	}

}
