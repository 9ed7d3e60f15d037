package dev.pgqueue.engine.shards;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import javax.sql.DataSource;

import dev.pgqueue.JobRequest;
import dev.pgqueue.ShardUnavailableException;
import dev.pgqueue.QueueFixture;
import dev.pgqueue.engine.EngineInternals;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.test.TestDatabase;
import dev.pgqueue.test.TestSchema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Where the sharded client puts new jobs, on three complete installs of pgqueue standing in for three
 * servers (a schema and a pool each on the test database): each job is looked for in every shard's
 * table, so a job written to the wrong one, or to two, fails the test.
 */
class ShardedJobClientTests {

	private static final List<String> NAMES = List.of("s1", "s2", "s3");

	private static final SlotMap SLOTS = SlotMap.spread(NAMES);

	private static final ShardIds IDS = new ShardIds(NAMES);

	private static final Map<String, QueueFixture> fixtures = new LinkedHashMap<>();

	private static final AtomicReference<Set<String>> up = new AtomicReference<>(Set.copyOf(NAMES));

	private static ShardedJobClient client;

	@BeforeAll
	static void setUp() {
		for (String name : NAMES) {
			fixtures.put(name, QueueFixture.create("shard_" + name));
		}
		QueueEngine engine = QueueFixture.shardsBuilder(fixtures).build();
		List<ShardedJobClient.Shard> shards = new ArrayList<>();
		for (String name : NAMES) {
			shards.add(new ShardedJobClient.Shard(name, fixtures.get(name).dataSource(),
					EngineInternals.of(engine, name).client()));
		}
		client = new ShardedJobClient(shards, SLOTS, (shard) -> up.get().contains(shard) ? null : "marked down by the test",
				false, ShardedJobClientTests::atMostAHundred);
	}

	@AfterAll
	static void tearDown() {
		fixtures.values().forEach(QueueFixture::close);
	}

	@Test
	void aKeyedJobLandsOnItsSlotsShardAndItsIdTellsThatShard() {
		for (int i = 0; i < 60; i++) {
			String key = "tenant-" + i;
			UUID id = client.enqueue(JobRequest.of("report.build", i).concurrencyKey(key));
			assertThat(shardsHolding(id)).as("shards holding the job of %s", key).containsExactly(SLOTS.shardOf(key));
			assertThat(IDS.shardOf(id)).contains(SLOTS.shardOf(key));
		}
		for (int i = 0; i < 30; i++) {
			String bucketKey = "account-" + i;
			UUID bucketed = client.enqueue(JobRequest.of("report.build", i).bucketKey(bucketKey));
			assertThat(shardsHolding(bucketed)).as("without a concurrency key, the bucket key routes")
				.containsExactly(SLOTS.shardOf(bucketKey));
		}
	}

	@Test
	void jobsWithoutAKeyTakeTheShardsThatAreUpInTurnAndAKeyedJobForADownShardIsRefusedNamingIt() {
		Map<String, Integer> landed = new HashMap<>();
		for (int i = 0; i < 30; i++) {
			UUID id = client.enqueue("mail.send", i);
			landed.merge(shardsHolding(id).get(0), 1, Integer::sum);
		}
		assertThat(landed).containsOnly(Map.entry("s1", 10), Map.entry("s2", 10), Map.entry("s3", 10));
		up.set(Set.of("s1", "s3"));
		try {
			for (int i = 0; i < 20; i++) {
				assertThat(shardsHolding(client.enqueue("mail.send", i))).containsAnyOf("s1", "s3").doesNotContain("s2");
			}
			String keyOfS2 = keyOf("s2");
			long before = countOn("s2");
			assertThatThrownBy(() -> client.enqueue(JobRequest.of("mail.send", 0).concurrencyKey(keyOfS2)))
				.isInstanceOf(ShardUnavailableException.class)
				.hasMessageContaining("with key '" + keyOfS2 + "' belongs on shard 's2', which does not answer "
						+ "(marked down by the test)")
				.satisfies((ex) -> assertThat(((ShardUnavailableException) ex).shard()).isEqualTo("s2"));
			assertThatThrownBy(() -> client.enqueue(JobRequest.of("mail.send", 0).shard("s2")))
				.isInstanceOf(ShardUnavailableException.class)
				.hasMessageContaining("names shard 's2', which does not answer");
			assertThat(countOn("s2")).isEqualTo(before);
		}
		finally {
			up.set(Set.copyOf(NAMES));
		}
	}

