package dev.pgqueue;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.HistorySettings;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.status.DatabaseStatus.ServiceStatus;
import dev.pgqueue.metrics.MicrometerQueueMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * No thread of the engine ends without a word: a {@code RuntimeException} and then an {@code Error}
 * are thrown into a service's iteration, where it takes its connection (on its own thread, through a
 * real engine on a real database), and the service counts both, goes on, and keeps its promise.
 */
class ServiceFailuresTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private QueueFixture fixture;

	private FaultyDataSource faulty;

	private QueueEngine engine;

	@BeforeEach
	void setUp() {
		this.fixture = QueueFixture.create("faults");
		this.faulty = new FaultyDataSource(this.fixture.dataSource());
	}

	@AfterEach
	void tearDown() {
		if (this.engine != null) {
			this.engine.close();
		}
		this.fixture.close();
	}

	private EngineSettings settings(boolean notifications) {
		Duration often = Duration.ofMillis(200);
		MaintenanceSettings defaults = MaintenanceSettings.DEFAULT;
		return this.fixture.engineSettings()
			.withNotifications(notifications, Duration.ZERO)
			.withMaintenance(new MaintenanceSettings(often, often, often, often, defaults.completedRetention(),
					defaults.failedRetention(), defaults.cleanupBatchSize(), defaults.deadRowsWarning()));
	}

	private void start(boolean notifications) {
		this.engine = this.fixture.engineBuilder(this.faulty)
			.settings(settings(notifications))
			.pollingHeartbeat(Duration.ofMillis(200))
			.history(new HistorySettings(true, HistorySettings.DEFAULT_RETENTION, Duration.ofMillis(200)))
			// Listening sessions from the faulty pool too (by default they are opened past any wrapper).
			.notificationConnections(this.faulty::getConnection)
			.build();
		this.engine.start();
	}

	private ServiceStatus service(String name) {
		return this.engine.status().database().services().stream().filter((service) -> service.name().equals(name))
			.findFirst().orElseThrow(() -> new AssertionError("no service named " + name));
	}

	/** Throws a runtime exception, then an error, into the service's next two iterations. */
	private void breakTwice(String thread) {
		this.faulty.inject(thread, new UnsupportedOperationException("injected failure"),
				new StackOverflowError("injected error"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "promoter", "rescuer", "cleaner", "stats reader", "schedule ticker", "statistics refresher",
			"polling heartbeat" })
	void aPeriodicServiceSurvivesAnExceptionAndAnErrorAndRunsAgain(String name) {
		this.fixture.configure(QueueSettings.defaults("faults"));
		this.fixture.handle("faults.job", "faults", (job) -> {
		});
		start(false);
		String thread = "pgqueue-" + name.replace(' ', '-');
		breakTwice(thread);

		await().atMost(WAIT).until(() -> this.faulty.injectedLeft(thread) == 0);
		int after = this.faulty.connections(thread);
		await("a run of the " + name + " after the error").atMost(WAIT)
			.until(() -> this.faulty.connections(thread) > after);
		ServiceStatus status = service(name);
		assertThat(status.failures()).isEqualTo(2);
		assertThat(status.running()).isTrue();
		assertThat(status.stoppedBy()).isNull();
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aClaimThatFailsWithAnExceptionAndThenAnErrorCostsNeitherThePollerNorTheJob(QueueMode mode) {
		this.fixture.configure(QueueSettings.defaults("faults").withMode(mode).withPollInterval(Duration.ofMillis(100)));
		List<UUID> ran = new CopyOnWriteArrayList<>();
		this.fixture.handle("faults.job", "faults", (job) -> ran.add(job.id()));
		// A leased claim runs on the poll thread; a transactional one on a worker, which hands its failure
		// (an error wrapped) to the poll thread.
		String claimer = (mode == QueueMode.LEASED) ? "pgqueue-faults-poller" : "pgqueue-faults-worker";
		breakTwice(claimer);
		start(false);

		UUID id = this.fixture.client().enqueue("faults.job", null);

		await().atMost(WAIT).until(() -> ran.contains(id));
		assertThat(this.faulty.injectedLeft(claimer)).isZero();
		ServiceStatus poller = service("faults poller");
		assertThat(poller.running()).isTrue();
		assertThat(poller.stoppedBy()).isNull();
		// A failed claim goes the claims' own way (logged, paced, pgqueue.claims.paused); an error thrown on
		// the poll thread is counted as the poller's.
		assertThat(poller.failures()).isEqualTo((mode == QueueMode.LEASED) ? 1 : 0);
	}

	@Test
	void aPollerWhoseThreadEndsAnywayIsNamedInTheStatusWithWhatEndedIt() {
		this.fixture.configure(QueueSettings.defaults("faults").withMode(QueueMode.LEASED)
			.withPollInterval(Duration.ofMillis(100)));
		this.fixture.handle("faults.job", "faults", (job) -> {
		});
		// A failure that fails again as the poller handles it: its message cannot even be read.
		this.faulty.inject("pgqueue-faults-poller", new Poisoned());
		start(false);

		await().atMost(WAIT).until(() -> service("faults poller").stoppedBy() != null);
		ServiceStatus poller = service("faults poller");
		assertThat(poller.stoppedBy()).contains("StackOverflowError");
		assertThat(this.engine.status().database().stoppedServices()).extracting(ServiceStatus::name)
			.containsExactly("faults poller");
	}

	/** An exception whose message throws: reading it in a handler ends whatever thread does so. */
	static final class Poisoned extends RuntimeException {

		@Override
		public String getMessage() {
			throw new StackOverflowError("poisoned message");
		}

		@Override
		public String toString() {
			throw new StackOverflowError("poisoned message");
		}

	}

	@Test
	void aLeasedJobWhoseOutcomeCouldNotBeWrittenRunsAgainAndCompletes() {
		this.fixture.configure(QueueSettings.defaults("faults")
			.withMode(QueueMode.LEASED)
			.withPollInterval(Duration.ofMillis(100))
			.withLeaseDuration(Duration.ofSeconds(2))
			.withMaxAttempts(20));
		AtomicInteger runs = new AtomicInteger();
		this.fixture.handle("faults.job", "faults", (job) -> runs.incrementAndGet());
		breakTwice("pgqueue-faults-completer");
		start(false);

		UUID first = this.fixture.client().enqueue("faults.job", 1);
		UUID second = this.fixture.client().enqueue("faults.job", 2);

		// Each outcome that was not written leaves its lease to expire: the rescuer hands the job out again.
		await().atMost(WAIT).until(() -> state(first) == JobState.COMPLETED && state(second) == JobState.COMPLETED);
		assertThat(runs.get()).as("attempts, the lost outcomes' included").isGreaterThan(2);
		ServiceStatus completer = service("faults completer");
		assertThat(completer.failures()).isEqualTo(2);
		assertThat(completer.stoppedBy()).isNull();
		assertThat(completer.running()).isTrue();
	}

	@Test
	void theLeaseKeeperSurvivesAnErrorAndTheRunningJobKeepsItsLease() throws Exception {
		// Extended every 2 s: after the two failures the keeper extends it by 4 s at the latest, 2 s before it ends.
		Duration lease = Duration.ofSeconds(6);
		this.fixture.configure(QueueSettings.defaults("faults")
			.withMode(QueueMode.LEASED)
			.withPollInterval(Duration.ofMillis(100))
			.withLeaseDuration(lease));
		AtomicInteger runs = new AtomicInteger();
		CountDownLatch release = new CountDownLatch(1);
		this.fixture.handle("faults.long", "faults", (job) -> {
			runs.incrementAndGet();
			release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
		});
		breakTwice("pgqueue-faults-leases");
		start(false);

		UUID id = this.fixture.client().enqueue("faults.long", null);
		await().atMost(WAIT).until(() -> runs.get() == 1);
		// Past its first lease, and then some: still running once, never rescued while it runs.
		await().during(lease.plusSeconds(1)).atMost(lease.plusSeconds(5))
			.until(() -> runs.get() == 1 && state(id) == JobState.RUNNING);
		release.countDown();

		await().atMost(WAIT).until(() -> state(id) == JobState.COMPLETED);
		assertThat(runs.get()).as("runs of a job whose lease was kept while it ran").isEqualTo(1);
		assertThat(service("faults lease keeper").failures()).as("the error; the exception is the keeper's own retry")
			.isEqualTo(1);
		assertThat(this.faulty.injectedLeft("pgqueue-faults-leases")).isZero();
	}

	@Test
	void theNotificationListenerSurvivesAnErrorAndWakesThePollersAgain() {
		// Polls once a minute: a job runs within seconds only when a notification wakes its poller.
		this.fixture.configure(QueueSettings.defaults("faults").withPollInterval(Duration.ofMinutes(1)));
		List<UUID> ran = new CopyOnWriteArrayList<>();
		this.fixture.handle("faults.job", "faults", (job) -> ran.add(job.id()));
		breakTwice("pgqueue-notifications");
		start(true);
		await().atMost(WAIT).until(() -> this.faulty.injectedLeft("pgqueue-notifications") == 0);
		await().atMost(WAIT).until(() -> this.faulty.connections("pgqueue-notifications") > 0);
		// Listening again: the poller's first claim at start found nothing; the next comes from a wake-up.
		await().pollDelay(Duration.ofMillis(500)).atMost(WAIT).until(() -> true);

		UUID id = this.engine.client().enqueue("faults.job", null);

		await().atMost(Duration.ofSeconds(10)).until(() -> ran.contains(id));
		ServiceStatus listener = service("notifications");
		assertThat(listener.failures()).as("the error; the exception is the listener's own reconnect").isEqualTo(1);
		assertThat(listener.stoppedBy()).isNull();
	}

	@Test
	void aBucketCoordinatorSurvivesAnErrorAndItsQueueStillRuns() {
		this.fixture.configure(QueueSettings.defaults("faults")
			.withAssignment(QueueAssignment.BUCKETS)
			.withBuckets(4)
			.withPollInterval(Duration.ofMillis(100)));
		List<UUID> ran = new CopyOnWriteArrayList<>();
		this.fixture.handle("faults.job", "faults", (job) -> ran.add(job.id()));
		breakTwice("pgqueue-faults-buckets");
		start(false);

		await().atMost(WAIT).until(() -> this.faulty.injectedLeft("pgqueue-faults-buckets") == 0);
		UUID id = this.fixture.client().enqueue("faults.job", null);

		await().atMost(WAIT).until(() -> ran.contains(id));
		ServiceStatus coordinator = service("faults buckets");
		assertThat(coordinator.failures()).as("the error; the exception is the heartbeat's own retry").isEqualTo(1);
		assertThat(coordinator.stoppedBy()).isNull();
	}

	@Test
	void theHistoryFlusherSurvivesAnExceptionAndAnErrorAndLosesNoCount() {
		this.fixture.configure(QueueSettings.defaults("faults").withPollInterval(Duration.ofMillis(50)));
		this.fixture.handle("faults.job", "faults", (job) -> {
		});
		breakTwice("pgqueue-history-flusher");
		start(false);
		List<UUID> ids = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			ids.add(this.engine.client().enqueue("faults.job", null));
		}
		await().atMost(WAIT).until(() -> ids.stream().allMatch((id) -> state(id) == JobState.COMPLETED));
		await().atMost(WAIT).until(() -> this.faulty.injectedLeft("pgqueue-history-flusher") == 0);

		// The minutes it could not write were kept for the next flush: every attempt is counted once.
		String completed = "SELECT coalesce(sum(completed), 0) FROM " + this.fixture.schema().name()
				+ ".pgqueue_queue_history WHERE queue = 'faults'";
		await().atMost(WAIT).until(() -> this.fixture.jdbc().queryForObject(completed, Long.class) == ids.size());
		ServiceStatus flusher = service("history flusher");
		assertThat(flusher.failures()).as("the error; the exception is the flusher's own, which keeps the counts")
			.isEqualTo(1);
		assertThat(flusher.running()).isTrue();
		assertThat(flusher.stoppedBy()).isNull();
	}

	@Test
	void theChecksOfShortClaimsSurviveAnExceptionAndAnErrorAndCheckAgain() {
		// Metrics on: short claims are checked only when something publishes what the checks find.
		this.fixture.metrics(new MicrometerQueueMetrics(new SimpleMeterRegistry(), List.of("faults")));
		// An idle poller: each of its claims comes back short, and one a second is checked.
		this.fixture.configure(QueueSettings.defaults("faults").withPollInterval(Duration.ofMillis(100)));
		this.fixture.handle("faults.job", "faults", (job) -> {
		});
		breakTwice("pgqueue-claim-check");
		start(false);

		await().atMost(WAIT).until(() -> this.faulty.injectedLeft("pgqueue-claim-check") == 0);
		int after = this.faulty.connections("pgqueue-claim-check");
		await("a check after the error").atMost(WAIT).until(() -> this.faulty.connections("pgqueue-claim-check") > after);
		ServiceStatus checks = service("claim check");
		assertThat(checks.failures()).isEqualTo(2);
		assertThat(checks.stoppedBy()).isNull();
	}

	@Test
	void theShardWatchCountsAProbeThatFailsWithAnErrorAsADownShardAndSeesItAnswerAgain() throws Exception {
		QueueFixture second = QueueFixture.create("faults_two");
		try {
			Map<String, QueueFixture> shards = new LinkedHashMap<>();
			shards.put("one", this.fixture);
			shards.put("two", second);
			FaultyDataSource two = new FaultyDataSource(second.dataSource());
			this.engine = QueueFixture.shardsBuilder(shards, (shard) -> shard.equals("two") ? two : this.fixture.dataSource())
				.shardWatch(Duration.ofMillis(50), Duration.ofMillis(2000))
				.build();
			this.engine.start();
			await().atMost(WAIT).until(() -> this.engine.shards().whyDown("two") == null);
			// Errors for the next connections the probes take; the one the watch holds is closed under
			// it, so that its next probe fails and takes a new one.
			Throwable[] errors = new Throwable[8];
			Arrays.fill(errors, new StackOverflowError("injected error"));
			two.inject("pgqueue-shard-probe", errors);
			two.closeHandedOut();

			List<String> reasons = new CopyOnWriteArrayList<>();
			await().atMost(WAIT).pollInterval(Duration.ofMillis(10)).until(() -> {
				String why = this.engine.shards().whyDown("two");
				if (why != null) {
					reasons.add(why);
				}
				return two.injectedLeft("pgqueue-shard-probe") == 0;
			});
			assertThat(reasons).as("why the shard was down while its probes failed with an error")
				.anyMatch((why) -> why.contains("StackOverflowError"));
			await("the shard answering again").atMost(WAIT).until(() -> this.engine.shards().whyDown("two") == null);
		}
		finally {
			if (this.engine != null) {
				this.engine.close();
				this.engine = null;
			}
			second.close();
		}
	}

	private JobState state(UUID id) {
		return this.fixture.admin().find(id).map(JobDetails::state).orElse(null);
	}

	/**
	 * A pool that throws what a test injects when a thread whose name starts with a given prefix asks
	 * for a connection, once per injected failure, and counts each thread's connections once its
	 * failures are spent.
	 */
	static final class FaultyDataSource extends DelegatingDataSource {

		private final Map<String, Deque<Throwable>> faults = new ConcurrentHashMap<>();

		private final Map<String, AtomicInteger> connections = new ConcurrentHashMap<>();

		private final List<Connection> handedOut = new CopyOnWriteArrayList<>();

		FaultyDataSource(javax.sql.DataSource target) {
			super(target);
		}

		void inject(String threadPrefix, Throwable... failures) {
			this.faults.put(threadPrefix, new ArrayDeque<>(List.of(failures)));
			this.connections.put(threadPrefix, new AtomicInteger());
		}

		int injectedLeft(String threadPrefix) {
			Deque<Throwable> left = this.faults.get(threadPrefix);
			synchronized (left) {
				return left.size();
			}
		}

		int connections(String threadPrefix) {
			AtomicInteger count = this.connections.get(threadPrefix);
			return (count != null) ? count.get() : 0;
		}

		/** Closes every connection handed out so far, as a server that went away would. */
		void closeHandedOut() throws SQLException {
			for (Connection connection : this.handedOut) {
				try {
					connection.close();
				}
				catch (SQLException ex) {
					// Closed by its user at the same moment.
				}
			}
		}

		@Override
		public Connection getConnection() throws SQLException {
			Connection connection = connection();
			this.handedOut.add(connection);
			return connection;
		}

		private Connection connection() throws SQLException {
			String thread = Thread.currentThread().getName();
			for (Map.Entry<String, Deque<Throwable>> entry : this.faults.entrySet()) {
				if (!thread.startsWith(entry.getKey())) {
					continue;
				}
				Deque<Throwable> left = entry.getValue();
				Throwable failure;
				synchronized (left) {
					failure = left.poll();
				}
				if (failure instanceof RuntimeException runtime) {
					throw runtime;
				}
				if (failure instanceof Error error) {
					throw error;
				}
				this.connections.get(entry.getKey()).incrementAndGet();
			}
			return super.getConnection();
		}

	}

}
