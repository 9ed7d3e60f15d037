package dev.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.ConcurrencyLimits;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Concurrency limits with several pollers in one JVM, each as if in an instance of its own (its
 * own claims, connections and workers): per key, per kind, per queue, and keys ordered. Every job
 * records when it started and ended; the assertions are about those intervals. The multi-process
 * proofs are in the reliability suite.
 */
class ConcurrencyLimitsTests {

	private static final Duration WAIT = Duration.ofMinutes(1);

	private QueueFixture fixture;

	private QueueFixture.Maintenance maintenance;

	private final List<Run> runs = new CopyOnWriteArrayList<>();

	private final Map<String, AtomicInteger> runningByKey = new ConcurrentHashMap<>();

	private final Map<String, Integer> mostByKey = new ConcurrentHashMap<>();

	private final AtomicInteger running = new AtomicInteger();

	private final AtomicInteger mostRunning = new AtomicInteger();

	/**
	 * When above 0, a job first waits until this many jobs of its key have run at once, or until
	 * {@link #meetingDeadline} (System.nanoTime) has passed.
	 */
	private volatile int meeting;

	private volatile long meetingDeadline;

	@AfterEach
	void tearDown() {
		if (this.maintenance != null) {
			this.maintenance.stop();
		}
		if (this.fixture != null) {
			this.fixture.close();
		}
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void jobsOfOneKeyNeverOverlapWhileKeysRunSideBySide(QueueMode mode) {
		start(mode, new ConcurrencyLimits(1, false, 0), 0, Duration.ofMillis(5));
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 15; i++) {
			for (int key = 0; key < 20; key++) {
				requests.add(request("tenant-" + key, i));
			}
		}
		this.fixture.client().enqueueAll(requests);
		awaitCompleted(300);

		assertNoOverlapPerKey();
		assertThat(this.mostByKey.values()).as("most jobs of one key running at once").containsOnly(1);
		assertThat(this.mostRunning.get()).as("keys ran side by side").isGreaterThan(1);
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aKeyNeverRunsMoreThanItsLimit(QueueMode mode) {
		// Reaching the limit takes three batches running a job of one key at the same moment.
		meetAt(3);
		start(mode, new ConcurrencyLimits(3, false, 0), 0, Duration.ofMillis(20));
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 80; i++) {
			for (int key = 0; key < 3; key++) {
				requests.add(request("account-" + key, i));
			}
		}
		this.fixture.client().enqueueAll(requests);
		awaitCompleted(240);

		assertThat(Collections.max(this.mostByKey.values())).as("most jobs of one key running at once")
			.isEqualTo(3);
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aHotKeyAtItsLimitDoesNotHoldTheOtherKeysUp(QueueMode mode) {
		start(mode, new ConcurrencyLimits(1, false, 0), 0, Duration.ofMillis(5));
		List<JobRequest> hot = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			hot.add(request("hot", i));
		}
		this.fixture.client().enqueueAll(hot);
		List<JobRequest> others = new ArrayList<>();
		for (int key = 0; key < 50; key++) {
			for (int i = 0; i < 3; i++) {
				others.add(request("cold-" + key, i));
			}
		}
		this.fixture.client().enqueueAll(others);
		await().atMost(WAIT).until(() -> this.runs.stream().filter((run) -> !run.key.equals("hot")).count() == 150);
		long hotDone = this.runs.stream().filter((run) -> run.key.equals("hot")).count();

		// One hot job at a time takes 5 ms or more: the 400 take 2 s at least. The 150 others, free
		// to run side by side, must not have waited for them.
		assertThat(hotDone).as("hot jobs done when the other keys' jobs were all done").isLessThan(300);
		awaitCompleted(550);
		assertNoOverlapPerKey();
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void orderedKeysRunInEnqueueOrderAndARetryKeepsItsPlace(QueueMode mode) {
		start(mode, new ConcurrencyLimits(1, true, 0), 0, Duration.ofMillis(2));
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			for (int key = 0; key < 10; key++) {
				requests.add(request("order-" + key, i));
			}
		}
		this.fixture.client().enqueueAll(requests);
		awaitCompleted(120);

		// In transactional mode a batch whose job failed runs its other jobs again, their first run
		// rolled back: each attempt counts once, at its first start.
		Map<String, List<Run>> byKey = this.runs.stream().collect(Collectors.groupingBy((run) -> run.key));
		List<String> expected = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			expected.add(i + "/1");
			if (i == 3) {
				// Job 3 fails on its first attempt: its retry runs before job 4.
				expected.add("3/2");
			}
		}
		assertThat(byKey).hasSize(10);
		byKey.forEach((key, keyRuns) -> assertThat(keyRuns.stream()
			.sorted((a, b) -> Long.compare(a.start, b.start))
			.map((run) -> run.seq + "/" + run.attempt)
			.distinct()
			.toList()).as("start order of %s's attempts (job/attempt)", key).isEqualTo(expected));
		assertNoOverlapPerKey();
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aQueueNeverRunsMoreThanItsMaxRunningAcrossInstances(QueueMode mode) {
		meetAt(3);
		start(mode, new ConcurrencyLimits(0, false, 3), 0, Duration.ofMillis(10));
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 120; i++) {
			requests.add(JobRequest.of(KIND, Map.of("key", "none", "seq", i)));
		}
		this.fixture.client().enqueueAll(requests);
		awaitCompleted(120);

