package dev.pgqueue;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.poll.ClaimFloor;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A burst of jobs that share one {@code run_at}, claimed from floors by concurrent claimers of two
 * instances while another session holds a snapshot, so that no entry the claims leave behind can be
 * skipped without a heap fetch: what each claim reads.
 */
class ClaimFloorBurstDatabaseTests {

	private static final String QUEUE = "burst";

	private static final String[] KINDS = { "burst.job" };

	private static final int BATCH_SIZE = 100;

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("claim_floor_burst");
		fixture.configure(QueueSettings.defaults(QUEUE));
		fixture.handle("burst.job", QUEUE, (job) -> {
		});
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void claimsOfABurstOfOneRunAtReadOnlyTheEntriesFromTheHeadOn() throws Exception {
		int jobs = 20_000;
		try (Connection holder = holdSnapshot()) {
			List<JobRequest> burst = new ArrayList<>();
			for (int i = 0; i < jobs; i++) {
				burst.add(JobRequest.of("burst.job", i).queue(QUEUE));
			}
			// One transaction: every job due at its now(), ids in enqueue order; two calls, each within
			// pgqueue.max-jobs-per-enqueue.
			new TransactionTemplate(new DataSourceTransactionManager(fixture.dataSource())).executeWithoutResult(
					(status) -> {
						fixture.client().enqueueAll(burst.subList(0, jobs / 2));
						fixture.client().enqueueAll(burst.subList(jobs / 2, jobs));
					});
			assertThat(fixture.jdbc().queryForObject("SELECT count(DISTINCT run_at) FROM " + fixture.allJobs(),
					Long.class)).isOne();
			// Statistics of the burst, as the engine's statistics refresher would take: the claims are
			// planned as index range scans.
			fixture.jdbc().execute("ANALYZE " + fixture.table());

			// Two instances, two claimers each, as two processes of a transactional queue with concurrency 2.
			List<ClaimFloor> instances = List.of(floor(), floor());
			AtomicLong entries = new AtomicLong();
			AtomicInteger claims = new AtomicInteger();
			AtomicLong most = new AtomicLong();
			ExecutorService claimers = Executors.newFixedThreadPool(4);
			try {
				List<Future<?>> running = new ArrayList<>();
				for (int i = 0; i < 4; i++) {
					ClaimFloor floor = instances.get(i % 2);
					running.add(claimers.submit(() -> {
						long read;
						while ((read = claimAndDelete(floor)) >= 0) {
							entries.addAndGet(read);
							claims.incrementAndGet();
							most.accumulateAndGet(read, Math::max);
						}
						return null;
					}));
				}
				for (Future<?> claimer : running) {
					claimer.get();
				}
			}
			finally {
				claimers.shutdownNow();
			}
			holder.rollback();

			assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs(), Long.class)).isZero();
			double perClaim = entries.get() / (double) claims.get();
			// From the head on, a claim reads its own hundred and the few hundred the other claimers hold
			// or have just deleted; each instance's first claim sweeps past what the other has taken. From the
			// start of the run-at, the later claims read every entry the burst's earlier claims left:
			// 10 000 on average, 20 000 at the end.
			assertThat(perClaim).as("claim index entries read per claim of %d", BATCH_SIZE).isLessThan(1_000);
		}
	}

	/** A floor as an instance's engine makes it, whose sweep interval does not pass during the test. */
	private static ClaimFloor floor() {
		return new ClaimFloor(Duration.ofHours(1), ClaimFloor.DEFAULT_MARGIN);
	}

	/**
	 * One transactional claim from the floor, its jobs deleted in the same transaction; returns the
	 * entries of the claim index the claim read, or -1 when it found none.
	 */
	private static long claimAndDelete(ClaimFloor floor) {
		Long read = fixture.transactionTemplate().execute((status) -> {
			long before = entriesReadByThisSession();
			List<ClaimedJob> jobs = floor
				.claim((start) -> fixture.repository().claimLocked(QUEUE, KINDS, BATCH_SIZE, start));
			if (jobs.isEmpty()) {
				return -1L;
			}
			long claimRead = entriesReadByThisSession() - before;
			fixture.repository().completeLocked(jobs.stream().map(ClaimedJob::id).toList(), true);
			return claimRead;
		});
		return (read != null) ? read : -1;
	}

	/**
	 * Entries of the claim index this session has read and not yet reported to the statistics views
	 * (it reports them when idle, at most once a second, never within a transaction).
	 */
	private static long entriesReadByThisSession() {
		Long read = fixture.jdbc()
			.queryForObject("SELECT pg_stat_get_xact_tuples_returned(to_regclass(?))", Long.class,
					fixture.schema().name() + ".pgqueue_jobs_claim_idx");
		return (read != null) ? read : 0;
	}

	private static Connection holdSnapshot() throws Exception {
		Connection holder = TestDatabase.get().connect();
		holder.setAutoCommit(false);
		holder.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
		try (Statement statement = holder.createStatement()) {
			statement.executeQuery("SELECT count(*) FROM pg_class").close();
		}
		return holder;
	}

}
