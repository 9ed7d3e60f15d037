package dev.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.sql.MaintenanceRepository.PartitionChanges;
import dev.pgqueue.engine.sql.MaintenanceRepository.TimePartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Completed jobs are kept in time partitions that the cleaner creates ahead and drops whole once
 * every job in them is past the retention, on a real table: the partitions made, where a completion
 * lands, what a pass drops and deletes.
 */
class FinishedPartitionsTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private QueueFixture fixture;

	private QueueFixture.Maintenance maintenance;

	@BeforeEach
	void setUp() {
		this.fixture = QueueFixture.create("partitions");
		// The default retention: one hour, partitions of 15 minutes.
		this.maintenance = this.fixture.maintenance((settings) -> settings);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void aCleanerPassCreatesContiguousPartitionsAheadAndTheNextCreatesNoneMore() {
		assertThat(repository().completedPartitions()).isEmpty();
		Instant before = databaseNow();

		this.maintenance.clean();

		List<TimePartition> partitions = repository().completedPartitions();
		assertThat(partitions).isNotEmpty();
		assertThat(partitions.get(0).from()).as("the first starts a minute ahead at least")
			.isAfterOrEqualTo(before.plus(Duration.ofMinutes(1)));
		for (int i = 0; i < partitions.size(); i++) {
			TimePartition partition = partitions.get(i);
			assertThat(Duration.between(partition.from(), partition.to())).isEqualTo(Duration.ofMinutes(15));
			assertThat(partition.from().getEpochSecond() % Duration.ofMinutes(15).toSeconds()).isZero();
			if (i > 0) {
				assertThat(partition.from()).isEqualTo(partitions.get(i - 1).to());
			}
		}
		assertThat(partitions.get(partitions.size() - 1).to()).as("two widths ahead covered")
			.isAfterOrEqualTo(before.plus(Duration.ofMinutes(31)));

		this.maintenance.clean();
		assertThat(repository().completedPartitions()).isEqualTo(partitions);
		assertThat(this.fixture.jdbc()
			.queryForList("SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = ?::regclass",
					String.class, this.fixture.schema().name() + "." + partitions.get(0).name()))
			.as("a new partition has the indexes of the completed jobs' table")
			.hasSize(7);
	}

	@Test
	void aJobCompletedWhileAPartitionCoversNowLandsInIt() throws Exception {
		Instant now = databaseNow().truncatedTo(ChronoUnit.MINUTES);
		TimePartition current = slot(now.minus(Duration.ofMinutes(1)), now.plus(Duration.ofMinutes(5)));
		repository().changeCompletedPartitions((existing, at) -> new PartitionChanges(List.of(), List.of(current)));

		this.fixture.configure(QueueSettings.defaults("landing").withPollInterval(Duration.ofMillis(50)));
		CountDownLatch ran = new CountDownLatch(1);
		this.fixture.handle("landing.job", "landing", (job) -> ran.countDown());
		UUID id = this.fixture.client().enqueue(JobRequest.of("landing.job", 1).queue("landing"));
		JobPoller poller = this.fixture.poller("landing");
		poller.start();
		try {
			assertThat(ran.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
			org.awaitility.Awaitility.await()
				.atMost(WAIT)
				.until(() -> "completed".equals(this.fixture.row(id).get("state")));
		}
		finally {
			poller.stop();
		}
		assertThat(partitionOf(id)).isEqualTo(current.name());
		assertThat(this.fixture.jdbc()
			.queryForObject("SELECT count(*) FROM " + this.fixture.table() + " WHERE public_id = ?", Long.class, id))
			.as("left the claimed table")
			.isZero();
	}

	@Test
	void aPassDropsThePartitionsPastTheRetentionAndDeletesOnlyTheDefaultPartitionsExpiredRows() {
		Instant now = databaseNow().truncatedTo(ChronoUnit.MINUTES);
		TimePartition expired = slot(now.minus(Duration.ofMinutes(180)), now.minus(Duration.ofMinutes(165)));
		TimePartition kept = slot(now.minus(Duration.ofMinutes(65)), now.minus(Duration.ofMinutes(50)));
		repository().changeCompletedPartitions(
				(existing, at) -> new PartitionChanges(List.of(), List.of(expired, kept)));
		// In the expired partition; in the partition that still holds a young job (kept whole, the old
		// job with it, until its end is past the retention); in the default partition, old and young.
		UUID inExpired = completedAt(now.minus(Duration.ofMinutes(170)));
		UUID oldInKept = completedAt(now.minus(Duration.ofMinutes(64)));
		UUID oldInDefault = completedAt(now.minus(Duration.ofMinutes(120)));
		UUID youngInDefault = completedAt(now.minus(Duration.ofMinutes(10)));
		assertThat(partitionOf(inExpired)).isEqualTo(expired.name());
		assertThat(partitionOf(oldInDefault)).isEqualTo("pgqueue_finished_jobs_completed_default");

		int deleted = this.maintenance.clean();

		assertThat(repository().completedPartitions()).extracting(TimePartition::name)
			.doesNotContain(expired.name())
			.contains(kept.name());
		assertThat(this.fixture.jdbc().queryForObject("SELECT to_regclass(?) IS NULL", Boolean.class,
				this.fixture.schema().name() + "." + expired.name())).as("the expired partition is gone").isTrue();
		assertThat(exists(inExpired)).isFalse();
		assertThat(exists(oldInDefault)).isFalse();
		assertThat(exists(oldInKept)).as("kept until its whole partition is past the retention").isTrue();
		assertThat(exists(youngInDefault)).isTrue();
		assertThat(deleted).as("rows deleted one by one: only the default partition's").isEqualTo(1);
	}

	/**
	 * A statement on the whole table ({@code TRUNCATE}, a migration) locks the finished jobs' table,
	 * then the completed jobs' table below it. Attaching a partition locks the completed jobs' table,
	 * then reads its bound from the table above: without the pass taking the upper table first, the
	 * two wait for each other. Here the whole-table side holds the upper table while a pass waits,
	 * then asks for the lower one with half a second to get it (the pass would wait a second).
	 */
	@Test
	void aPartitionPassTakesTheTablesInTheOrderOfAStatementOnTheWholeTable() throws Exception {
		Instant now = databaseNow().truncatedTo(ChronoUnit.MINUTES);
		TimePartition next = slot(now.plus(Duration.ofMinutes(60)), now.plus(Duration.ofMinutes(75)));
		String finished = this.fixture.finishedTable();
		String completed = dev.pgqueue.schema.SchemaName.of(this.fixture.schema().name()).qualify("pgqueue_finished_jobs_completed");
		try (java.sql.Connection whole = this.fixture.dataSource().getConnection();
				java.sql.Statement statement = whole.createStatement()) {
			whole.setAutoCommit(false);
			statement.execute("LOCK TABLE ONLY " + finished + " IN ACCESS EXCLUSIVE MODE");
			java.util.concurrent.CompletableFuture<MaintenanceRepository.PartitionPass> pass = java.util.concurrent.CompletableFuture
				.supplyAsync(() -> repository()
					.changeCompletedPartitions((existing, at) -> new PartitionChanges(List.of(), List.of(next))));
			org.awaitility.Awaitility.await()
				.atMost(WAIT)
				.pollInterval(Duration.ofMillis(5))
				.until(() -> this.fixture.jdbc()
					.queryForObject("SELECT count(*) FROM pg_locks WHERE relation = ?::regclass AND NOT granted",
							Long.class, finished) > 0);
			statement.execute("SET LOCAL lock_timeout = '500ms'");
			statement.execute("LOCK TABLE ONLY " + completed + " IN ACCESS EXCLUSIVE MODE");
			whole.commit();
			assertThat(pass.get(WAIT.toSeconds(), TimeUnit.SECONDS).status())
				.isEqualTo(MaintenanceRepository.PartitionPass.Status.DONE);
		}
		assertThat(repository().completedPartitions()).contains(next);
	}

	private UUID completedAt(Instant finishedAt) {
		UUID id = UUID.randomUUID();
		this.fixture.jdbc()
			.update("INSERT INTO " + this.fixture.table() + " (public_id, kind, queue, payload, state, attempt, "
					+ "max_attempts, finished_at) VALUES (?, 'k', 'kept', '{}', 'completed', 1, 1, ?)", id,
					java.sql.Timestamp.from(finishedAt));
		return id;
	}

	private String partitionOf(UUID id) {
		return this.fixture.jdbc()
			.queryForObject("SELECT c.relname FROM " + this.fixture.finishedTable() + " f JOIN pg_class c "
					+ "ON c.oid = f.tableoid WHERE f.public_id = ?", String.class, id);
	}

	private boolean exists(UUID id) {
		return this.fixture.jdbc()
			.queryForObject("SELECT count(*) FROM " + this.fixture.allJobs() + " WHERE public_id = ?", Long.class, id) > 0;
	}

	private MaintenanceRepository repository() {
		return this.fixture.maintenanceRepository();
	}

	private Instant databaseNow() {
		return this.fixture.jdbc().queryForObject("SELECT now()", java.sql.Timestamp.class).toInstant();
	}

	private static TimePartition slot(Instant from, Instant to) {
		return new TimePartition(java.time.format.DateTimeFormatter
			.ofPattern("'pgqueue_finished_jobs_completed_p'yyyyMMdd't'HHmm", java.util.Locale.ROOT)
			.withZone(java.time.ZoneOffset.UTC)
			.format(from), from, to);
	}

}