	@Test
	void anEnqueueInsideATransactionOnAShardLandsThereAndRollsBackWithIt() {
		QueueFixture s2 = fixtures.get("s2");
		TransactionTemplate onS2 = new TransactionTemplate(new DataSourceTransactionManager(s2.dataSource()));
		UUID kept = onS2.execute((status) -> client.enqueue("mail.send", "kept"));
		assertThat(shardsHolding(kept)).containsExactly("s2");

		List<UUID> discarded = new ArrayList<>();
		onS2.executeWithoutResult((status) -> {
			discarded.addAll(client.enqueueAll(List.of(JobRequest.of("mail.send", 1), JobRequest.of("mail.send", 2),
					JobRequest.of("mail.send", 3).concurrencyKey(keyOf("s2")))));
			status.setRollbackOnly();
		});
		assertThat(discarded).hasSize(3).allSatisfy((id) -> assertThat(shardsHolding(id)).isEmpty());

		String keyOfS3 = keyOf("s3");
		assertThatIllegalStateException()
			.isThrownBy(() -> onS2.executeWithoutResult(
					(status) -> client.enqueue(JobRequest.of("mail.send", 4).concurrencyKey(keyOfS3))))
			.withMessageContaining("with key '" + keyOfS3 + "' belongs on shard 's3', but the caller's transaction is "
					+ "on shard 's2'");
	}

	@Test
	void aTransactionOnADataSourceThatIsNoShardIsRefusedNamingIt() {
		try (TestSchema other = TestDatabase.get().createSchema("not_a_shard")) {
			TransactionTemplate elsewhere = new TransactionTemplate(new DataSourceTransactionManager(other.dataSource()));
			assertThatIllegalStateException()
				.isThrownBy(() -> elsewhere.executeWithoutResult((status) -> client.enqueue("mail.send", 1)))
				.withMessageStartingWith("The caller's transaction is on DataSource [" + other.dataSource() + "]")
				.withMessageContaining("which is no shard (the shards are [s1, s2, s3])");
		}
	}

