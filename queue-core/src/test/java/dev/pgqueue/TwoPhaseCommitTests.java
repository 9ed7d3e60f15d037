package dev.pgqueue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.TwoPhaseSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.PreparedTransactionRepository;
import dev.pgqueue.engine.twophase.InDoubtResolver;
import dev.pgqueue.engine.twophase.PreparedTransactionsCheck;
import dev.pgqueue.engine.twophase.TransactionIds;
import dev.pgqueue.metrics.PreparedTransactions;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Two-phase commit against the real database: each job's transaction is prepared before the
 * effect its listener returns runs, and committed after it; the in-doubt resolver finishes what a
 * dead worker left prepared. The "external system" is the {@code effects} table, written by the
 * effects on connections of their own, outside the jobs' transactions.
 */
class TwoPhaseCommitTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	private static QueueFixture fixture;

	private static SchemaName schema;

	/** Promotes retries as they fall due; no in-doubt resolver, which the tests run themselves. */
	private static QueueFixture.Maintenance maintenance;

	/** Enqueues as an application with notifications on. */
	private static QueueEngine notifyingEngine;

	private static volatile CountDownLatch effectGate = new CountDownLatch(0);

	private static final AtomicInteger broken = new AtomicInteger();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("two_phase");
		schema = SchemaName.of(fixture.schema().name());
		fixture.jdbc().execute("CREATE TABLE ledger (job_id uuid PRIMARY KEY)");
		fixture.jdbc().execute("CREATE TABLE effects (job_id uuid PRIMARY KEY, applied int NOT NULL DEFAULT 1, "
				+ "saw_prepared boolean NOT NULL)");
		for (String queue : List.of("happy", "flaky", "broken", "none", "alive", "cut", "by_hand", "one_connection",
				"enqueues")) {
			fixture.configure(twoPhase(queue));
		}
		fixture.configure(twoPhase("broken").withMaxAttempts(2));
		maintenance = fixture.maintenance((m) -> new MaintenanceSettings(Duration.ofMillis(50), m.rescueInterval(),
				m.cleanupInterval(), m.statsInterval(), m.completedRetention(), m.failedRetention(),
				m.cleanupBatchSize(), m.deadRowsWarning()));
		maintenance.start();
		fixture.handleWithEffect("pay", "happy", (job) -> {
			writeLedger(job);
			return () -> applyEffect(job);
		});
		fixture.handleWithEffect("pay.flaky", "flaky", (job) -> {
			writeLedger(job);
			return () -> {
				if (job.attempt() == 1) {
					throw new IllegalStateException("payment API unavailable");
				}
				applyEffect(job);
			};
		});
		fixture.handleWithEffect("pay.broken", "broken", (job) -> {
			writeLedger(job);
			return () -> {
				broken.incrementAndGet();
				throw new IllegalStateException("payment refused");
			};
		});
		fixture.handleWithEffect("pay.none", "none", (job) -> {
			writeLedger(job);
			return null;
		});
		for (String queue : List.of("alive", "cut")) {
			fixture.handleWithEffect("pay." + queue, queue, (job) -> {
				writeLedger(job);
				return () -> {
					applyEffect(job);
					effectGate.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
				};
			});
		}
		fixture.handleWithEffect("pay.by_hand", "by_hand", (job) -> {
			writeLedger(job);
			return () -> applyEffect(job);
		});
		fixture.handleWithEffect("pay.one_connection", "one_connection", (job) -> {
			writeLedger(job);
			return () -> applyEffect(job);
		});
		// Notifications on and no throttle: a plain enqueue would NOTIFY inside the job's transaction.
		notifyingEngine = fixture.engineBuilder()
			.settings(fixture.engineSettings().withNotifications(true, Duration.ZERO))
			.processing(false)
			.build();
		JobClient notifying = notifyingEngine.client();
		fixture.handleWithEffect("pay.enqueues", "enqueues", (job) -> {
			writeLedger(job);
			notifying.enqueue(JobRequest.of("receipt", Map.of("for", job.id().toString())).queue("receipts"));
			return () -> applyEffect(job);
		});
	}

	@AfterEach
	void rollBackLeftovers() throws SQLException {
		effectGate.countDown();
		try (Connection con = TestDatabase.get().connect(); Statement statement = con.createStatement()) {
			List<String> gids = fixture.jdbc().queryForList(
					"SELECT gid FROM pg_prepared_xacts WHERE starts_with(gid, ?)", String.class,
					TransactionIds.prefix(schema));
			for (String gid : gids) {
				statement.execute("ROLLBACK PREPARED '" + gid + "'");
			}
		}
	}

	@AfterAll
	static void tearDown() {
		maintenance.stop();
		notifyingEngine.close();
		fixture.close();
	}

	@Test
	void preparesTheJobsTransactionBeforeItsEffectAndCommitsAfter() {
		List<UUID> ids = enqueue("pay", "happy", 20);
		JobPoller poller = start("happy");
		try {
			awaitState(ids, "completed");
		}
		finally {
			poller.stop();
		}
		assertThat(count("SELECT count(*) FROM ledger WHERE job_id = ANY(?::uuid[])", ids)).isEqualTo(20);
		// Each effect saw its job's transaction prepared and its ledger row not yet committed.
		assertThat(count("SELECT count(*) FROM effects WHERE job_id = ANY(?::uuid[]) AND applied = 1 AND saw_prepared",
				ids)).isEqualTo(20);
		assertThat(count("SELECT count(*) FROM " + fixture.allJobs() + " WHERE public_id = ANY(?::uuid[]) AND attempt = 1",
				ids)).isEqualTo(20);
		assertThat(preparedCount()).isZero();
	}

	@Test
	void rollsBackThePreparedTransactionWhenTheEffectFailsAndRetriesTheJob() {
		UUID id = enqueue("pay.flaky", "flaky", 1).get(0);
		JobPoller poller = start("flaky");
		try {
			awaitState(List.of(id), "completed");
		}
		finally {
			poller.stop();
		}
		assertThat(fixture.row(id)).containsEntry("attempt", 2).containsEntry("last_error", null);
		assertThat(count("SELECT count(*) FROM ledger WHERE job_id = ANY(?::uuid[])", List.of(id))).isEqualTo(1);
		assertThat(count("SELECT count(*) FROM effects WHERE job_id = ANY(?::uuid[]) AND applied = 1", List.of(id)))
			.isEqualTo(1);
	}

	@Test
	void failsTheJobForGoodWhenItsEffectKeepsFailingAndKeepsNoneOfItsWork() {
		UUID id = enqueue("pay.broken", "broken", 1).get(0);
		JobPoller poller = start("broken");
		try {
			awaitState(List.of(id), "failed");
		}
		finally {
			poller.stop();
		}
		Map<String, Object> row = fixture.row(id);
		assertThat(row).containsEntry("attempt", 2);
		assertThat((String) row.get("last_error")).contains("external effect failed").contains("payment refused");
		assertThat(broken).hasValue(2);
		assertThat(count("SELECT count(*) FROM ledger WHERE job_id = ANY(?::uuid[])", List.of(id))).isZero();
		assertThat(preparedCount()).isZero();
	}

	@Test
	void commitsAtOnceWhenTheListenerReturnsNoEffect() {
		UUID id = enqueue("pay.none", "none", 1).get(0);
		JobPoller poller = start("none");
		try {
			awaitState(List.of(id), "completed");
		}
		finally {
			poller.stop();
		}
		assertThat(count("SELECT count(*) FROM ledger WHERE job_id = ANY(?::uuid[])", List.of(id))).isEqualTo(1);
	}

	@Test
	void aListenerThatEnqueuesStillPreparesItsTransaction() {
		UUID id = enqueue("pay.enqueues", "enqueues", 1).get(0);
		JobPoller poller = start("enqueues");
		try {
			awaitState(List.of(id), "completed");
		}
		finally {
			poller.stop();
		}
		assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs()
				+ " WHERE kind = 'receipt' AND payload ->> 'for' = ?", Long.class, id.toString())).isEqualTo(1);
	}

	@Test
	void givesTheConnectionBackToThePoolWithoutALockOrAnOpenTransaction() throws SQLException {
		List<String> finished = new java.util.concurrent.CopyOnWriteArrayList<>();
		QueueMetrics outcomes = new QueueMetrics() {
			@Override
			public void jobFinished(String queue, String kind, JobOutcome outcome, long nanos) {
				finished.add(outcome.name());
			}
		};
		try (HikariDataSource one = fixture.schema().newPool(1)) {
			UUID id = enqueue("pay.one_connection", "one_connection", 1).get(0);
			JobPoller poller = pollerOn(one, "one_connection", outcomes);
			poller.start();
			try {
				awaitState(List.of(id), "completed");
				// Counted only once the Spring transaction around the two phases ended without an error.
				await().atMost(TIMEOUT).until(() -> finished.contains("COMPLETED"));
			}
			finally {
				poller.stop();
			}
			try (Connection con = one.getConnection()) {
				assertThat(con.getAutoCommit()).isTrue();
				try (PreparedStatement ps = con.prepareStatement(
						"SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'")) {
					var rs = ps.executeQuery();
					rs.next();
					assertThat(rs.getLong(1)).as("advisory locks the pooled session still holds").isZero();
				}
			}
		}
	}

	@Test
	void resolverCommitsAnInDoubtJobWhoseEffectHappened() throws SQLException {
		UUID id = enqueue("pay.by_hand", "by_hand", 1).get(0);
		prepareAsADeadWorkerLeftIt(id, "by_hand");
		insertEffect(id);
		Recorder recorder = new Recorder();
		List<InDoubtJob> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
		InDoubtResolver resolver = resolver(quickly(), (job) -> {
			asked.add(job);
			return effectApplied(job.id());
		}, recorder);

		PreparedTransactions left = resolver.resolve();

		assertThat(asked).singleElement().satisfies((job) -> {
			assertThat(job.id()).isEqualTo(id);
			assertThat(job.kind()).isEqualTo("pay.by_hand");
			assertThat(job.queue()).isEqualTo("by_hand");
			assertThat(job.attempt()).isEqualTo(1);
			assertThat(job.payload()).contains("\"n\"");
		});
		assertThat(left.count()).isZero();
		assertThat(recorder.decisions).containsExactly("by_hand:committed");
		assertThat(fixture.row(id)).containsEntry("state", "completed").containsEntry("attempt", 1);
		assertThat(count("SELECT count(*) FROM ledger WHERE job_id = ANY(?::uuid[])", List.of(id))).isEqualTo(1);
	}

	@Test
	void resolverRollsBackAnInDoubtJobWhoseEffectDidNotHappenAndTheJobRunsAgainOnce() throws SQLException {
		UUID id = enqueue("pay.by_hand", "by_hand", 1).get(0);
		prepareAsADeadWorkerLeftIt(id, "by_hand");
		Recorder recorder = new Recorder();
		InDoubtResolver resolver = resolver(quickly(), (job) -> effectApplied(job.id()), recorder);

		resolver.resolve();

		assertThat(recorder.decisions).containsExactly("by_hand:rolled-back");
		assertThat(fixture.row(id)).containsEntry("state", "available").containsEntry("attempt", 0);
		assertThat(count("SELECT count(*) FROM ledger WHERE job_id = ANY(?::uuid[])", List.of(id))).isZero();
		JobPoller poller = start("by_hand");
		try {
			awaitState(List.of(id), "completed");
		}
		finally {
			poller.stop();
		}
		assertThat(fixture.row(id)).containsEntry("attempt", 1);
		assertThat(count("SELECT count(*) FROM effects WHERE job_id = ANY(?::uuid[]) AND applied = 1", List.of(id)))
			.isEqualTo(1);
	}

	@Test
	void resolverLeavesAPreparedTransactionWhoseWorkerIsAliveAlone() {
		effectGate = new CountDownLatch(1);
		UUID id = enqueue("pay.alive", "alive", 1).get(0);
		JobPoller poller = start("alive");
		try {
			// The effect has run and waits: the transaction is prepared, its worker alive.
			await().atMost(TIMEOUT).until(() -> effectApplied(id) && preparedCount() == 1);
			AtomicInteger asked = new AtomicInteger();
			PreparedTransactions left = resolver(quickly(), (job) -> {
				asked.incrementAndGet();
				return false;
			}, new Recorder()).resolve();

			assertThat(asked).as("the resolver was asked about a job whose worker is alive").hasValue(0);
			assertThat(left.count()).isEqualTo(1);
			assertThat(left.inDoubt()).isEqualTo(1);
			effectGate.countDown();
			awaitState(List.of(id), "completed");
		}
		finally {
			poller.stop();
		}
		assertThat(count("SELECT count(*) FROM ledger WHERE job_id = ANY(?::uuid[])", List.of(id))).isEqualTo(1);
		assertThat(preparedCount()).isZero();
	}

	@Test
	void aWorkerCutOffAfterItsEffectLeavesTheJobInDoubtAndTheResolverCommitsIt() throws SQLException {
		effectGate = new CountDownLatch(1);
		UUID id = enqueue("pay.cut", "cut", 1).get(0);
		try (HikariDataSource pool = fixture.schema().newPool(3, "two_phase_cut")) {
			JobPoller poller = pollerOn(pool, "cut", QueueMetrics.NONE);
			poller.start();
			try {
				await().atMost(TIMEOUT).until(() -> effectApplied(id) && preparedCount() == 1);
				try (Connection con = TestDatabase.get().connect(); Statement statement = con.createStatement()) {
					statement.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
							+ "WHERE application_name = 'two_phase_cut'");
				}
				effectGate.countDown();
				InDoubtResolver resolver = resolver(quickly(), (job) -> effectApplied(job.id()), new Recorder());
				await().atMost(TIMEOUT).until(() -> resolver.resolve().count() == 0);
			}
			finally {
				poller.stop();
			}
		}
		assertThat(fixture.row(id)).containsEntry("state", "completed").containsEntry("attempt", 1);
		assertThat(count("SELECT count(*) FROM ledger WHERE job_id = ANY(?::uuid[])", List.of(id))).isEqualTo(1);
		assertThat(count("SELECT count(*) FROM effects WHERE job_id = ANY(?::uuid[]) AND applied = 1", List.of(id)))
			.isEqualTo(1);
	}

	@Test
	void resolverRollsBackWhatItCannotDecideOnlyOnceItIsOlderThanRollBackAfter() throws SQLException {
		UUID id = enqueue("pay.by_hand", "by_hand", 1).get(0);
		prepareAsADeadWorkerLeftIt(id, "by_hand");
		Recorder recorder = new Recorder();
		InDoubtResolver resolver = resolver(new TwoPhaseSettings(Duration.ofSeconds(1), Duration.ofMillis(1),
				Duration.ofMillis(500)), (job) -> {
					throw new IllegalStateException("payment API unavailable");
				}, recorder);

		assertThat(resolver.resolve().inDoubt()).isEqualTo(1);
		assertThat(fixture.row(id)).containsEntry("state", "available");
		assertThat(preparedCount()).isEqualTo(1);

		await().atMost(TIMEOUT).until(() -> resolver.resolve().count() == 0);
		assertThat(recorder.decisions).containsExactly("by_hand:abandoned");
		assertThat(fixture.row(id)).containsEntry("state", "available").containsEntry("attempt", 0);
		assertThat(count("SELECT count(*) FROM ledger WHERE job_id = ANY(?::uuid[])", List.of(id))).isZero();
	}

	@Test
	void resolverLeavesJobsOfKindsWithoutAListenerHereToTheirApplication() throws SQLException {
		UUID id = fixture.client().enqueue(JobRequest.of("pay.elsewhere", Map.of("n", 1)).queue("by_hand"));
		prepareAsADeadWorkerLeftIt(id, "by_hand");
		AtomicInteger asked = new AtomicInteger();
		PreparedTransactions left = resolver(quickly(), (job) -> {
			asked.incrementAndGet();
			return true;
		}, new Recorder()).resolve();

		assertThat(asked).hasValue(0);
		assertThat(left.count()).isEqualTo(1);
		assertThat(left.inDoubt()).isEqualTo(1);
	}

	@Test
	void startupCheckFailsNamingTheSettingWhenTheServerAllowsNoPreparedTransactions() {
		QueueSettings settings = twoPhase("happy");
		assertThatExceptionOfType(InvalidQueueConfigurationException.class)
			.isThrownBy(() -> PreparedTransactionsCheck.check(settings, schema, 0))
			.satisfies((ex) -> {
				assertThat(ex.key()).isEqualTo("pgqueue.queues.happy.two-phase-commit");
				assertThat(ex.getMessage()).contains("max_prepared_transactions is 0");
				assertThat(ex.action()).contains("ALTER SYSTEM SET max_prepared_transactions");
			});
	}

	@Test
	void startupCheckPassesOnThisServerWhichAllowsPreparedTransactions() {
		int max = new PreparedTransactionRepository(fixture.jdbc(), schema).maxPreparedTransactions();
		assertThat(max).as("max_prepared_transactions of the test server (.ci/run sets it)").isPositive();
		PreparedTransactionsCheck.check(twoPhase("happy"), schema, max);
	}

	@Test
	void startupCheckRefusesAQueueNameThatMakesTransactionIdsTooLong() {
		QueueSettings settings = twoPhase("q".repeat(170));
		assertThatExceptionOfType(InvalidQueueConfigurationException.class)
			.isThrownBy(() -> PreparedTransactionsCheck.check(settings, schema, 64))
			.withMessageContaining("200 bytes");
	}

	@Test
	void aTwoPhaseQueueTakesOneJobPerTransaction() {
		assertThatExceptionOfType(InvalidQueueConfigurationException.class)
			.isThrownBy(() -> QueueSettings.defaults("payments").withTwoPhaseCommit(true))
			.satisfies((ex) -> assertThat(ex.key()).isEqualTo("pgqueue.queues.payments.batch-size"));
	}

	@Test
	void aListenerThatReturnsAnEffectOnAQueueWithoutTwoPhaseCommitFailsAtStartup() {
		try (QueueFixture other = QueueFixture.create("two_phase_off")) {
			other.handleWithEffect("pay.off", "plain", (job) -> () -> {
			});
			assertThatExceptionOfType(InvalidJobListenerException.class).isThrownBy(() -> other.poller("plain"))
				.withMessageContaining("returns an ExternalEffect")
				.withMessageContaining("'plain' does not use two-phase commit");
		}
	}

	private static QueueSettings twoPhase(String queue) {
		return QueueSettings.defaults(queue)
			.withBatchSize(1)
			.withTwoPhaseCommit(true)
			.withConcurrency(2)
			.withPollInterval(Duration.ofMillis(50))
			.withRetry(new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(20), 2.0, 0.0));
	}

	private static TwoPhaseSettings quickly() {
		return new TwoPhaseSettings(Duration.ofSeconds(1), Duration.ofMillis(1), Duration.ofHours(1));
	}

	private static InDoubtResolver resolver(TwoPhaseSettings settings, InDoubtJobResolver answer, QueueMetrics metrics) {
		return new InDoubtResolver(new PreparedTransactionRepository(fixture.jdbc(), schema), schema, settings,
				fixture.handlers(), answer, metrics);
	}

	private static JobPoller start(String queue) {
		JobPoller poller = fixture.poller(queue);
		poller.start();
		return poller;
	}

	private static JobPoller pollerOn(DataSource pool, String queue, QueueMetrics metrics) {
		QueueEngine engine = fixture.engineBuilder(pool)
			.settings(fixture.engineSettings().withWorkers(new WorkerSettings(Duration.ofSeconds(5), false, false)))
			.metrics(metrics)
			.build();
		return EngineInternals.of(engine).newPoller(queue, null);
	}

	private static List<UUID> enqueue(String kind, String queue, int count) {
		List<JobRequest> requests = new java.util.ArrayList<>();
		for (int i = 0; i < count; i++) {
			requests.add(JobRequest.of(kind, Map.of("n", i)).queue(queue));
		}
		return fixture.client().enqueueAll(requests);
	}

	private static void awaitState(List<UUID> ids, String state) {
		await().atMost(TIMEOUT)
			.until(() -> count("SELECT count(*) FROM " + fixture.allJobs() + " WHERE public_id = ANY(?::uuid[]) AND state = '"
					+ state + "'", ids) == ids.size());
	}

	private static void writeLedger(Job job) {
		fixture.jdbc().update("INSERT INTO ledger (job_id) VALUES (?)", job.id());
	}

	/** The effect: one row in the external system, noting what it saw of the job's transaction. */
	private static void applyEffect(Job job) {
		String gid = TransactionIds.of(schema, job.queue(), job.id());
		fixture.jdbc().update("""
				INSERT INTO effects (job_id, saw_prepared)
				VALUES (?, EXISTS (SELECT 1 FROM pg_prepared_xacts WHERE gid = ?)
				           AND NOT EXISTS (SELECT 1 FROM ledger WHERE job_id = ?))
				ON CONFLICT (job_id) DO UPDATE SET applied = effects.applied + 1""", job.id(), gid, job.id());
	}

	private static void insertEffect(UUID id) {
		fixture.jdbc().update("INSERT INTO effects (job_id, saw_prepared) VALUES (?, true)", id);
	}

	private static boolean effectApplied(UUID id) {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM effects WHERE job_id = ?", Long.class, id) > 0;
	}

	private static long preparedCount() {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM pg_prepared_xacts WHERE starts_with(gid, ?)",
				Long.class, TransactionIds.prefix(schema));
	}

	private static long count(String sql, List<UUID> ids) {
		return fixture.jdbc().queryForObject(sql, Long.class,
				ids.stream().map(UUID::toString).collect(java.util.stream.Collectors.joining(",", "{", "}")));
	}

	/**
	 * What a worker that died between prepare and commit leaves: the job's row locked and completed,
	 * its ledger row written, all in a prepared transaction that no session owns.
	 */
	private static void prepareAsADeadWorkerLeftIt(UUID id, String queue) throws SQLException {
		try (Connection con = TestDatabase.get().connect()) {
			con.setAutoCommit(false);
			try (Statement statement = con.createStatement()) {
				statement.execute("SELECT id FROM " + fixture.table() + " WHERE public_id = '" + id + "' FOR UPDATE");
				statement.execute("INSERT INTO " + schema.qualify("ledger") + " (job_id) VALUES ('" + id + "')");
				statement.execute("UPDATE " + fixture.table() + " SET state = 'completed', attempt = attempt + 1, "
						+ "finished_at = clock_timestamp() WHERE public_id = '" + id + "'");
				statement.execute("PREPARE TRANSACTION '" + TransactionIds.of(schema, queue, id) + "'");
			}
		}
	}

	/** Records the resolver's decisions as {@code queue:decision}. */
	private static final class Recorder implements QueueMetrics {

		final ConcurrentLinkedQueue<String> decisions = new ConcurrentLinkedQueue<>();

		@Override
		public void inDoubtResolved(String queue, String decision) {
			this.decisions.add(queue + ":" + decision);
		}

	}

}
