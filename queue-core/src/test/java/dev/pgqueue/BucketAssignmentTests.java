package dev.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import dev.pgqueue.engine.buckets.BucketScope;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.sql.JobStatements;
import dev.pgqueue.schema.SchemaName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Bucket assignment with pollers in one JVM, each a member of its queue's coordinator as if in an
 * instance of its own. The multi-process scenarios (kill -9, a killed leader, a cut connection) are in
 * the reliability suite.
 */
class BucketAssignmentTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static QueueFixture fixture;

	private static final Map<UUID, AtomicInteger> runs = new ConcurrentHashMap<>();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("buckets");
		fixture.jdbc().execute("CREATE TABLE ledger (job_id uuid PRIMARY KEY)");
		for (QueueMode mode : QueueMode.values()) {
			String queue = queue(mode);
			fixture.configure(QueueSettings.defaults(queue)
				.withMode(mode)
				.withAssignment(QueueAssignment.BUCKETS)
				.withConcurrency(2)
				.withBatchSize(20)
				.withPollInterval(Duration.ofMillis(100)));
			fixture.handle(queue + ".job", queue, (job) -> {
				runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
				if (mode == QueueMode.TRANSACTIONAL) {
					// Joins the batch's transaction: a second run would break the primary key.
					fixture.jdbc().update("INSERT INTO ledger (job_id) VALUES (?)", job.id());
				}
			});
		}
		fixture.configure(QueueSettings.defaults("rebalance").withAssignment(QueueAssignment.BUCKETS).withBuckets(12));
		fixture.handle("rebalance.job", "rebalance", (job) -> {
		});
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void threeMembersSplitTheBucketsEvenlyAndRunEveryJobOnce(QueueMode mode) {
		String queue = queue(mode);
		List<JobPoller> pollers = fixture.startPollers(queue, 3);
		await().atMost(WAIT).until(() -> sortedShares(queue).equals(List.of(21L, 21L, 22L)) && pendingMoves(queue) == 0);
		// Every observation: no bucket is claimed by two members at once; eventually, every bucket by one.
		await().atMost(WAIT).until(() -> {
			Set<Integer> seen = new TreeSet<>();
			for (JobPoller poller : pollers) {
				for (int bucket : scope(poller).buckets()) {
					assertThat(seen.add(bucket)).as("bucket %d claimed by two members", bucket).isTrue();
				}
			}
			return seen.equals(new TreeSet<>(IntStream.range(0, 64).boxed().toList()));
		});

		List<UUID> ids = fixture.client()
			.enqueueAll(IntStream.range(0, 3000).mapToObj((i) -> JobRequest.of(queue + ".job", i).queue(queue)).toList());
		await().atMost(WAIT).until(() -> ids.stream().allMatch(runs::containsKey)
				&& fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE queue = ? AND state "
						+ "IN ('available', 'running')", Long.class, queue) == 0);
		assertThat(ids).allSatisfy((id) -> assertThat(runs.get(id)).hasValue(1));
		if (mode == QueueMode.TRANSACTIONAL) {
			assertThat(fixture.jdbc().queryForObject("SELECT count(*) FROM ledger WHERE job_id = ANY(?)", Long.class,
					(Object) ids.toArray(new UUID[0]))).isEqualTo(3000);
		}
		pollers.forEach(JobPoller::stop);
	}

	@Test
	void aJoiningMemberGetsItsShareAndALeavingOneHandsItsBucketsToTheOthers() {
		List<JobPoller> pollers = fixture.startPollers("rebalance", 2);
		await().atMost(WAIT).until(() -> sortedShares("rebalance").equals(List.of(6L, 6L)));

		JobPoller third = fixture.startPollers("rebalance", 1).get(0);
		await().atMost(WAIT).until(() -> sortedShares("rebalance").equals(List.of(4L, 4L, 4L))
				&& pendingMoves("rebalance") == 0 && scope(third).buckets().length == 4);
		assertThat(pollers).allSatisfy((poller) -> assertThat(scope(poller).buckets()).hasSize(4));

		JobPoller leader = pollers.stream()
			.filter((poller) -> scope(poller).coordinator().leadingGeneration() > 0)
			.findFirst()
			.orElseThrow();
		long generation = scope(leader).coordinator().leadingGeneration();
		leader.stop();
		List<JobPoller> rest = List.of(pollers.get(0) == leader ? pollers.get(1) : pollers.get(0), third);
		await().atMost(WAIT).until(() -> sortedShares("rebalance").equals(List.of(6L, 6L))
				&& rest.stream().allMatch((poller) -> scope(poller).buckets().length == 6));
		assertThat(rest).anySatisfy((poller) -> assertThat(scope(poller).coordinator().leadingGeneration())
			.as("a new leader, in a new generation").isGreaterThan(generation));
		assertThat(fixture.jdbc().queryForList("SELECT DISTINCT generation FROM " + table("pgqueue_buckets")
				+ " WHERE queue = 'rebalance'", Long.class)).allSatisfy((g) -> assertThat(g).isGreaterThan(generation));
		rest.forEach(JobPoller::stop);
	}

	@Test
	void theBucketClaimReadsOnlyItsBucketsRangesInTheBucketIndexWithoutSorting() {
		JobStatements sql = new JobStatements(SchemaName.of(fixture.schema().name()));
		String locked = explain(sql.claimLockedInBuckets.replace("?::smallint[]", "'{1,2,3}'::smallint[]"));
		String leased = explain(sql.claimLeasedInBuckets.replace("?::smallint[]", "'{1,2,3}'::smallint[]"));

		assertThat(locked).contains("Index Scan using pgqueue_jobs_bucket_claim_idx").doesNotContain("Sort");
		assertThat(leased).contains("Index Scan using pgqueue_jobs_bucket_claim_idx").doesNotContain("Sort");
	}

	private static String explain(String statement) {
		String literal = statement.replaceFirst("queue = \\?", "queue = 'explained'")
			.replaceFirst("kind = ANY\\(\\?\\)", "kind = ANY('{explained.job}'::text[])")
			.replace("LIMIT ?", "LIMIT 10")
			.replace("lease_owner = ?", "lease_owner = 'explain'")
			.replace("now() + ? * interval", "now() + 1000 * interval")
			.replace("coalesce(?, now())", "coalesce(NULL, now())");
		return fixture.jdbc()
			.queryForList("EXPLAIN " + literal, String.class)
			.stream()
			.collect(Collectors.joining("\n"));
	}

	private static List<Long> sortedShares(String queue) {
		Map<String, Long> shares = new TreeMap<>();
		fixture.jdbc()
			.query("SELECT b.owner, count(*) FROM " + table("pgqueue_buckets") + " b JOIN " + table("pgqueue_members")
					+ " m ON m.queue = b.queue AND m.kinds_hash = b.kinds_hash AND m.member = b.owner "
					+ "WHERE b.queue = ? GROUP BY b.owner", (rs) -> {
						shares.put(rs.getString(1), rs.getLong(2));
					}, queue);
		long all = fixture.jdbc()
			.queryForObject("SELECT count(*) FROM " + table("pgqueue_buckets") + " WHERE queue = ?", Long.class, queue);
		if (shares.values().stream().mapToLong(Long::longValue).sum() != all) {
			return List.of(); // some bucket's owner is not a live member
		}
		return shares.values().stream().sorted().toList();
	}

	private static long pendingMoves(String queue) {
		return fixture.jdbc()
			.queryForObject("SELECT count(*) FROM " + table("pgqueue_buckets") + " WHERE queue = ? AND next_owner IS NOT NULL",
					Long.class, queue);
	}

	private static BucketScope scope(JobPoller poller) {
		return (BucketScope) poller.scope();
	}

	private static String table(String name) {
		return SchemaName.of(fixture.schema().name()).qualify(name);
	}

	private static String queue(QueueMode mode) {
		return "buckets-" + mode.name().toLowerCase(java.util.Locale.ROOT);
	}

}