		assertThat(this.mostRunning.get()).as("most jobs of the queue running at once").isEqualTo(3);
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aKindNeverRunsMoreThanItsMaxRunningAcrossInstances(QueueMode mode) {
		meetAt(2);
		start(mode, ConcurrencyLimits.NONE, 2, Duration.ofMillis(10));
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			requests.add(JobRequest.of(KIND, Map.of("key", "none", "seq", i)));
		}
		this.fixture.client().enqueueAll(requests);
		awaitCompleted(100);

		assertThat(this.mostRunning.get()).as("most jobs of the kind running at once").isEqualTo(2);
	}

	private static final String KIND = "limited.job";

	/**
	 * Makes the first jobs wait (10 s at most) until {@code most} jobs of one key run at once, so that a
	 * loaded machine still reaches a limit that the engine allows; an engine that allowed fewer keeps the
	 * most below it.
	 */
	private void meetAt(int most) {
		this.meetingDeadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		this.meeting = most;
	}

	private static JobRequest request(String key, int seq) {
		return JobRequest.of(KIND, Map.of("key", key, "seq", seq)).concurrencyKey(key);
	}

	/**
	 * Three pollers (as three instances), four workers each (batches of five in transactional mode);
	 * each job works {@code work} and records its interval.
	 */
	private void start(QueueMode mode, ConcurrencyLimits limits, int kindMaxRunning, Duration work) {
		String queue = "limited";
		this.fixture = QueueFixture.create("limits_" + mode.name().toLowerCase(java.util.Locale.ROOT));
		this.fixture.configure(QueueSettings.defaults(queue)
			.withMode(mode)
			.withConcurrency(4)
			.withBatchSize(5)
			.withPollInterval(Duration.ofMillis(50))
			.withRetry(new RetryPolicy(Duration.ofMillis(20), Duration.ofMillis(20), 1.0, 0.0))
			.withLimits(limits));
		this.fixture.handle(KIND, queue, (job) -> {
			Map<?, ?> payload = this.fixture.jsonMapper().readValue(job.payload(), Map.class);
			String key = (String) payload.get("key");
			int seq = (Integer) payload.get("seq");
			int now = this.running.incrementAndGet();
			this.mostRunning.accumulateAndGet(now, Math::max);
			int ofKey = this.runningByKey.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			this.mostByKey.merge(key, ofKey, Math::max);
			long start = System.nanoTime();
			try {
				while (this.mostByKey.get(key) < this.meeting && System.nanoTime() - this.meetingDeadline < 0) {
					Thread.sleep(1);
				}
				Thread.sleep(work.toMillis());
			}
			finally {
				this.runningByKey.get(key).decrementAndGet();
				this.running.decrementAndGet();
				this.runs.add(new Run(key, seq, job.attempt(), start, System.nanoTime()));
			}
			if (limits.orderedByKey() && seq == 3 && job.attempt() == 1) {
				throw new IllegalStateException("first attempt of job 3 of " + key + " fails");
			}
		});
		if (kindMaxRunning > 0) {
			this.fixture.handlers().override(KIND, kindMaxRunning, null);
		}
		this.maintenance = this.fixture.maintenance((m) -> new MaintenanceSettings(Duration.ofMillis(20),
				m.rescueInterval(), m.cleanupInterval(), m.statsInterval(), m.completedRetention(), m.failedRetention(),
				m.cleanupBatchSize(), m.deadRowsWarning()));
		this.maintenance.start();
		List<JobPoller> pollers = this.fixture.startPollers(queue, 3);
		assertThat(pollers).hasSize(3);
	}

	private void awaitCompleted(int jobs) {
		await().atMost(WAIT).until(() -> this.fixture.countByState().getOrDefault("completed", 0L) == jobs);
	}

	/** No two attempts of one key ran at the same time. */
	private void assertNoOverlapPerKey() {
		Map<String, List<Run>> byKey = this.runs.stream().collect(Collectors.groupingBy((run) -> run.key));
		byKey.forEach((key, keyRuns) -> {
			List<Run> sorted = keyRuns.stream().sorted((a, b) -> Long.compare(a.start, b.start)).toList();
			for (int i = 1; i < sorted.size(); i++) {
				assertThat(sorted.get(i).start).as("%s: attempt %s started before %s ended", key, sorted.get(i),
						sorted.get(i - 1)).isGreaterThanOrEqualTo(sorted.get(i - 1).end);
			}
		});
	}

	private record Run(String key, int seq, int attempt, long start, long end) {
	}

}