	@Test
	void enqueueAllSendsEachShardItsRequestsAndAnswersInTheRequestsOrder() {
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 90; i++) {
			requests.add((i % 3 == 0) ? JobRequest.of("report.build", i) : JobRequest.of("report.build", i)
				.concurrencyKey("customer-" + i));
		}
		List<UUID> ids = client.enqueueAll(requests);
		assertThat(ids).hasSize(90).doesNotHaveDuplicates();
		for (int i = 0; i < 90; i++) {
			List<String> holding = shardsHolding(ids.get(i));
			assertThat(holding).as("shards holding request %d", i).hasSize(1);
			assertThat(fixtures.get(holding.get(0)).row(ids.get(i)).get("payload").toString()).isEqualTo(String.valueOf(i));
			if (i % 3 != 0) {
				assertThat(holding).containsExactly(SLOTS.shardOf("customer-" + i));
			}
		}
	}

	@Test
	void theJobsOfAUniqueKeyMeetOnOneShardSoThatTheKeyHoldsAcrossShards() {
		for (int i = 0; i < 20; i++) {
			String key = "invoice-" + i;
			UUID first = client.enqueue(JobRequest.of("invoice.send", i).uniqueKey(key));
			UUID again = client.enqueue(JobRequest.of("invoice.send", i).uniqueKey(key));
			assertThat(again).as("the second enqueue of unique key %s", key).isEqualTo(first);
			assertThat(shardsHolding(first)).containsExactly(SLOTS.shardOf(key));
		}
	}

	@Test
	void withSpillingOnAJobWithoutAKeyThatItsShardRefusesGoesToTheNextShardAndAKeyedOneDoesNot() {
		// s2 as a server that has just stopped, before the watch has noticed: every shard still counts as up.
		DelegatingDataSource s2 = new DelegatingDataSource(fixtures.get("s2").dataSource());
		Function<String, DataSource> pools = (name) -> name.equals("s2") ? s2 : fixtures.get(name).dataSource();
		QueueEngine engine = QueueFixture.shardsBuilder(fixtures, pools).build();
		List<ShardedJobClient.Shard> shards = new ArrayList<>();
		for (String name : NAMES) {
			shards.add(new ShardedJobClient.Shard(name, pools.apply(name), EngineInternals.of(engine, name).client()));
		}
		ShardedJobClient spilling = new ShardedJobClient(shards, SLOTS, (shard) -> null, true, ShardedJobClientTests::atMostAHundred);
		ShardedJobClient strict = new ShardedJobClient(shards, SLOTS, (shard) -> null, false, ShardedJobClientTests::atMostAHundred);
		s2.setTargetDataSource(refusing());
		long onS2 = countOn("s2");
		for (int i = 0; i < 12; i++) {
			assertThat(shardsHolding(spilling.enqueue("mail.send", i))).hasSize(1).doesNotContain("s2");
		}
		List<UUID> batch = spilling.enqueueAll(List.of(JobRequest.of("mail.send", 1), JobRequest.of("mail.send", 2)));
		batch.forEach((id) -> assertThat(shardsHolding(id)).hasSize(1).doesNotContain("s2"));
		assertThatThrownBy(() -> spilling.enqueue(JobRequest.of("mail.send", 0).concurrencyKey(keyOf("s2"))))
			.as("a keyed job is never spilled")
			.isInstanceOf(CannotGetJdbcConnectionException.class);
		assertThatThrownBy(() -> {
			for (int i = 0; i < 3; i++) {
				strict.enqueue("mail.send", i);
			}
		}).as("without spilling, the job the round robin gives s2 fails").isInstanceOf(CannotGetJdbcConnectionException.class);
		assertThat(countOn("s2")).isEqualTo(onS2);
	}

	@Test
	void withSpillingOnAJobWhoseShardMayHaveCommittedItIsNotSpilled() {
		// s2 as a server whose connection breaks once the insert has reached it: the insert commits, its
		// answer is lost (SQLState 08006, as PgJDBC reports an I/O failure).
		DataSource s2 = answerLost(fixtures.get("s2").dataSource());
		Function<String, DataSource> pools = (name) -> name.equals("s2") ? s2 : fixtures.get(name).dataSource();
		QueueEngine engine = QueueFixture.shardsBuilder(fixtures, pools).build();
		List<ShardedJobClient.Shard> shards = new ArrayList<>();
		for (String name : NAMES) {
			shards.add(new ShardedJobClient.Shard(name, pools.apply(name), EngineInternals.of(engine, name).client()));
		}
		ShardedJobClient spilling = new ShardedJobClient(shards, SLOTS, (shard) -> null, true, ShardedJobClientTests::atMostAHundred);
		Map<String, Long> before = new HashMap<>();
		NAMES.forEach((name) -> before.put(name, countOn(name)));
		int failed = 0;
		for (int i = 0; i < 6; i++) {
			try {
				spilling.enqueue(JobRequest.of("mail.send", i));
			}
			catch (RuntimeException ex) {
				assertThat(ex).as("the failure the caller gets").hasRootCauseMessage("the answer was lost");
				failed++;
			}
		}
		long added = NAMES.stream().mapToLong((name) -> countOn(name) - before.get(name)).sum();
		assertThat(failed).as("enqueues the round robin gave s2").isPositive();
		assertThat(added).as("jobs written, each once: a spill would have written s2's a second time").isEqualTo(6);
		assertThat(countOn("s2") - before.get("s2")).isEqualTo(failed);
	}

	@Test
	void anEnqueueAllOverTheLimitIsRefusedBeforeAnyShardTakesItsPart() {
		Map<String, Long> before = new HashMap<>();
		NAMES.forEach((name) -> before.put(name, countOn(name)));
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 101; i++) {
			requests.add(JobRequest.of("mail.send", i).concurrencyKey("key-" + i));
		}
		assertThatThrownBy(() -> client.enqueueAll(requests)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("101 jobs")
			.hasMessageContaining("pgqueue.max-jobs-per-enqueue (100)");
		NAMES.forEach((name) -> assertThat(countOn(name)).as("jobs on %s", name).isEqualTo(before.get(name)));
		assertThat(client.enqueueAll(requests.subList(0, 100))).hasSize(100);
	}

	/**
	 * A DataSource whose statements run, and whose connection then fails as a broken one does: what
	 * each statement did is committed (autocommit), but the caller hears only of the failure.
	 */
	private static DataSource answerLost(DataSource target) {
		return new DelegatingDataSource(target) {

			@Override
			public Connection getConnection() throws SQLException {
				Connection connection = super.getConnection();
				return (Connection) Proxy.newProxyInstance(ShardedJobClientTests.class.getClassLoader(),
						new Class<?>[] { Connection.class }, (proxy, method, args) -> {
							Object result = invoke(connection, method, args);
							if (method.getName().equals("prepareStatement")) {
								PreparedStatement statement = (PreparedStatement) result;
								return Proxy.newProxyInstance(ShardedJobClientTests.class.getClassLoader(),
										new Class<?>[] { PreparedStatement.class }, (p, m, a) -> {
											Object done = invoke(statement, m, a);
											if (m.getName().startsWith("execute") && connection.getAutoCommit()) {
												throw new SQLException("the answer was lost", "08006");
											}
											return done;
										});
							}
							return result;
						});
			}

		};
	}

	private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
		try {
			return method.invoke(target, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

	/** A DataSource on a port nothing listens on, as a stopped server: every connection is refused. */
	private static DataSource refusing() {
		try (ServerSocket free = new ServerSocket(0)) {
			return new DriverManagerDataSource("jdbc:postgresql://127.0.0.1:" + free.getLocalPort() + "/test");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** The shards whose jobs table holds the job. */
	private static long countOn(String shard) {
		QueueFixture fixture = fixtures.get(shard);
		return fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs(), Long.class);
	}

	private static List<String> shardsHolding(UUID id) {
		List<String> holding = new ArrayList<>();
		for (String name : NAMES) {
			QueueFixture fixture = fixtures.get(name);
			Integer count = fixture.jdbc()
				.queryForObject("SELECT count(*) FROM " + fixture.allJobs() + " WHERE public_id = ?", Integer.class, id);
			if (count != null && count > 0) {
				holding.add(name);
			}
		}
		return holding;
	}

	private static String keyOf(String shard) {
		for (int i = 0;; i++) {
			if (SLOTS.shardOf("key-" + i).equals(shard)) {
				return "key-" + i;
			}
		}
	}

	/** The check of a call's size the engine hands the client, at a hundred jobs. */
	private static void atMostAHundred(List<JobRequest> requests) {
		if (requests.size() > 100) {
			throw new IllegalArgumentException("An enqueueAll of " + requests.size()
					+ " jobs is larger than pgqueue.max-jobs-per-enqueue (100)");
		}
	}

}
