package dev.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.sql.JobStatements;
import dev.pgqueue.schema.BucketClaimIndex;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

/**
 * The bucket claim index exists only where a queue claims by buckets: a plain job in an installation
 * without such a queue never writes it, the migrator builds it (concurrently, over the jobs already
 * there) for one that configures such a queue, and a bucket claim without it still runs every job.
 */
class BucketClaimIndexTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	@Test
	void aSchemaWithoutBucketQueuesHasNoBucketClaimIndexAndItsJobsWriteNone() {
		try (QueueFixture fixture = QueueFixture.create("bucket_index_none")) {
			fixture.client()
				.enqueueAll(IntStream.range(0, 500).mapToObj((i) -> JobRequest.of("plain.job", i)).toList());

			assertThat(indexes(fixture.schema())).contains("pgqueue_jobs_claim_idx")
				.doesNotContain(BucketClaimIndex.NAME);
			assertThat(new BucketClaimIndex(fixture.dataSource(), SchemaName.of(fixture.schema().name())).valid())
				.isFalse();
		}
	}

	@Test
	void theMigratorBuildsTheIndexForBucketQueuesOverTheJobsAlreadyThereAndClaimsReadIt() {
		try (TestSchema schema = TestDatabase.get().createSchema("bucket_index_built")) {
			SchemaName name = SchemaName.of(schema.name());
			new QueueMigrator(schema.dataSource(), name, true).afterPropertiesSet();
			String table = name.qualify("pgqueue_jobs");
			schema.jdbcTemplate().update("INSERT INTO " + table + " (public_id, kind, queue, payload, state, "
					+ "max_attempts, bucket) SELECT gen_random_uuid(), 'reports.job', 'reports', '{}', 'available', 3, "
					+ "n % 64 FROM generate_series(1, 20000) n");
			assertThat(indexes(schema)).doesNotContain(BucketClaimIndex.NAME);

			new QueueMigrator(schema.dataSource(), name, true).withBucketQueues(List.of("reports")).afterPropertiesSet();

			assertThat(new BucketClaimIndex(schema.dataSource(), name).valid()).isTrue();
			assertThat(schema.jdbcTemplate()
				.queryForObject("SELECT pg_get_indexdef(?::regclass)", String.class, name.qualify(BucketClaimIndex.NAME)))
				.endsWith("USING btree (queue, bucket, priority DESC, run_at, id) WHERE (state = 'available'::text)");
			schema.jdbcTemplate().execute("ANALYZE " + table);
			assertThat(explainBucketClaim(schema)).contains("Index Scan using " + BucketClaimIndex.NAME);

			// Starting again changes nothing.
			new QueueMigrator(schema.dataSource(), name, true).withBucketQueues(List.of("reports")).afterPropertiesSet();
			assertThat(new BucketClaimIndex(schema.dataSource(), name).valid()).isTrue();
		}
	}

	@Test
	void instancesStartingTogetherBuildTheIndexOnceAndAllStart() throws Exception {
		try (TestSchema schema = TestDatabase.get().createSchema("bucket_index_race")) {
			SchemaName name = SchemaName.of(schema.name());
			new QueueMigrator(schema.dataSource(), name, true).afterPropertiesSet();
			schema.jdbcTemplate().update("INSERT INTO " + name.qualify("pgqueue_jobs") + " (public_id, kind, queue, "
					+ "payload, state, max_attempts) SELECT gen_random_uuid(), 'k', 'q', '{}', 'available', 3 "
					+ "FROM generate_series(1, 20000)");
			ExecutorService starts = Executors.newFixedThreadPool(4);
			try {
				CountDownLatch go = new CountDownLatch(1);
				List<Future<?>> instances = new ArrayList<>();
				for (int i = 0; i < 4; i++) {
					instances.add(starts.submit(() -> {
						go.await();
						new QueueMigrator(schema.dataSource(), name, true).withBucketQueues(List.of("q"))
							.afterPropertiesSet();
						return null;
					}));
				}
				go.countDown();
				for (Future<?> instance : instances) {
					instance.get();
				}
			}
			finally {
				starts.shutdownNow();
			}
			assertThat(new BucketClaimIndex(schema.dataSource(), name).valid()).isTrue();
			assertThat(indexes(schema)).containsOnlyOnce(BucketClaimIndex.NAME);
		}
	}

	@Test
	void withoutMigrationAMissingIndexFailsStartUpNamingTheQueuesAndTheStatementToRun() {
		try (TestSchema schema = TestDatabase.get().createSchema("bucket_index_required")) {
			SchemaName name = SchemaName.of(schema.name());
			new QueueMigrator(schema.dataSource(), name, true).afterPropertiesSet();
			QueueMigrator notMigrating = new QueueMigrator(schema.dataSource(), name, false)
				.withBucketQueues(List.of("reports", "exports"));

			InvalidQueueConfigurationException refusal = catchThrowableOfType(InvalidQueueConfigurationException.class,
					notMigrating::afterPropertiesSet);
			assertThat(refusal).as("start-up refused").isNotNull();
			assertThat(refusal.key()).isEqualTo("pgqueue.queues.reports.assignment");
			assertThat(refusal).hasMessageContaining("[reports, exports]").hasMessageContaining(BucketClaimIndex.NAME);
			assertThat(refusal.action()).contains("Have the table's owner run: CREATE INDEX CONCURRENTLY IF NOT EXISTS "
					+ BucketClaimIndex.NAME + " ON " + name.qualify("pgqueue_jobs")
					+ " (queue, bucket, priority DESC, run_at, id) WHERE state = 'available'")
				.contains("pgqueue.schema.migrate=true");

			// The statement the message gives is the one that makes it start.
			schema.jdbcTemplate().execute(new BucketClaimIndex(schema.dataSource(), name).statement());
			notMigrating.afterPropertiesSet();
		}
	}

	@Test
	void aBucketClaimWithoutTheIndexStillRunsEveryJobOnceReadingTheSharedClaimIndex() {
		try (QueueFixture fixture = QueueFixture.create("bucket_index_absent")) {
			String queue = "unindexed";
			fixture.configure(QueueSettings.defaults(queue)
				.withAssignment(QueueAssignment.BUCKETS)
				.withBuckets(8)
				.withPollInterval(Duration.ofMillis(100)));
			fixture.jdbc().execute("DROP INDEX " + SchemaName.of(fixture.schema().name()).qualify(BucketClaimIndex.NAME));
			Set<UUID> runs = ConcurrentHashMap.newKeySet();
			List<UUID> twice = new ArrayList<>();
			fixture.handle(queue + ".job", queue, (job) -> {
				if (!runs.add(job.id())) {
					synchronized (twice) {
						twice.add(job.id());
					}
				}
			});
			List<JobPoller> pollers = fixture.startPollers(queue, 2);
			List<UUID> ids = fixture.client()
				.enqueueAll(IntStream.range(0, 1000).mapToObj((i) -> JobRequest.of(queue + ".job", i).queue(queue)).toList());

			await().atMost(WAIT).until(() -> runs.containsAll(ids));
			pollers.forEach(JobPoller::stop);
			assertThat(twice).isEmpty();
			fixture.jdbc().execute("ANALYZE " + fixture.table());
			assertThat(explainBucketClaim(fixture.schema())).contains("pgqueue_jobs_claim_idx")
				.doesNotContain(BucketClaimIndex.NAME);
		}
	}

	private static List<String> indexes(TestSchema schema) {
		return schema.jdbcTemplate()
			.queryForList("SELECT indexname FROM pg_indexes WHERE schemaname = ? AND tablename = 'pgqueue_jobs'",
					String.class, schema.name());
	}

	private static String explainBucketClaim(TestSchema schema) {
		String claim = new JobStatements(SchemaName.of(schema.name())).claimLockedInBuckets
			.replace("?::smallint[]", "'{1,2,3}'::smallint[]")
			.replaceFirst("queue = \\?", "queue = 'reports'")
			.replaceFirst("kind = ANY\\(\\?\\)", "kind = ANY('{reports.job}'::text[])")
			.replace("LIMIT ?", "LIMIT 10");
		return String.join("\n", schema.jdbcTemplate().queryForList("EXPLAIN " + claim, String.class));
	}

}
