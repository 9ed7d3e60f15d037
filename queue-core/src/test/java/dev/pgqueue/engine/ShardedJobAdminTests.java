package dev.pgqueue.engine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.CRC32C;

import dev.pgqueue.AdminResult;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobPage;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobRequest;
import dev.pgqueue.JobState;
import dev.pgqueue.QueueFixture;
import dev.pgqueue.ShardUnavailableException;
import dev.pgqueue.ShardsPartlyFailedException;
import dev.pgqueue.engine.shards.ShardLayout;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The admin over three shards, each a complete install of pgqueue (a schema and a pool on the test
 * database), with no pollers: jobs stay where they were enqueued.
 */
class ShardedJobAdminTests {

	private static final ShardLayout LAYOUT = ShardLayout.of(mapOf("s1", "s2", "s3"));

	private static final Map<String, QueueFixture> fixtures = new LinkedHashMap<>();

	private static final Map<String, DatabaseEngine> engines = new LinkedHashMap<>();

	/** What the shards' watch would say: why each shard it reports down does not answer. */
	private static final Map<String, String> down = new ConcurrentHashMap<>();

	private static ShardedJobAdmin admin;

	@BeforeAll
	static void setUp() {
		for (String name : LAYOUT.shards()) {
			fixtures.put(name, QueueFixture.create("shard_admin_" + name));
		}
		QueueEngine engine = QueueFixture.shardsBuilder(fixtures).build();
		LAYOUT.shards().forEach((name) -> engines.put(name, engine.database(name)));
		Map<String, JdbcJobAdmin> admins = new LinkedHashMap<>();
		engines.forEach((name, database) -> admins.put(name, database.jdbcAdmin()));
		admin = new ShardedJobAdmin(LAYOUT, admins, down::get);
	}

	@AfterAll
	static void tearDown() {
		fixtures.values().forEach(QueueFixture::close);
	}

	@BeforeEach
	void emptyTables() {
		down.clear();
		fixtures.values().forEach(QueueFixture::deleteAllJobs);
	}

	@Test
	void aListPagesThroughEveryShardsJobsNewestFirstEachOnce() {
		List<UUID> enqueued = new ArrayList<>();
		String[] order = { "s1", "s1", "s2", "s3", "s3", "s3", "s1", "s2" };
		for (int i = 0; i < 40; i++) {
			enqueued.add(client(order[i % order.length]).enqueue(JobRequest.of("report.build", i)));
		}
		List<UUID> listed = new ArrayList<>();
		String cursor = null;
		int pages = 0;
		do {
			JobPage page = admin.list(new JobQuery(null, null, null, cursor, 7));
			page.jobs().forEach((job) -> listed.add(job.id()));
			cursor = page.next();
			pages++;
		}
		while (cursor != null && pages < 20);
		List<UUID> newestFirst = new ArrayList<>(enqueued);
		Collections.reverse(newestFirst);
		assertThat(listed).as("every job once, newest first").containsExactlyElementsOf(newestFirst);
		assertThat(pages).isEqualTo(6);
		assertThat(admin.count(new JobQuery(null, "report.build", null, null, 1))).isEqualTo(40);
	}

	@Test
	void aJobIsFoundAndChangedOnTheShardItsIdTells() {
		UUID onS2 = client("s2").enqueue(JobRequest.of("report.build", 1));
		assertThat(admin.find(onS2)).map(JobDetails::state).contains(JobState.AVAILABLE);
		AdminResult cancelled = admin.cancel(onS2);
		assertThat(cancelled.applied()).isTrue();
		assertThat(fixtures.get("s2").jdbc()
			.queryForObject("SELECT state FROM " + fixtures.get("s2").allJobs() + " WHERE public_id = ?", String.class,
					onS2))
			.isEqualTo("cancelled");
		assertThat(admin.find(UUID.randomUUID())).isEmpty();
		assertThat(admin.retry(UUID.randomUUID()).outcome()).isEqualTo(AdminResult.Outcome.NOT_FOUND);
	}

	@Test
	void countsAddUpAndPausingActsOnEveryShard() {
		client("s1").enqueue(JobRequest.of("report.build", 1).queue("reports"));
		client("s2").enqueue(JobRequest.of("report.build", 2).queue("reports"));
		client("s2").enqueue(JobRequest.of("report.build", 3).queue("reports"));
		client("s3").enqueue(JobRequest.of("mail.send", 4));
		assertThat(admin.counts().get("reports")).containsEntry(JobState.AVAILABLE, 3L);
		assertThat(admin.countsByShard().get("s2").get("reports")).containsEntry(JobState.AVAILABLE, 2L);
		try {
			assertThat(admin.pause("reports")).isTrue();
			engines.values().forEach((engine) -> assertThat(engine.admin().pausedQueues()).contains("reports"));
			assertThat(admin.pausedQueues()).containsExactly("reports");
		}
		finally {
			admin.resume("reports");
		}
		assertThat(admin.pausedQueues()).isEmpty();
	}

	@Test
	void anOperationThatFailsOnOneShardReportsTheOthersResultsAndNamesIt() {
		client("s1").enqueue(JobRequest.of("report.build", 1));
		QueueFixture s2 = fixtures.get("s2");
		s2.jdbc().execute("ALTER TABLE " + s2.table() + " RENAME TO pgqueue_jobs_away");
		try {
			assertThatThrownBy(() -> admin.cancelAll(new JobQuery(null, "report.build", null, null, 1)))
				.isInstanceOfSatisfying(ShardsPartlyFailedException.class, (ex) -> {
					assertThat(ex.failures()).containsOnlyKeys("s2");
					assertThat(ex.results()).containsOnlyKeys("s1", "s3").containsEntry("s1", 1);
					assertThat(ex).hasMessageStartingWith("cancelAll failed on shard [s2]");
				});
		}
		finally {
			s2.jdbc().execute("ALTER TABLE " + s2.table().replace("pgqueue_jobs", "pgqueue_jobs_away")
					+ " RENAME TO pgqueue_jobs");
		}
		assertThat(admin.count(new JobQuery(null, "report.build", JobState.CANCELLED, null, 1))).isEqualTo(1);
	}

