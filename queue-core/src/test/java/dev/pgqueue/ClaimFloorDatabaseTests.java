package dev.pgqueue;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import dev.pgqueue.engine.job.ClaimStart;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.poll.ClaimFloor;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.sql.JobStatements;
import dev.pgqueue.schema.SchemaName;
import dev.pgqueue.test.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Claim floors on a real table, while another session holds a {@code REPEATABLE READ} snapshot so
 * that nothing the claims leave behind can be removed or marked dead: what a claim reads, and that
 * no job is left behind a floor.
 */
class ClaimFloorDatabaseTests {

	private static final String[] KINDS = { "floor.job" };

	private static QueueFixture fixture;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("claim_floor");
		for (QueueMode mode : QueueMode.values()) {
			String queue = queue(mode);
			fixture.configure(QueueSettings.defaults(queue).withMode(mode).withPollInterval(Duration.ofMillis(200)));
			fixture.handle(queue + ".job", queue, (job) -> {
			});
		}
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void whileASnapshotIsHeldAClaimFromTheFloorsReadsOnlyTheEntriesWithinTheMargin(QueueMode mode) throws Exception {
		String queue = "direct_" + mode.name().toLowerCase();
		int claimed = 10_000;
		try (Connection holder = holdSnapshot()) {
			// Due one a second over the past hours, so that claims move the floor through them.
			Instant first = Instant.now().minus(Duration.ofHours(3));
			List<JobRequest> requests = new ArrayList<>();
			for (int i = 0; i < claimed; i++) {
				requests.add(JobRequest.of("floor.job", i).queue(queue).runAt(first.plusSeconds(i)));
			}
			fixture.client().enqueueAll(requests);
			ClaimFloor floor = new ClaimFloor(Duration.ofHours(1), ClaimFloor.DEFAULT_MARGIN);
			int done = 0;
			while (done < claimed) {
				done += claimAndComplete(floor, queue, mode, 100);
			}
			UUID latest = fixture.client().enqueue(JobRequest.of("floor.job", "next").queue(queue));

			ClaimStart[] next = new ClaimStart[1];
			floor.claim((start) -> {
				next[0] = start;
				return List.of();
			});
			assertThat(next[0].isSweep()).as("the sweep interval has not passed").isFalse();
			long fromFloors = buffersRead(mode, next[0], queue);
			long fromStart = buffersRead(mode, ClaimStart.SWEEP, queue);

			// Claimed rows lie about 25 to a heap page, read once for the consecutive entries that point there.
			assertThat(fromStart).as("a claim from the start visits the pages of every claimed job's entry and row")
				.isGreaterThan(claimed / 40);
			assertThat(fromFloors).as("a claim from the floors starts two seconds behind the last job claimed (and a leased one writes the row it claims)")
				.isLessThan(30);
			assertThat(fixture.row(latest)).containsEntry("state", "available");
			holder.rollback();
		}
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void aJobThatBecomesAvailableBehindTheFloorIsClaimedByTheNextSweep(QueueMode mode) {
		String queue = queue(mode);
		JobPoller poller = fixture.poller(queue);
		poller.start();
		try {
			UUID recent = fixture.client().enqueue(JobRequest.of(queue + ".job", "recent").queue(queue));
			await().atMost(Duration.ofSeconds(10)).until(() -> finished(recent));
			// As a rescued job or a rolled-back batch would come back: due long before the floor.
			UUID behind = fixture.client()
				.enqueue(JobRequest.of(queue + ".job", "behind").queue(queue).runAt(Instant.now().minus(Duration.ofHours(2))));

			await().atMost(Duration.ofSeconds(10)).until(() -> finished(behind));
		}
		finally {
			poller.stop();
		}
	}

	@Test
	void claimsFromTheFloorsKeepThePriorityOrderOfTheLevelsTheyKnow() {
		String queue = "direct_priorities";
		ClaimFloor floor = new ClaimFloor(Duration.ofHours(1), ClaimFloor.DEFAULT_MARGIN);
		fixture.client().enqueueAll(List.of(JobRequest.of("floor.job", 1).queue(queue).priority(0),
				JobRequest.of("floor.job", 2).queue(queue).priority(7)));
		assertThat(claimAndComplete(floor, queue, QueueMode.TRANSACTIONAL, 10)).isEqualTo(2);
		fixture.client().enqueueAll(List.of(JobRequest.of("floor.job", 3).queue(queue).priority(0),
				JobRequest.of("floor.job", 4).queue(queue).priority(7), JobRequest.of("floor.job", 5).queue(queue).priority(0)));

		List<ClaimedJob> jobs = fixture.transactionTemplate().execute((status) -> {
			List<ClaimedJob> claimed = floor.claim((start) -> {
				assertThat(start.isSweep()).isFalse();
				assertThat(java.util.Arrays.stream(start.priorities()).distinct()).containsExactly(7, 0);
				return fixture.repository().claimLocked(queue, KINDS, 2, start);
			});
			fixture.repository().completeLocked(claimed.stream().map(ClaimedJob::id).toList(), false);
			return claimed;
		});

		assertThat(jobs).extracting((job) -> job.job().payload()).containsExactly("4", "3");
	}

	private static int claimAndComplete(ClaimFloor floor, String queue, QueueMode mode, int limit) {
		if (mode == QueueMode.LEASED) {
			List<ClaimedJob> jobs = floor.claim((start) -> fixture.repository()
				.claimLeased(queue, KINDS, limit, "floor-test", Duration.ofMinutes(1), start));
			fixture.repository().completeLeasedMany(jobs.stream().map(ClaimedJob::id).toList(),
					jobs.stream().map(ClaimedJob::attempt).toList(), false);
			return jobs.size();
		}
		return fixture.transactionTemplate().execute((status) -> {
			List<ClaimedJob> jobs = floor.claim((start) -> fixture.repository().claimLocked(queue, KINDS, limit, start));
			fixture.repository().completeLocked(jobs.stream().map(ClaimedJob::id).toList(), false);
			return jobs.size();
		});
	}

	/**
	 * Shared buffers the claim statement reads, from {@code EXPLAIN (ANALYZE, BUFFERS)} of the very
	 * statement the engine runs, in a transaction rolled back afterwards.
	 */
	private static long buffersRead(QueueMode mode, ClaimStart start, String queue) {
		JobStatements sql = new JobStatements(SchemaName.of(fixture.schema().name()));
		boolean leased = mode == QueueMode.LEASED;
		String statement = start.isSweep() ? (leased ? sql.claimLeased : sql.claimLocked)
				: (leased ? sql.claimLeasedFrom : sql.claimLockedFrom);
		return fixture.transactionTemplate().execute((status) -> {
			status.setRollbackOnly();
			String plan = fixture.jdbc().query((Connection con) -> {
				var ps = con.prepareStatement("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + statement);
				int i = 1;
				if (!start.isSweep()) {
					Integer[] priorities = new Integer[start.priorities().length];
					java.sql.Timestamp[] from = new java.sql.Timestamp[priorities.length];
					Long[] fromIds = new Long[priorities.length];
					java.sql.Timestamp[] until = new java.sql.Timestamp[priorities.length];
					for (int p = 0; p < priorities.length; p++) {
						priorities[p] = start.priorities()[p];
						from[p] = java.sql.Timestamp.from(start.fromRunAts()[p]);
						fromIds[p] = start.fromIds()[p];
						Instant untilRunAt = start.untilRunAts()[p];
						until[p] = (untilRunAt != null) ? java.sql.Timestamp.from(untilRunAt) : null;
					}
					ps.setArray(i++, con.createArrayOf("int2", priorities));
					ps.setArray(i++, con.createArrayOf("timestamptz", from));
					ps.setArray(i++, con.createArrayOf("int8", fromIds));
					ps.setArray(i++, con.createArrayOf("timestamptz", until));
				}
				ps.setString(i++, queue);
				ps.setArray(i++, con.createArrayOf("text", KINDS));
				ps.setInt(i++, 10);
				if (!start.isSweep()) {
					ps.setInt(i++, 10);
				}
				if (leased) {
					ps.setString(i++, "explain");
					ps.setLong(i++, 60_000);
					// No rate limit granted this claim: its jobs start at its now().
					ps.setObject(i, null);
				}
				return ps;
			}, (rs) -> {
				rs.next();
				return rs.getString(1);
			});
			var json = fixture.jsonMapper().readTree(plan).get(0).get("Plan");
			return json.get("Shared Hit Blocks").asLong() + json.get("Shared Read Blocks").asLong();
		});
	}

	/** A session that takes a {@code REPEATABLE READ} snapshot and keeps it until rolled back. */
	private static Connection holdSnapshot() throws Exception {
		Connection holder = TestDatabase.get().connect();
		holder.setAutoCommit(false);
		holder.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
		try (Statement statement = holder.createStatement()) {
			statement.executeQuery("SELECT count(*) FROM pg_class").close();
		}
		return holder;
	}

	private static boolean finished(UUID id) {
		return "completed".equals(fixture.row(id).get("state"));
	}

	private static String queue(QueueMode mode) {
		return "floor_" + mode.name().toLowerCase();
	}

}
