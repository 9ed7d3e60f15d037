package dev.pgqueue;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

class JobClientTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static QueueFixture fixture;

	private static final Map<String, AtomicInteger> pollCycles = new ConcurrentHashMap<>();

	private static final Set<UUID> handledInTxQueue = ConcurrentHashMap.newKeySet();

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("job_client");
		fixture.jdbc().execute("CREATE TABLE orders (id uuid PRIMARY KEY, note text NOT NULL)");
		fixture.metrics(new QueueMetrics() {
			@Override
			public void pollCycle(String queue, long nanos, int claimed) {
				pollCycles.computeIfAbsent(queue, (q) -> new AtomicInteger()).incrementAndGet();
			}
		});
		fixture.configure(QueueSettings.defaults("mail").withMaxAttempts(3));
		fixture.configure(QueueSettings.defaults("reports").withMaxAttempts(7));
		fixture.configure(QueueSettings.defaults("client-tx").withPollInterval(Duration.ofMillis(20)));
		fixture.configure(QueueSettings.defaults("spread").withRunAtJitter(Duration.ofSeconds(20)).withBuckets(16));
		fixture.handle("mail.welcome", "mail", (job) -> {
		});
		fixture.handle("order.confirm", "client-tx", (job) -> handledInTxQueue.add(job.id()));
	}

	@AfterAll
	static void tearDown() {
		fixture.close();
	}

	@Test
	void enqueueReturnsThePublicIdAndStoresKindQueuePayloadAsJsonbPriorityAndMaxAttempts() {
		UUID id = fixture.client()
			.enqueue(JobRequest.of("invoice.send", new Invoice("ada", 42, List.of("tea", "cake")))
				.queue("billing")
				.priority(-7)
				.maxAttempts(4));

		Map<String, Object> row = fixture.jdbc()
			.queryForMap("SELECT kind, queue, priority, max_attempts, state, attempt, pg_typeof(payload)::text AS type, "
					+ "payload = '{\"customer\": \"ada\", \"total\": 42, \"lines\": [\"tea\", \"cake\"]}'::jsonb AS same, "
					+ "payload #>> '{lines,1}' AS second_line FROM " + fixture.table() + " WHERE public_id = ?", id);
		assertThat(row).containsEntry("kind", "invoice.send")
			.containsEntry("queue", "billing")
			.containsEntry("priority", -7)
			.containsEntry("max_attempts", 4)
			.containsEntry("state", "available")
			.containsEntry("attempt", 0)
			.containsEntry("type", "jsonb")
			.containsEntry("same", true)
			.containsEntry("second_line", "cake");
	}

	@Test
	void enqueueStoresANullPayloadAsJsonNull() {
		UUID id = fixture.client().enqueue("ping", null);
		assertThat(fixture.jdbc()
			.queryForObject("SELECT jsonb_typeof(payload) FROM " + fixture.allJobs() + " WHERE public_id = ?", String.class,
					id)).isEqualTo("null");
	}

	@Test
	void enqueueJoinsTheCallersTransactionSoJobAndBusinessRowRollBackTogetherUnseenByPollers() {
		JobPoller poller = fixture.poller("client-tx");
		poller.start();
		try {
			UUID rolledBack = fixture.transactionTemplate().execute((status) -> {
				UUID id = fixture.client().enqueue("order.confirm", Map.of("order", "rolled back"));
				fixture.jdbc().update("INSERT INTO orders (id, note) VALUES (?, 'rolled back')", id);
				// Let the poller claim several times while the job exists, uncommitted.
				int seen = polls("client-tx");
				await().atMost(WAIT).until(() -> polls("client-tx") >= seen + 3);
				status.setRollbackOnly();
				return id;
			});
			assertThat(countWhere(fixture.table() + " WHERE public_id = ?", rolledBack)).isZero();
			assertThat(countWhere("orders WHERE id = ?", rolledBack)).isZero();

			ExecutorService outsider = Executors.newSingleThreadExecutor();
			UUID committed;
			try {
				committed = fixture.transactionTemplate().execute((status) -> {
					UUID id = fixture.client().enqueue("order.confirm", Map.of("order", "kept"));
					fixture.jdbc().update("INSERT INTO orders (id, note) VALUES (?, 'kept')", id);
					// Another thread has its own connection, outside this transaction.
					assertThat(outsider.submit(() -> countWhere(fixture.table() + " WHERE public_id = ?", id)))
						.succeedsWithin(WAIT)
						.isEqualTo(0L);
					return id;
				});
			}
			finally {
				outsider.shutdownNow();
			}
			assertThat(countWhere(fixture.table() + " WHERE public_id = ?", committed)).isEqualTo(1);
			assertThat(countWhere("orders WHERE id = ?", committed)).isEqualTo(1);
			await().atMost(WAIT).until(() -> handledInTxQueue.contains(committed));
			assertThat(handledInTxQueue).containsExactly(committed);
		}
		finally {
			poller.stop();
		}
	}

	@Test
	void enqueueAllInsertsManyJobsInOneStatementAndReturnsTheirIdsInRequestOrder() {
		List<JobRequest> requests = IntStream.range(0, 500)
			.mapToObj((i) -> JobRequest.of((i % 2 == 0) ? "batch.even" : "batch.odd", Map.of("index", i))
				.queue("batch"))
			.toList();

		List<UUID> ids = fixture.client().enqueueAll(requests);

		assertThat(ids).hasSize(500).doesNotHaveDuplicates();
		Map<UUID, Integer> indexById = new HashMap<>();
		Map<UUID, String> kindById = new HashMap<>();
		fixture.jdbc().query("SELECT public_id, (payload ->> 'index')::int, kind FROM " + fixture.allJobs()
				+ " WHERE queue = 'batch'", (java.sql.ResultSet rs) -> {
					UUID id = rs.getObject(1, UUID.class);
					indexById.put(id, rs.getInt(2));
					kindById.put(id, rs.getString(3));
				});
		assertThat(indexById).hasSize(500);
		for (int i = 0; i < ids.size(); i++) {
			assertThat(indexById.get(ids.get(i))).as("job at position %d", i).isEqualTo(i);
			assertThat(kindById.get(ids.get(i))).isEqualTo((i % 2 == 0) ? "batch.even" : "batch.odd");
		}
		// One statement: one transaction id and one statement timestamp for every row.
		assertThat(fixture.jdbc()
			.queryForMap("SELECT count(DISTINCT xmin::text) AS transactions, count(DISTINCT created_at) AS instants FROM "
					+ fixture.table() + " WHERE queue = 'batch'")).containsEntry("transactions", 1L)
			.containsEntry("instants", 1L);
		assertThat(fixture.client().enqueueAll(List.of())).isEmpty();
	}

	@Test
	void enqueueAllResolvesTheOptionsOfEachRequest() {
		Instant future = Instant.now().plus(Duration.ofMinutes(10)).truncatedTo(ChronoUnit.MILLIS);
		Instant past = Instant.now().minus(Duration.ofMinutes(10)).truncatedTo(ChronoUnit.MILLIS);
		List<UUID> ids = fixture.client()
			.enqueueAll(List.of(JobRequest.of("mail.welcome", 1), JobRequest.of("anything", 2).runAt(future),
					JobRequest.of("anything", 3).runAt(past).priority(9),
					JobRequest.of("anything", 4).queue("reports").delay(Duration.ofHours(1)),
					JobRequest.of("mail.welcome", 5).maxAttempts(1)));

		assertThat(fixture.row(ids.get(0))).containsEntry("queue", "mail")
			.containsEntry("max_attempts", 3)
			.containsEntry("state", "available");
		assertThat(fixture.row(ids.get(1))).containsEntry("queue", "default")
			.containsEntry("max_attempts", QueueSettings.DEFAULT_MAX_ATTEMPTS)
			.containsEntry("state", "scheduled");
		assertThat(runAt(ids.get(1))).isEqualTo(future);
		assertThat(fixture.row(ids.get(2))).containsEntry("state", "available").containsEntry("priority", 9);
		assertThat(runAt(ids.get(2))).isEqualTo(past);
		assertThat(fixture.row(ids.get(3))).containsEntry("queue", "reports")
			.containsEntry("max_attempts", 7)
			.containsEntry("state", "scheduled");
		assertThat(delaySeconds(ids.get(3))).isEqualTo(3600.0);
		assertThat(fixture.row(ids.get(4))).containsEntry("max_attempts", 1);
	}

	@Test
	void aCallOfJobsThatAllUseOneOptionalColumnKeepsItAndPlainJobsTakeTheDefaults() {
		// A call whose jobs all leave the optional columns to their defaults goes in through a narrower
		// insert; one job with any option takes every job of the call through the full one.
		Instant past = Instant.now().minus(Duration.ofMinutes(5)).truncatedTo(ChronoUnit.MILLIS);
		Map<String, java.util.function.IntFunction<JobRequest>> optional = new java.util.LinkedHashMap<>();
		optional.put("run_at", (i) -> JobRequest.of("opt.job", i).queue("opt").runAt(past));
		optional.put("delay", (i) -> JobRequest.of("opt.job", i).queue("opt").delay(Duration.ofMinutes(3)));
		optional.put("jitter", (i) -> JobRequest.of("opt.job", i).queue("opt").jitter(Duration.ofMinutes(3)));
		optional.put("concurrency_key", (i) -> JobRequest.of("opt.job", i).queue("opt").concurrencyKey("k"));
		optional.put("tags", (i) -> JobRequest.of("opt.job", i).queue("opt").tags("t"));
		optional.put("rate_weight", (i) -> JobRequest.of("opt.job", i).queue("opt").rateWeight(3));
		for (Map.Entry<String, java.util.function.IntFunction<JobRequest>> option : optional.entrySet()) {
			// Two jobs: one alone goes in through the single-row insert.
			UUID id = fixture.client()
				.enqueueAll(List.of(option.getValue().apply(1), option.getValue().apply(2)))
				.get(1);
			Map<String, Object> row = fixture.jdbc().queryForMap("SELECT run_at = created_at AS at_creation, "
					+ "run_at > created_at + interval '1 minute' AS later, state, concurrency_key, tags::text AS tags, "
					+ "rate_weight FROM " + fixture.allJobs() + " WHERE public_id = ?", id);
			switch (option.getKey()) {
				case "run_at" -> assertThat(runAt(id)).as(option.getKey()).isEqualTo(past);
				case "delay" -> assertThat(row).as(option.getKey()).containsEntry("later", true);
				case "jitter" -> assertThat(row).as(option.getKey()).containsEntry("at_creation", false);
				case "concurrency_key" -> assertThat(row).as(option.getKey()).containsEntry("concurrency_key", "k");
				case "tags" -> assertThat(row).as(option.getKey()).containsEntry("tags", "{t}");
				default -> assertThat(row).as(option.getKey()).containsEntry("rate_weight", 3);
			}
		}

		List<UUID> plain = fixture.client()
			.enqueueAll(IntStream.range(0, 3)
				.mapToObj((i) -> JobRequest.of("spread.job", i).queue("mail").priority(i).maxAttempts(i + 1))
				.toList());
		List<Map<String, Object>> rows = fixture.jdbc().queryForList("SELECT run_at = created_at AS at_creation, state, "
				+ "priority, max_attempts, bucket, attempt, concurrency_key, tags, rate_weight, trace_context, lease_owner "
				+ "FROM " + fixture.allJobs() + " WHERE public_id = ANY(?) ORDER BY priority",
				(Object) plain.toArray(new UUID[0]));
		assertThat(rows).hasSize(3);
		for (int i = 0; i < 3; i++) {
			assertThat(rows.get(i)).containsEntry("at_creation", true)
				.containsEntry("state", "available")
				.containsEntry("priority", i)
				.containsEntry("max_attempts", i + 1)
				.containsEntry("attempt", 0)
				.containsEntry("concurrency_key", null)
				.containsEntry("tags", null)
				.containsEntry("rate_weight", null)
				.containsEntry("trace_context", null)
				.containsEntry("lease_owner", null);
		}
	}

	@Test
	void delayOrRunAtInTheFutureSchedulesTheJobAndRunAtInThePastMakesItAvailable() {
		JobClient client = fixture.client();
		Instant future = Instant.now().plus(Duration.ofMinutes(30)).truncatedTo(ChronoUnit.MILLIS);
		Instant past = Instant.now().minus(Duration.ofMinutes(30)).truncatedTo(ChronoUnit.MILLIS);

		UUID delayed = client.enqueue(JobRequest.of("timed", null).delay(Duration.ofMinutes(15)));
		UUID later = client.enqueue(JobRequest.of("timed", null).runAt(future));
		UUID overdue = client.enqueue(JobRequest.of("timed", null).runAt(past));
		UUID noDelay = client.enqueue(JobRequest.of("timed", null).delay(Duration.ZERO));
		UUID now = client.enqueue(JobRequest.of("timed", null));

		assertThat(fixture.row(delayed)).containsEntry("state", "scheduled");
		assertThat(delaySeconds(delayed)).as("delay measured on the database clock").isEqualTo(900.0);
		assertThat(fixture.row(later)).containsEntry("state", "scheduled");
		assertThat(runAt(later)).isEqualTo(future);
		assertThat(fixture.row(overdue)).containsEntry("state", "available");
		assertThat(runAt(overdue)).isEqualTo(past);
		assertThat(fixture.row(noDelay)).containsEntry("state", "available");
		assertThat(fixture.row(now)).containsEntry("state", "available");
		assertThat(delaySeconds(now)).isEqualTo(0.0);
	}

	@Test
	void aJitterSpreadsRunAtOverTheIntervalOnTheDatabaseClockForOneJobAndForMany() {
		Instant before = fixture.jdbc().queryForObject("SELECT now()", Timestamp.class).toInstant();
		UUID one = fixture.client()
			.enqueue(JobRequest.of("burst.one", "x").queue("burst").jitter(Duration.ofSeconds(30)));
		List<UUID> many = fixture.client()
			.enqueueAll(IntStream.range(0, 200)
				.mapToObj((i) -> JobRequest.of("burst.many", i).queue("burst").delay(Duration.ofMinutes(10))
					.jitter(Duration.ofSeconds(30)))
				.toList());
		Instant after = fixture.jdbc().queryForObject("SELECT now()", Timestamp.class).toInstant();

		Map<String, Object> single = fixture.row(one);
		assertThat(((Timestamp) single.get("run_at")).toInstant()).isBetween(before, after.plusSeconds(30));
		List<Map<String, Object>> spread = fixture.jdbc().queryForList("SELECT min(run_at) AS first, max(run_at) AS last, "
				+ "count(DISTINCT run_at) AS distinct_instants, bool_and(state = 'scheduled') AS all_scheduled FROM "
				+ fixture.table() + " WHERE public_id = ANY(?)", (Object) many.toArray(new UUID[0]));
		Instant first = ((Timestamp) spread.get(0).get("first")).toInstant();
		Instant last = ((Timestamp) spread.get(0).get("last")).toInstant();
		assertThat(first).isAfterOrEqualTo(before.plus(Duration.ofMinutes(10)));
		assertThat(last).isBefore(after.plus(Duration.ofMinutes(10)).plusSeconds(30));
		// 200 draws over 30 s: the spread covers most of the interval, and no two share an instant.
		assertThat(Duration.between(first, last)).isGreaterThan(Duration.ofSeconds(20));
		assertThat(spread.get(0)).containsEntry("distinct_instants", 200L).containsEntry("all_scheduled", true);
	}

	@Test
	void aQueuesRunAtJitterAppliesToRequestsWithoutOneAndAZeroJitterTurnsItOff() {
		Instant before = fixture.jdbc().queryForObject("SELECT now()", Timestamp.class).toInstant();
		List<UUID> jittered = fixture.client()
			.enqueueAll(IntStream.range(0, 50).mapToObj((i) -> JobRequest.of("spread.job", i).queue("spread")).toList());
		UUID exact = fixture.client().enqueue(JobRequest.of("spread.job", "now").queue("spread").jitter(Duration.ZERO));

		Instant latest = fixture.jdbc().queryForObject("SELECT max(run_at) FROM " + fixture.allJobs()
				+ " WHERE public_id = ANY(?)", Timestamp.class, (Object) jittered.toArray(new UUID[0])).toInstant();
		assertThat(Duration.between(before, latest)).isGreaterThan(Duration.ofSeconds(5))
			.isLessThan(Duration.ofSeconds(21));
		assertThat(fixture.row(exact)).containsEntry("state", "available");
	}

	@Test
	void theConcurrencyKeyIsStoredByEnqueueAndEnqueueAll() {
		UUID one = fixture.client().enqueue(JobRequest.of("spread.job", 1).queue("spread").concurrencyKey("tenant-7"));
		List<UUID> many = fixture.client()
			.enqueueAll(List.of(JobRequest.of("spread.job", 2).queue("spread").concurrencyKey("tenant-8"),
					JobRequest.of("spread.job", 3).queue("spread")));

		assertThat(fixture.row(one)).containsEntry("concurrency_key", "tenant-7");
		assertThat(fixture.row(many.get(0))).containsEntry("concurrency_key", "tenant-8");
		assertThat(fixture.row(many.get(1))).containsEntry("concurrency_key", null);
		assertThatIllegalArgumentException().isThrownBy(() -> JobRequest.of("spread.job", 4).concurrencyKey(" "))
			.withMessageContaining("concurrency key");
	}

	@Test
	void everyJobGetsABucketOfItsQueueAndJobsWithTheSameKeyShareOne() {
		List<UUID> random = fixture.client()
			.enqueueAll(IntStream.range(0, 400).mapToObj((i) -> JobRequest.of("spread.job", i).queue("spread")).toList());
		List<UUID> keyed = fixture.client()
			.enqueueAll(IntStream.range(0, 20)
				.mapToObj((i) -> JobRequest.of("spread.job", i).queue("spread").bucketKey("customer-42"))
				.toList());

		Map<String, Object> buckets = fixture.jdbc().queryForMap("SELECT min(bucket)::int AS low, max(bucket)::int AS high, "
				+ "count(DISTINCT bucket) AS used FROM " + fixture.allJobs() + " WHERE public_id = ANY(?)",
				(Object) random.toArray(new UUID[0]));
		assertThat(buckets).containsEntry("low", 0).containsEntry("high", 15).containsEntry("used", 16L);
		assertThat(fixture.jdbc().queryForList("SELECT DISTINCT bucket FROM " + fixture.allJobs()
				+ " WHERE public_id = ANY(?)", Short.class, (Object) keyed.toArray(new UUID[0])))
			.containsExactly((short) dev.pgqueue.engine.buckets.Buckets.of("customer-42", 16));
	}

	@Test
	void queueDefaultsToTheListenersQueueForARegisteredKindAndToDefaultOtherwise() {
		JobClient client = fixture.client();
		assertThat(fixture.row(client.enqueue("mail.welcome", null))).containsEntry("queue", "mail");
		assertThat(fixture.row(client.enqueue("nobody.listens", null))).containsEntry("queue", JobRequest.DEFAULT_QUEUE);
		assertThat(fixture.row(client.enqueue(JobRequest.of("mail.welcome", null).queue("elsewhere"))))
			.containsEntry("queue", "elsewhere");
	}

	@Test
	void maxAttemptsDefaultsToTheSettingOfTheJobsQueue() {
		JobClient client = fixture.client();
		assertThat(fixture.row(client.enqueue("mail.welcome", null))).containsEntry("max_attempts", 3);
		assertThat(fixture.row(client.enqueue(JobRequest.of("report.build", null).queue("reports"))))
			.containsEntry("max_attempts", 7);
		assertThat(fixture.row(client.enqueue("nobody.listens", null)))
			.containsEntry("max_attempts", QueueSettings.DEFAULT_MAX_ATTEMPTS);
		assertThat(fixture.row(client.enqueue(JobRequest.of("mail.welcome", null).maxAttempts(12))))
			.containsEntry("max_attempts", 12);
	}

	@ParameterizedTest
	@EnumSource(QueueMode.class)
	void higherPriorityRunsFirst(QueueMode mode) {
		String queue = "priority-" + mode.name().toLowerCase(Locale.ROOT);
		fixture.configure(QueueSettings.defaults(queue).withMode(mode).withConcurrency(1).withBatchSize(1)
			.withPollInterval(Duration.ofMillis(50)));
		List<Integer> order = Collections.synchronizedList(new ArrayList<>());
		fixture.handle(queue + ".job", queue,
				(job) -> order.add(fixture.jsonMapper().readValue(job.payload(), Integer.class)));
		int[] priorities = { 0, 5, -3, 10, 5, Short.MAX_VALUE, Short.MIN_VALUE };
		JobClient client = fixture.client();
		for (int priority : priorities) {
			client.enqueue(JobRequest.of(queue + ".job", priority).priority(priority));
		}
		JobPoller poller = fixture.poller(queue);
		poller.start();
		try {
			await().atMost(WAIT).until(() -> order.size() == priorities.length);
			assertThat(order).containsExactly(32767, 10, 5, 5, 0, -3, -32768);
		}
		finally {
			poller.stop();
		}
	}

	@Test
	void rejectsInvalidRequestsNamingTheKind() {
		assertThatIllegalArgumentException().isThrownBy(() -> JobRequest.of(" ", null)).withMessageContaining("kind");
		assertThatIllegalArgumentException().isThrownBy(() -> JobRequest.of(null, null)).withMessageContaining("kind");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("invoice.send", null).delay(Duration.ofSeconds(-1)))
			.withMessageContaining("'invoice.send'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("invoice.send", null).priority(Short.MAX_VALUE + 1))
			.withMessageContaining("'invoice.send'")
			.withMessageContaining("32767");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("invoice.send", null).priority(Short.MIN_VALUE - 1))
			.withMessageContaining("'invoice.send'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("invoice.send", null).maxAttempts(0))
			.withMessageContaining("'invoice.send'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JobRequest.of("invoice.send", null).jitter(Duration.ofSeconds(-1)))
			.withMessageContaining("'invoice.send'");
	}

	@Test
	void rejectsAPayloadJacksonCannotSerializeNamingTheKindAndInsertsNothing() {
		JobClient client = fixture.client();
		assertThatIllegalArgumentException().isThrownBy(() -> client.enqueue("bad.self", new SelfReference()))
			.withMessageContaining("'bad.self'");
		assertThatIllegalArgumentException().isThrownBy(() -> client.enqueue("bad.getter", new ThrowingGetter()))
			.withMessageContaining("'bad.getter'");
		assertThatIllegalArgumentException().isThrownBy(() -> client.enqueue("bad.cycle", Cycle.make()))
			.withMessageContaining("'bad.cycle'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> client.enqueueAll(
					List.of(JobRequest.of("bad.batch", 1), JobRequest.of("bad.batch", new ThrowingGetter()))))
			.withMessageContaining("'bad.batch'");
		assertThat(countWhere(fixture.table() + " WHERE kind LIKE 'bad.%'")).isZero();
	}

	private static int polls(String queue) {
		return pollCycles.computeIfAbsent(queue, (q) -> new AtomicInteger()).get();
	}

	private static long countWhere(String from, Object... args) {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM " + from, Long.class, args);
	}

	private static Instant runAt(UUID id) {
		return fixture.jdbc()
			.queryForObject("SELECT run_at FROM " + fixture.allJobs() + " WHERE public_id = ?", Timestamp.class, id)
			.toInstant();
	}

	private static double delaySeconds(UUID id) {
		return fixture.jdbc()
			.queryForObject("SELECT extract(epoch FROM run_at - created_at)::float8 FROM " + fixture.allJobs()
					+ " WHERE public_id = ?", Double.class, id);
	}

	record Invoice(String customer, int total, List<String> lines) {
	}

	static final class SelfReference {

		public SelfReference getSelf() {
			return this;
		}

	}

	static final class ThrowingGetter {

		public String getValue() {
			throw new IllegalStateException("value not loaded");
		}

	}

	static final class Cycle {

		public Cycle next;

		static Cycle make() {
			Cycle a = new Cycle();
			Cycle b = new Cycle();
			a.next = b;
			b.next = a;
			return a;
		}

	}

}