	@Test
	void aJobFromBeforeTheShardsWhoseIdTellsAnotherShardByChanceIsStillFound() {
		UUID enqueued = client("s2").enqueue(JobRequest.of("report.build", 1));
		// An id made before the shards whose random bits happen to carry s1's tag, on a job that is on s2.
		CRC32C crc = new CRC32C();
		crc.update("s1".getBytes(StandardCharsets.UTF_8));
		long tagMask = 0x3FFFL << 48;
		UUID random = UUID.randomUUID();
		UUID legacy = new UUID(random.getMostSignificantBits(),
				(random.getLeastSignificantBits() & ~tagMask) | ((crc.getValue() & 0x3FFF) << 48));
		assertThat(LAYOUT.shardOf(legacy)).contains("s1");
		QueueFixture s2 = fixtures.get("s2");
		s2.jdbc().update("UPDATE " + s2.table() + " SET public_id = ? WHERE public_id = ?", legacy, enqueued);
		assertThat(admin.find(legacy)).map(JobDetails::id).contains(legacy);
		assertThat(admin.cancel(legacy).applied()).isTrue();
	}

	@Test
	void aShardTheWatchReportsDownIsNotAskedAndTheOthersAnswer() {
		client("s1").enqueue(JobRequest.of("report.build", 1).queue("reports"));
		UUID onS2 = client("s2").enqueue(JobRequest.of("report.build", 2).queue("reports"));
		client("s3").enqueue(JobRequest.of("report.build", 3).queue("reports"));
		// s2's server answers here; only the watch says it does not, so each answer below that leaves s2
		// out shows s2 was not asked (a pool to a stopped server would have waited 30 s first).
		down.put("s2", "its last probe failed: Connection refused");
		assertThatThrownBy(() -> admin.counts()).isInstanceOfSatisfying(ShardsPartlyFailedException.class, (ex) -> {
			assertThat(ex.failures()).containsOnlyKeys("s2");
			assertThat(ex.failures().get("s2")).isInstanceOf(ShardUnavailableException.class)
				.hasMessage("shard 's2' does not answer (its last probe failed: Connection refused), so it was not asked");
			assertThat(ex.results()).containsOnlyKeys("s1", "s3");
		});
		assertThatThrownBy(() -> admin.pause("reports")).isInstanceOf(ShardsPartlyFailedException.class)
			.hasMessageStartingWith("pause failed on shard [s2]");
		assertThat(engines.get("s2").admin().pausedQueues()).as("s2 not asked to pause").isEmpty();
		assertThat(engines.get("s1").admin().pausedQueues()).contains("reports");
		assertThatThrownBy(() -> admin.find(onS2)).isInstanceOfSatisfying(ShardUnavailableException.class,
				(ex) -> assertThat(ex.shard()).isEqualTo("s2"))
			.hasMessageContaining("Shard 's2', which job " + onS2 + "'s id tells, does not answer");
		UUID beforeShards = UUID.randomUUID();
		assertThatThrownBy(() -> admin.find(beforeShards)).as("an id that tells no shard may be on the one not asked")
			.isInstanceOf(ShardUnavailableException.class)
			.hasMessageContaining("is not on the shards that answer, and shard 's2' does not answer");

		down.clear();
		assertThat(admin.resume("reports")).isTrue();
		assertThat(admin.counts().get("reports")).containsEntry(JobState.AVAILABLE, 3L);
		assertThat(admin.find(onS2)).isPresent();
		assertThat(admin.find(beforeShards)).isEmpty();
	}

	@Test
	void aCursorOfAnotherLayoutOrOfOneShardIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> admin.list(new JobQuery(null, null, null, "s.1.2", 5)))
			.withMessageContaining("not a cursor of a list over these 3 shards");
		assertThatIllegalArgumentException().isThrownBy(() -> admin.list(new JobQuery(null, null, null, "42", 5)))
			.withMessageContaining("not a cursor of a list over these 3 shards");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> engines.get("s1").admin().list(new JobQuery(null, null, null, "s.1.2.x", 5)))
			.withMessageContaining("the cursor of a list across shards");
		// A position no shard could read (past the largest id) is refused before any shard is asked, as a
		// bad argument, not as every shard failing.
		assertThatIllegalArgumentException()
			.isThrownBy(() -> admin.list(new JobQuery(null, null, null, "s.9223372036854775808.1.x", 5)))
			.withMessageContaining("is not a cursor");
		// A long cursor is refused as one, never by overflowing the stack of a regular expression.
		assertThatIllegalArgumentException()
			.isThrownBy(() -> admin.list(new JobQuery(null, null, null, "s" + ".".repeat(4000), 5)))
			.withMessageContaining("not a cursor of a list over these 3 shards");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> admin.list(new JobQuery(null, null, null, "s" + ".1".repeat(2000), 5)))
			.withMessageContaining("not a cursor of a list over these 3 shards");
	}

	private static JobClient client(String shard) {
		return engines.get(shard).client();
	}

	private static Map<String, String> mapOf(String... shards) {
		Map<String, String> map = new LinkedHashMap<>();
		for (String shard : shards) {
			map.put(shard, null);
		}
		return map;
	}

}
