package dev.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A burst landing on a table whose plans were made for an empty one, claimed by two running
 * instances: what their claims read. Left so, each claim reads every due job of the queue through a
 * bitmap scan and sorts them to lock the first hundred, until the next analyze.
 */
class StaleStatisticsDatabaseTests {

	private static final String QUEUE = "burst";

	private static final int BATCH_SIZE = 100;

	private static final int JOBS = 40_000;

	/**
	 * Read from the head of the index, a claim of 100 reads its own entries and those the other claims
	 * hold or have just deleted: a few hundred. Planned for an empty table, it reads every due job left
	 * (here 10 000 to 40 000).
	 */
	private static final double MOST_ENTRIES_PER_CLAIM = 2_000;

	private static QueueFixture fixture;

	private final List<QueueEngine> instances = new ArrayList<>();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("stale_statistics");
		// The server's autovacuum would vacuum the drained table on its own schedule, holding the lock
		// that the refresher's ANALYZE (SKIP_LOCKED) skips, and repair the statistics itself when done:
		// either makes what this test measures depend on when its worker happens to come.
		fixture.jdbc().execute("ALTER TABLE " + fixture.table() + " SET (autovacuum_enabled = false)");
		fixture.configure(QueueSettings.defaults(QUEUE)
			.withConcurrency(2)
			.withBatchSize(BATCH_SIZE)
			.withPollInterval(Duration.ofMillis(20)));
		// Each job takes a millisecond, so that the drain lasts seconds past the first claims.
		fixture.handle("burst.job", QUEUE, (job) -> Thread.sleep(1));
	}

	@AfterEach
	void stopInstances() {
		this.instances.forEach(QueueEngine::close);
		this.instances.clear();
		fixture.jdbc().execute("TRUNCATE " + fixture.table());
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	/**
	 * A vacuum of a drained table that could not truncate it (claimers polling keep taking the table's
	 * lock) records no rows over the pages left: every plan made since is made for an empty table.
	 */
	@Test
	void aBurstOnATableVacuumedEmptyWithoutTruncationIsClaimedFromTheHeadOfTheIndex() {
		enqueue(JOBS);
		fixture.jdbc().execute("ANALYZE " + fixture.table());
		fixture.jdbc().execute("DELETE FROM " + fixture.table());
		fixture.jdbc().execute("VACUUM (TRUNCATE false) " + fixture.table());
		Map<String, Object> planner = fixture.jdbc()
			.queryForMap("SELECT reltuples, relpages FROM pg_class WHERE oid = '" + fixture.table() + "'::regclass");
		assertThat(((Number) planner.get("reltuples")).doubleValue()).as("rows the planner believes").isZero();
		assertThat(((Number) planner.get("relpages")).longValue()).as("pages it believes them in").isPositive();
		startInstances();

		assertThat(entriesReadPerClaimOfABurst()).as("claim index entries read per claim of %d", BATCH_SIZE)
			.isLessThan(MOST_ENTRIES_PER_CLAIM);
	}

	private void startInstances() {
		for (int i = 0; i < 2; i++) {
			QueueEngine instance = fixture.engine();
			instance.start();
			this.instances.add(instance);
		}
	}

	/**
	 * Lets the instances' idle claims make their plans, enqueues a burst in one transaction, and
	 * measures what the claims read once the first claims' counts have reached the statistics views:
	 * the first claims may run on the stale plans until the next check and its analyze.
	 */
	private double entriesReadPerClaimOfABurst() {
		// The pollers' idle claims on the empty table: enough for each connection to cache its plans.
		await().pollDelay(Duration.ofMillis(1_500)).atMost(Duration.ofMinutes(1)).until(() -> true);
		enqueue(JOBS);
		await().pollDelay(Duration.ofMillis(2_500)).atMost(Duration.ofMinutes(1)).until(() -> true);
		long completedBefore = completed();
		long readBefore = claimEntriesRead();
		await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(50)).until(() -> completed() == JOBS);
		this.instances.forEach(QueueEngine::close);
		this.instances.clear();
		assertThat(JOBS - completedBefore).as("jobs claimed while measured").isGreaterThan(JOBS / 2);
		return (settledClaimEntriesRead() - readBefore) * (double) BATCH_SIZE / (JOBS - completedBefore);
	}

	private static void enqueue(int jobs) {
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < jobs; i++) {
			requests.add(JobRequest.of("burst.job", i).queue(QUEUE));
		}
		fixture.enqueueInOneTransaction(requests);
	}

	private static long completed() {
		return fixture.countByState().getOrDefault("completed", 0L);
	}

	/** Entries read so far by every scan of the claim indexes, as the statistics views have them. */
	private static long claimEntriesRead() {
		Long read = fixture.jdbc()
			.queryForObject("SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE schemaname = ? "
					+ "AND indexrelname IN ('pgqueue_jobs_claim_idx', 'pgqueue_jobs_bucket_claim_idx')", Long.class,
					fixture.schema().name());
		return (read != null) ? read : 0;
	}

	/**
	 * {@link #claimEntriesRead()} once every backend has reported: backends send their counts at most
	 * once a second, so this waits until a second passes without a change.
	 */
	private static long settledClaimEntriesRead() {
		AtomicLong last = new AtomicLong(-1);
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1_200)).until(() -> {
			long now = claimEntriesRead();
			return now == last.getAndSet(now);
		});
		return last.get();
	}

}
