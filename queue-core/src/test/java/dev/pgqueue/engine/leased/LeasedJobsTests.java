package dev.pgqueue.engine.leased;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueFixture;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.leased.LeasedJobs.Held;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a leased poller knows of the leases of the jobs it holds: a job whose lease ran out before a
 * worker started it (the process paused, or cut off from the database) is never started, whether or
 * not another instance has rescued it yet.
 */
class LeasedJobsTests {

	/** Shorter than any queue may configure, so that it runs out within the test. */
	private static final Duration LEASE = Duration.ofMillis(300);

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("leased_jobs");
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void aJobWhoseLeaseRanOutBeforeItStartedIsNotStarted() {
		LeasedJobs jobs = new LeasedJobs(fixture.repository(), "expired", "owner-1", LEASE);
		UUID id = enqueue("expired");
		Held held = claim(jobs, "expired", "owner-1", LEASE);
		awaitLeaseExpiredInTheDatabase(id);

		assertThat(jobs.start(held)).as("started after its lease ran out").isFalse();
		assertThat(jobs.heldCount()).isZero();
		// Nothing written: the rescuer decides what becomes of the job.
		assertThat(fixture.row(id)).containsEntry("state", "running").containsEntry("lease_owner", "owner-1")
			.containsEntry("attempt", 1);
	}

	@Test
	void aJobWithinItsLeaseStartsOnce() {
		LeasedJobs jobs = new LeasedJobs(fixture.repository(), "live", "owner-2", Duration.ofMinutes(1));
		enqueue("live");
		Held held = claim(jobs, "live", "owner-2", Duration.ofMinutes(1));

		assertThat(jobs.start(held)).isTrue();
		// Started, so the poller's returns leave it alone.
		jobs.returnUnstarted(List.of(held));
		assertThat(fixture.row(held.job().job().id())).containsEntry("state", "running");
		jobs.ended(held, null, null);
		assertThat(jobs.heldCount()).isZero();
	}

	@Test
	void anExpiredJobNobodyRescuedYetGoesBackWithoutUsingAnAttempt() {
		LeasedJobs jobs = new LeasedJobs(fixture.repository(), "unrescued", "owner-3", LEASE);
		UUID id = enqueue("unrescued");
		Held held = claim(jobs, "unrescued", "owner-3", LEASE);
		jobs.holdAhead(List.of(held));
		awaitLeaseExpiredInTheDatabase(id);

		jobs.returnAhead();
		assertThat(fixture.row(id)).containsEntry("state", "available").containsEntry("attempt", 0)
			.containsEntry("lease_owner", null);
		assertThat(jobs.start(held)).as("started after it was returned").isFalse();
		assertThat(jobs.heldCount()).isZero();
	}

	@Test
	void anExtensionThatNoLongerFindsAJobDropsItFromTheJobsClaimedAhead() {
		LeasedJobs jobs = new LeasedJobs(fixture.repository(), "taken", "owner-4", Duration.ofMinutes(1));
		UUID kept = enqueue("taken");
		UUID taken = enqueue("taken");
		List<Held> claimed = jobs.claimed(fixture.repository().claimLeased("taken", new String[] { "taken.job" }, 2,
				"owner-4", Duration.ofMinutes(1)), System.nanoTime());
		assertThat(claimed).hasSize(2);
		jobs.holdAhead(claimed);
		fixture.jdbc().update("UPDATE " + fixture.table() + " SET lease_owner = 'owner-5' WHERE public_id = ?", taken);

		jobs.extendLeases();

		assertThat(jobs.aheadCount()).isOne();
		Held next = jobs.nextAhead();
		assertThat(next.job().job().id()).isEqualTo(kept);
		assertThat(jobs.start(next)).isTrue();
		assertThat(jobs.heldCount()).as("the running job; the other is forgotten").isOne();
		assertThat(fixture.row(taken)).containsEntry("lease_owner", "owner-5");
	}

	@Test
	void anExtensionDoesNotWaitForAJobAnotherTransactionHoldsAndKeepsIt() throws Exception {
		Duration lease = Duration.ofMinutes(1);
		LeasedJobs jobs = new LeasedJobs(fixture.repository(), "busy", "owner-6", lease);
		UUID locked = enqueue("busy");
		UUID free = enqueue("busy");
		List<Held> claimed = jobs.claimed(fixture.repository().claimLeased("busy", new String[] { "busy.job" }, 2,
				"owner-6", lease), System.nanoTime());
		assertThat(claimed).hasSize(2);
		jobs.holdAhead(claimed);
		Timestamp lockedLease = leaseUntil(locked);
		Timestamp freeLease = leaseUntil(free);
		ExecutorService keeper = Executors.newSingleThreadExecutor();
		// Another transaction holds one of the rows, as the completer does while it writes a batch of outcomes.
		try (Connection other = fixture.dataSource().getConnection()) {
			other.setAutoCommit(false);
			try (PreparedStatement lock = other.prepareStatement(
					"SELECT 1 FROM " + fixture.table() + " WHERE public_id = ? FOR UPDATE")) {
				lock.setObject(1, locked);
				lock.executeQuery().close();
			}
			Future<?> extension = keeper.submit(jobs::extendLeases);
			try {
				extension.get(10, TimeUnit.SECONDS);
			}
			finally {
				other.rollback();
				keeper.shutdown();
			}
		}

		assertThat(leaseUntil(free)).as("the free job's lease, extended").isAfter(freeLease);
		assertThat(leaseUntil(locked)).as("the held job's lease, left as it was").isEqualTo(lockedLease);
		assertThat(jobs.aheadCount()).as("the held job is still this poller's: not dropped as lost").isEqualTo(2);
		assertThat(jobs.start(jobs.nextAhead())).isTrue();
		assertThat(jobs.start(jobs.nextAhead())).isTrue();
	}

	private static Timestamp leaseUntil(UUID id) {
		return fixture.jdbc()
			.queryForObject("SELECT lease_until FROM " + fixture.allJobs() + " WHERE public_id = ?", Timestamp.class, id);
	}

	private static UUID enqueue(String queue) {
		return fixture.client().enqueue(JobRequest.of(queue + ".job", null).queue(queue));
	}

	private static Held claim(LeasedJobs jobs, String queue, String owner, Duration lease) {
		long start = System.nanoTime();
		List<ClaimedJob> claimed = fixture.repository().claimLeased(queue, new String[] { queue + ".job" }, 1, owner,
				lease);
		assertThat(claimed).hasSize(1);
		return jobs.claimed(claimed, start).get(0);
	}

	/** The poller's own reckoning starts before the claim, so it has run out once the database's has. */
	private static void awaitLeaseExpiredInTheDatabase(UUID id) {
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
			.until(() -> fixture.jdbc().queryForObject("SELECT lease_until < clock_timestamp() FROM "
					+ fixture.table() + " WHERE public_id = ?", Boolean.class, id));
	}

}
