package dev.pgqueue;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.dao.DataAccessException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Thousands of random and malicious values for every field of a {@link JobRequest}, every filter of
 * a {@link JobQuery}, every argument of {@link JobAdmin} and {@link JobSchedules}, on a real
 * PostgreSQL with a poller running: each call either succeeds or throws a clear
 * {@link IllegalArgumentException} (or the {@link NullPointerException} of an argument that must not
 * be null), never an SQL error; a refused call changes nothing; an accepted job is stored as given
 * and run; the jobs that were there before are left as they were; the poller keeps running.
 *
 * <p>The values come from a seeded {@link Random}: the seed is printed (fixed in CI, new on each
 * other run), and {@code -Dpgqueue.fuzz.seed=<seed>} replays a run ({@code -Dpgqueue.fuzz.cases=<n>} changes its
 * size). Every broken property is collected, one example per kind of failure, and reported with
 * the seed at the end.
 */
class HostileInputTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private static final String QUEUE = "hostile";

	private static final String SENTINEL_QUEUE = "sentinel";

	private static final String ECHO = "hostile.echo";

	private static final char NUL = (char) 0;

	private static final Instant GREGORIAN = Instant.parse("1583-01-01T00:00:00Z");

	/**
	 * The seed: the one given, else a fixed one in CI (where a build must pass or fail on its change,
	 * not on the draw), else a new one each run, which explores new values on a developer's machine.
	 */
	private static final long SEED = Long.getLong("pgqueue.fuzz.seed",
			(System.getenv("CI") != null) ? 45_045_045L : System.nanoTime());

	private static final int CASES = Integer.getInteger("pgqueue.fuzz.cases", 2500);

	private static final Random random = new Random(SEED);

	private static QueueFixture fixture;

	private static JobClient client;

	private static JobAdmin admin;

	private static JobSchedules schedules;

	private static JobPoller poller;

	private static final JsonMapper json = JsonMapper.builder().build();

	/** Reads JSON back with exact numbers, to compare what was sent with what jsonb kept. */
	private static final JsonMapper exact = JsonMapper.builder()
		.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
		.enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS)
		.build();

	/** Kinds the poller of {@value #QUEUE} handles: {@value #ECHO} and hostile names. */
	private static final Set<String> handledKinds = new LinkedHashSet<>();

	/** Payload each job ran with, by id. */
	private static final Map<UUID, String> ran = new ConcurrentHashMap<>();

	/** Jobs accepted that the poller must run, with their payload as enqueued. */
	private static final Map<UUID, String> toRun = new LinkedHashMap<>();

	private static final Set<UUID> accepted = new HashSet<>();

	/** One example of each kind of failure, by a signature of the failure. */
	private static final Map<String, String> failures = new LinkedHashMap<>();

	private static final Map<String, Integer> tally = new LinkedHashMap<>();

	private static List<Map<String, Object>> sentinels;

	/** The arguments of the last query made, for a query that cannot be made. */
	private static String lastQuery;

	@BeforeAll
	static void setUp() {
		fixture = QueueFixture.create("hostile_input");
		fixture.configure(QueueSettings.defaults(QUEUE).withPollInterval(Duration.ofMillis(50)));
		handledKinds.add(ECHO);
		Random names = new Random(SEED ^ 0x5DEECE66DL);
		while (handledKinds.size() < 40) {
			String kind = hostileString(names);
			if (isValidName(kind) && !kind.equals(SENTINEL_QUEUE)) {
				handledKinds.add(kind);
			}
		}
		for (String kind : handledKinds) {
			fixture.handle(kind, QUEUE, (job) -> ran.put(job.id(), job.payload()));
		}
		QueueEngine engine = fixture.engine();
		client = engine.client();
		schedules = engine.schedules();
		admin = engine.admin();
		// Jobs that were there before: one in each state, in a queue no poller takes.
		UUID available = client.enqueue(JobRequest.of("sentinel.available", Map.of("k", "v")).queue(SENTINEL_QUEUE)
			.tags("customer-1").concurrencyKey("tenant-1").uniqueKey("once"));
		client.enqueue(JobRequest.of("sentinel.scheduled", List.of(1, 2)).queue(SENTINEL_QUEUE)
			.delay(Duration.ofDays(30)));
		UUID failed = client.enqueue(JobRequest.of("sentinel.failed", "x").queue(SENTINEL_QUEUE));
		UUID completed = client.enqueue(JobRequest.of("sentinel.completed", null).queue(SENTINEL_QUEUE));
		UUID cancelled = client.enqueue(JobRequest.of("sentinel.cancelled", 1).queue(SENTINEL_QUEUE));
		fixture.jdbc().update("UPDATE " + fixture.table() + " SET state = 'failed', attempt = 1, finished_at = now(), "
				+ "last_error = 'boom: % _ '' -- ;' WHERE public_id = ?", failed);
		fixture.jdbc().update("UPDATE " + fixture.table() + " SET state = 'completed', attempt = 1, "
				+ "started_at = now(), finished_at = now() WHERE public_id = ?", completed);
		assertThat(admin.cancel(cancelled).outcome()).isEqualTo(AdminResult.Outcome.APPLIED);
		assertThat(available).isNotNull();
		sentinels = sentinelRows();
		poller = fixture.poller(QUEUE);
		poller.start();
		System.out.println("HostileInputTests: seed " + SEED + " (-Dpgqueue.fuzz.seed=" + SEED + "), " + CASES
				+ " cases per property");
	}

	@AfterAll
	static void tearDown() {
		if (fixture != null) {
			fixture.close();
		}
	}

	@Test
	void hostileValuesAreStoredAsGivenOrRefusedClearlyAndNothingElseChanges() {
		for (int i = 0; i < CASES; i++) {
			enqueueCase(i);
		}
		for (int i = 0; i < CASES / 2; i++) {
			enqueueAllCase(i);
		}
		for (int i = 0; i < CASES; i++) {
			adminCase(i);
		}
		for (int i = 0; i < CASES / 2; i++) {
			scheduleCase(i);
		}
		System.out.println("HostileInputTests: seed " + SEED + ", " + tally);
		try {
			await().atMost(WAIT).until(() -> ran.keySet().containsAll(toRun.keySet()));
		}
		catch (RuntimeException ex) {
			List<UUID> missing = toRun.keySet().stream().filter((id) -> !ran.containsKey(id)).limit(5).toList();
			failure("poller", "accepted jobs not run", missing.size() + " of " + toRun.size() + ", such as " + missing
					+ ": " + missing.stream().map((id) -> describeRow(id)).toList());
		}
		toRun.forEach((id, payload) -> {
			if (ran.containsKey(id) && !sameJson(payload, ran.get(id))) {
				failure("poller", "ran with another payload", id + ": enqueued " + abbreviate(payload) + ", ran with "
						+ abbreviate(ran.get(id)));
			}
		});
		if (!sentinelRows().equals(sentinels)) {
			failure("sentinels", "jobs that were there before changed", sentinels + " became " + sentinelRows());
		}
		UUID last = client.enqueue(ECHO, Map.of("still", "running"));
		try {
			await().atMost(WAIT).until(() -> ran.containsKey(last));
		}
		catch (RuntimeException ex) {
			failure("poller", "stopped running jobs", "running " + poller.isRunning() + "; the last job: "
					+ describeRow(last));
		}
		System.out.println("HostileInputTests: " + toRun.size() + " accepted jobs ran; " + failures.size()
				+ " kinds of failure");
		failures.forEach((what, example) -> System.out.println("HostileInputTests failure: " + what + "\n    e.g. "
				+ example));
		assertThat(failures).as("failures with seed %d (replay with -Dpgqueue.fuzz.seed=%d)", SEED, SEED).isEmpty();
	}

	// Enqueues

	private static void enqueueCase(int i) {
		Expected expected = new Expected();
		JobRequest request;
		try {
			request = randomRequest(expected);
		}
		catch (RuntimeException | StackOverflowError ex) {
			expectClear("JobRequest", expected.toString(), ex);
			return;
		}
		String before = fingerprint();
		long rows = countRows();
		UUID id;
		try {
			id = client.enqueue(request);
		}
		catch (RuntimeException | StackOverflowError ex) {
			expectClear("enqueue", expected.toString(), ex);
			expectUnchanged("enqueue", expected.toString(), before, rows);
			return;
		}
		count("enqueue accepted");
		checkStored("enqueue", id, expected);
	}

	private static void enqueueAllCase(int i) {
		List<JobRequest> requests = new ArrayList<>();
		List<Expected> expectations = new ArrayList<>();
		int size = 1 + random.nextInt(6);
		for (int j = 0; j < size; j++) {
			Expected expected = new Expected();
			try {
				requests.add(randomRequest(expected));
				expectations.add(expected);
			}
			catch (RuntimeException | StackOverflowError ex) {
				expectClear("JobRequest", expected.toString(), ex);
			}
		}
		String before = fingerprint();
		long rows = countRows();
		List<UUID> ids;
		try {
			ids = client.enqueueAll(requests);
		}
		catch (RuntimeException | StackOverflowError ex) {
			expectClear("enqueueAll", expectations.toString(), ex);
			// All or nothing: one bad request refuses the whole list.
			expectUnchanged("enqueueAll", expectations.toString(), before, rows);
			return;
		}
		count("enqueueAll accepted");
		if (ids.size() != requests.size()) {
			failure("enqueueAll", "ids for another number of requests", ids.size() + " ids for " + requests.size());
			return;
		}
		for (int j = 0; j < ids.size(); j++) {
			checkStored("enqueueAll", ids.get(j), expectations.get(j));
		}
	}

	/** A request of random fields, each hostile or ordinary; what it should store goes to {@code expected}. */
	private static JobRequest randomRequest(Expected expected) {
		boolean handled = random.nextInt(10) < 7;
		expected.kind = handled ? pick(new ArrayList<>(handledKinds)) : maybeNull(HostileInputTests::hostileString);
		expected.payload = randomPayload();
		JobRequest request = JobRequest.of(expected.kind, expected.payload);
		// A random kind may happen to be one the listeners here handle: its job goes to their queue.
		expected.queue = handledKinds.contains(expected.kind) ? QUEUE : JobRequest.DEFAULT_QUEUE;
		if (random.nextInt(3) == 0) {
			expected.queue = handled && random.nextBoolean() ? QUEUE : otherName();
			request.queue(expected.queue);
		}
		expected.runs = expected.queue.equals(QUEUE) && handledKinds.contains(expected.kind);
		if (random.nextInt(4) == 0) {
			expected.priority = randomInt();
			request.priority(expected.priority);
		}
		switch (random.nextInt(8)) {
			case 0 -> {
				expected.runAt = randomInstant();
				request.runAt(expected.runAt);
				expected.runs &= expected.runAt != null && expected.runAt.isBefore(Instant.now());
			}
			case 1 -> {
				expected.delay = randomDuration();
				request.delay(expected.delay);
				expected.runs &= expected.delay != null && expected.delay.isZero();
			}
			default -> {
			}
		}
		if (random.nextInt(5) == 0) {
			expected.jitter = randomDuration();
			request.jitter(expected.jitter);
			// A jittered job is inserted scheduled, for the promoter (not running here) to make due.
			expected.runs &= expected.jitter != null && expected.jitter.isZero();
		}
		if (random.nextInt(5) == 0) {
			expected.maxAttempts = randomInt();
			request.maxAttempts(expected.maxAttempts);
		}
		if (random.nextInt(5) == 0) {
			request.bucketKey(maybeNull(HostileInputTests::hostileString));
		}
		if (random.nextInt(5) == 0) {
			expected.concurrencyKey = maybeNull(HostileInputTests::hostileString);
			request.concurrencyKey(expected.concurrencyKey);
		}
		if (random.nextInt(5) == 0) {
			request.shardKey(maybeNull(HostileInputTests::hostileString));
		}
		if (random.nextInt(30) == 0) {
			// No shards are configured: any shard is refused.
			expected.refused = true;
			request.shard(maybeNull(HostileInputTests::hostileString));
		}
		if (random.nextInt(4) == 0) {
			List<String> tags = new ArrayList<>();
			int count = random.nextInt(25);
			for (int t = 0; t < count; t++) {
				tags.add(maybeNull(HostileInputTests::hostileString));
			}
			request.tags(tags);
			expected.tags = new ArrayList<>(new LinkedHashSet<>(tags));
		}
		if (random.nextInt(5) == 0) {
			expected.uniqueKey = maybeNull(HostileInputTests::hostileString);
			if (random.nextBoolean()) {
				request.uniqueKey(expected.uniqueKey);
			}
			else {
				expected.uniquePeriod = randomDuration();
				request.uniqueKey(expected.uniqueKey, expected.uniquePeriod);
				// A key held for a period is kept in a table of its own, not on the job.
				expected.uniqueKey = null;
			}
			if (random.nextBoolean()) {
				request.onConflict(random.nextInt(10) == 0 ? null : pick(Arrays.asList(OnConflict.values())));
			}
		}
		if (random.nextInt(6) == 0) {
			expected.rateWeight = randomInt();
			request.rateWeight(expected.rateWeight);
		}
		return request;
	}

	private static void checkStored(String operation, UUID id, Expected expected) {
		if (!accepted.add(id)) {
			// A unique key already held: the id of the job that holds it, which the request may have
			// replaced or moved.
			count(operation + " deduplicated");
			toRun.remove(id);
			return;
		}
		if (expected.refused) {
			failure(operation, "accepted what must be refused", expected.toString());
		}
		Map<String, Object> row;
		try {
			row = fixture.jdbc().queryForMap("SELECT kind, queue, payload::text AS payload, priority, "
					+ "extract(epoch FROM run_at) AS run_at_epoch, "
					+ "max_attempts, concurrency_key, tags, rate_weight, unique_key FROM " + fixture.allJobs()
					+ " WHERE public_id = ?", id);
		}
		catch (DataAccessException ex) {
			failure(operation, "accepted job not stored", id + " " + expected + ": " + ex);
			return;
		}
		List<String> differences = new ArrayList<>();
		compare(differences, "kind", expected.kind, row.get("kind"));
		compare(differences, "queue", expected.queue, row.get("queue"));
		String sent = json.writeValueAsString(expected.payload);
		if (!sameJson(sent, (String) row.get("payload"))) {
			differences.add("payload " + show(sent) + " stored as " + show(row.get("payload")));
		}
		compare(differences, "priority", expected.priority, ((Number) row.get("priority")).intValue());
		if (expected.maxAttempts != null) {
			compare(differences, "max_attempts", expected.maxAttempts, row.get("max_attempts"));
		}
		compare(differences, "concurrency_key", expected.concurrencyKey, row.get("concurrency_key"));
		compare(differences, "unique_key", expected.uniqueKey, row.get("unique_key"));
		compare(differences, "rate_weight", expected.rateWeight, row.get("rate_weight"));
		compare(differences, "tags", expected.tags.isEmpty() ? null : expected.tags, tags(row.get("tags")));
		if (expected.runAt != null && (expected.jitter == null || expected.jitter.isZero())) {
			BigDecimal stored = (BigDecimal) row.get("run_at_epoch");
			BigDecimal given = BigDecimal.valueOf(expected.runAt.getEpochSecond())
				.add(BigDecimal.valueOf(expected.runAt.getNano(), 9));
			// Before the Gregorian calendar (1582), the java.sql.Timestamp the instant is bound as counts in
			// the Julian one, days apart (a job due centuries ago is due either way): a hundred days are let
			// go there, not a change of era.
			BigDecimal tolerance = expected.runAt.isAfter(GREGORIAN) ? new BigDecimal("0.000001")
					: BigDecimal.valueOf(Duration.ofDays(100).toSeconds());
			if (stored.subtract(given).abs().compareTo(tolerance) > 0) {
				differences.add("run_at " + expected.runAt + " stored as " + stored + " seconds since the epoch");
			}
		}
		if (!differences.isEmpty()) {
			for (String difference : differences) {
				failure(operation, "stored otherwise: " + difference.split(" ")[0], id + " " + difference);
			}
			return;
		}
		if (expected.runs) {
			toRun.put(id, sent);
		}
	}

	private static void compare(List<String> differences, String column, Object expected, Object stored) {
		if (!Objects.equals(expected, stored)) {
			differences.add(column + " " + show(expected) + " stored as " + show(stored));
		}
	}

	private static List<String> tags(Object column) {
		if (column == null) {
			return null;
		}
		try {
			return Arrays.asList((String[]) ((java.sql.Array) column).getArray());
		}
		catch (java.sql.SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	// Admin calls

	private static void adminCase(int i) {
		String before = fingerprint();
		long rows = countRows();
		int operation = random.nextInt(16);
		String description = "JobQuery";
		boolean writes = false;
		try {
			switch (operation) {
				case 0, 1 -> {
					JobQuery query = randomQuery(false);
					description = "list " + query;
					JobPage page = admin.list(query);
					checkMatches(description, query, page.jobs());
					if (page.next() != null) {
						admin.list(query.before(page.next()));
					}
				}
				case 2 -> {
					JobQuery query = randomQuery(false);
					description = "count " + query;
					long count = admin.count(query);
					if (count < 0) {
						failure("count", "negative count", description);
					}
				}
				case 3 -> {
					JobQuery query = randomQuery(true);
					description = "retryAll " + query;
					writes = true;
					admin.retryAll(query);
				}
				case 4 -> {
					JobQuery query = randomQuery(true);
					description = "cancelAll " + query;
					writes = true;
					admin.cancelAll(query);
				}
				case 5 -> {
					String queue = random.nextBoolean() ? otherName() : null;
					String kind = (queue == null || random.nextBoolean()) ? otherName() : null;
					description = "retryFailed " + show(queue) + " " + show(kind);
					writes = true;
					admin.retryFailed(queue, kind);
				}
				case 6 -> {
					String queue = otherName();
					description = "pause/resume " + show(queue);
					writes = true;
					boolean paused = admin.pause(queue);
					if (!admin.pausedQueues().contains(queue)) {
						failure("pause", "paused queue not listed as given", description + ", returned " + paused + ", "
								+ "listed " + admin.pausedQueues().stream().map(HostileInputTests::show).toList());
					}
					admin.resume(queue);
					if (admin.pausedQueues().contains(queue)) {
						failure("resume", "resumed queue still paused", description);
					}
				}
				case 7 -> {
					String queue = maybeNull(HostileInputTests::hostileString);
					description = (random.nextBoolean() ? "pause " : "resume ") + show(queue);
					writes = true;
					if (QUEUE.equals(queue)) {
						break;
					}
					if (description.startsWith("pause")) {
						admin.pause(queue);
						admin.resume(queue);
					}
					else {
						admin.resume(queue);
					}
				}
				case 8 -> {
					Duration window = randomDuration();
					Duration step = randomDuration();
					description = "history " + window + " " + step;
					admin.history(window, step);
				}
				case 9 -> {
					Duration window = randomDuration();
					description = "finishedWithin " + window;
					admin.finishedWithin(window);
				}
				case 10 -> {
					UUID id = random.nextBoolean() ? UUID.randomUUID()
							: new UUID(random.nextLong(), random.nextLong());
					description = "find " + id;
					expectEmpty(description, admin.find(id));
					expectEmpty(description, admin.findWithPayload(id));
					expectEmpty(description, admin.output(id));
					expectEmpty(description, admin.progress(id));
					if (!admin.attempts(id).isEmpty()) {
						failure("attempts", "attempts of an unknown job", description);
					}
				}
				case 11 -> {
					UUID id = random.nextBoolean() ? UUID.randomUUID() : new UUID(0, random.nextInt(3));
					description = "retry/cancel/delete " + id;
					writes = true;
					for (AdminResult result : List.of(admin.retry(id), admin.cancel(id), admin.delete(id))) {
						if (result.outcome() != AdminResult.Outcome.NOT_FOUND) {
							failure("retry/cancel/delete", "unknown job found", description + ": " + result);
						}
					}
				}
				case 12 -> {
					description = "kinds/counts/pausedQueues";
					admin.kinds();
					admin.counts();
					admin.pausedQueues();
				}
				case 13 -> {
					JobQuery query = randomQuery(false);
					RetryOptions options = new RetryOptions(randomDuration(), randomInt(), randomInt());
					description = "retryAll " + query + " " + options;
					writes = true;
					if (query.queue() == null && query.kind() == null || SENTINEL_QUEUE.equals(query.queue())
							|| QUEUE.equals(query.queue())) {
						break;
					}
					admin.retryAll(query, options);
				}
				default -> {
					JobQuery query = randomQuery(false);
					description = "list+count " + query;
					admin.list(query);
					admin.count(query);
				}
			}
			count("admin accepted");
		}
		catch (RuntimeException | StackOverflowError ex) {
			expectClear("admin", description.equals("JobQuery") ? lastQuery : description, ex);
			writes = false;
		}
		if (!writes) {
			expectUnchanged("admin", description, before, rows);
		}
	}

	/**
	 * A query of random filters. One for a bulk action names a queue or a kind that no job of this
	 * test's own queues has, so that it cannot legitimately touch them.
	 */
	private static JobQuery randomQuery(boolean bulk) {
		String queue = (bulk || random.nextInt(3) == 0) ? otherName() : null;
		String kind = (random.nextInt(3) == 0) ? maybeNull(HostileInputTests::hostileString) : null;
		JobState state = (random.nextInt(3) == 0) ? pick(Arrays.asList(JobState.values())) : null;
		String before = (random.nextInt(4) == 0) ? randomCursor() : null;
		int limit = (random.nextInt(3) == 0) ? randomInt() : JobQuery.DEFAULT_LIMIT;
		String tag = (random.nextInt(3) == 0) ? maybeNull(HostileInputTests::hostileString) : null;
		String error = (random.nextInt(3) == 0) ? maybeNull(HostileInputTests::hostileString) : null;
		Instant finishedSince = (random.nextInt(4) == 0) ? randomInstant() : null;
		if (bulk && queue == null) {
			queue = "bulk-" + random.nextInt(10);
		}
		lastQuery = "JobQuery(" + show(queue) + ", " + show(kind) + ", " + state + ", " + show(before) + ", " + limit
				+ ", " + show(tag) + ", " + show(error) + ", " + finishedSince + ")";
		return new JobQuery(queue, kind, state, before, limit, tag, error, finishedSince);
	}

	private static String randomCursor() {
		return switch (random.nextInt(8)) {
			case 0 -> String.valueOf(random.nextLong());
			case 1 -> "9223372036854775807";
			case 2 -> "9223372036854775808";
			case 3 -> "s." + random.nextInt(1000) + ".x." + random.nextLong();
			case 4 -> "s." + "9".repeat(19) + ".";
			case 5 -> "0";
			case 6 -> "s" + ".".repeat(random.nextInt(3000));
			default -> hostileString();
		};
	}

	private static void checkMatches(String description, JobQuery query, List<JobDetails> jobs) {
		for (JobDetails job : jobs) {
			if ((query.queue() != null && !query.queue().equals(job.queue()))
					|| (query.kind() != null && !query.kind().equals(job.kind()))
					|| (query.state() != null && query.state() != job.state())
					|| (query.tag() != null && !job.tags().contains(query.tag()))) {
				failure("list", "a job that does not match the filters", description + ": " + job);
			}
		}
		if (jobs.size() > query.limit()) {
			failure("list", "more jobs than the limit", description + ": " + jobs.size());
		}
	}

	private static void expectEmpty(String description, Optional<?> value) {
		if (value.isPresent()) {
			failure("find", "unknown job found", description);
		}
	}

	// Schedules

	private static void scheduleCase(int i) {
		String before = fingerprint();
		long rows = countRows();
		String name = (random.nextInt(3) == 0) ? "s" + random.nextInt(50) : maybeNull(HostileInputTests::hostileString);
		String description = "schedule " + show(name);
		boolean writes = false;
		try {
			switch (random.nextInt(6)) {
				case 0, 1 -> {
					String cron = randomCron();
					String kind = maybeNull(HostileInputTests::hostileString);
					String queue = (random.nextBoolean()) ? otherName() : null;
					Object payload = randomPayload();
					description = "save " + show(name) + " cron " + show(cron) + " kind " + show(kind) + " queue "
							+ show(queue);
					writes = true;
					Schedule schedule = Schedule.of(name, cron, kind).queue(queue).payload(payload);
					if (random.nextBoolean()) {
						String zone = randomZone();
						description += " zone " + show(zone);
						schedule.zone(zone);
					}
					schedule.missed(pick(Arrays.asList(MissedTicks.values())))
						.overlap(pick(Arrays.asList(Overlap.values())));
					ScheduleDetails saved = schedules.save(schedule);
					Optional<ScheduleDetails> read = schedules.get(saved.name());
					if (read.isEmpty() || !read.get().name().equals(name) || !read.get().kind().equals(kind)
							|| (queue != null && !read.get().queue().equals(queue))
							|| !read.get().cron().equals(cron.strip())
							|| !sameJson(json.writeValueAsString(payload), read.get().payload())) {
						failure("schedules", "saved otherwise", description + " read back as " + read);
					}
					if (random.nextBoolean()) {
						UUID id = schedules.runNow(name);
						accepted.add(id);
					}
				}
				case 2 -> {
					description = "get " + show(name);
					schedules.get(name);
					schedules.list();
				}
				case 3 -> {
					description = "pause/resume " + show(name);
					writes = true;
					schedules.pause(name);
					schedules.resume(name);
				}
				case 4 -> {
					description = "runNow " + show(name);
					writes = true;
					UUID id = schedules.runNow(name);
					accepted.add(id);
				}
				default -> {
					description = "delete " + show(name);
					writes = true;
					schedules.delete(name);
				}
			}
			count("schedules accepted");
		}
		catch (RuntimeException | StackOverflowError ex) {
			expectClear("schedules", description, ex);
			writes = false;
		}
		if (!writes) {
			expectUnchanged("schedules", description, before, rows);
		}
	}

	private static String randomCron() {
		return switch (random.nextInt(10)) {
			case 0 -> "0 0 2 * * *";
			case 1 -> "@hourly";
			case 2 -> "0 0 0 30 2 *";
			case 3 -> "*/1 * * * * *";
			case 4 -> "0 0 0 1 1 * 1999";
			case 5 -> "0 0 0 29 2 MON";
			case 6 -> random.nextInt(100) + " " + random.nextInt(100) + " * * * *";
			case 7 -> "0 0 2 * * *" + hostileString();
			default -> maybeNull(HostileInputTests::hostileString);
		};
	}

	private static String randomZone() {
		return switch (random.nextInt(6)) {
			case 0 -> "Europe/Paris";
			case 1 -> "UTC+14:00";
			case 2 -> "GMT-99";
			case 3 -> pick(new ArrayList<>(ZoneId.getAvailableZoneIds()));
			default -> hostileString();
		};
	}

	// Properties

	/** A refusal must be an IllegalArgumentException with a message, or the NPE of a null argument. */
	private static void expectClear(String operation, String description, Throwable ex) {
		count(operation + " refused");
		boolean clear = (ex instanceof IllegalArgumentException || ex instanceof NullPointerException)
				&& ex.getMessage() != null && !ex.getMessage().isBlank();
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof DataAccessException || cause instanceof java.sql.SQLException) {
				clear = false;
			}
		}
		if (!clear) {
			Throwable root = ex;
			while (root.getCause() != null) {
				root = root.getCause();
			}
			String call = (description.startsWith("request") || description.startsWith("[")) ? operation
					: description.split("[ (]")[0];
			failure(operation, call + " threw " + ex.getClass().getSimpleName()
					+ ((root != ex) ? " from " + root.getClass().getSimpleName() : "") + ": " + signature(root.getMessage()),
					description + " -> " + ex);
		}
	}

	private static void expectUnchanged(String operation, String description, String before, long rows) {
		String after = fingerprint();
		long rowsAfter = countRows();
		if (!after.equals(before) || rowsAfter != rows) {
			failure(operation, "a refused or read-only call changed the database",
					description + ": rows " + rows + " -> " + rowsAfter);
		}
	}

	/**
	 * The jobs outside the queue the poller works on, the paused queues and the schedules, as one
	 * digest; and every job's count separately ({@link #countRows()}). A job's row is summed up by its
	 * count and the newest transaction that wrote one of them ({@code xmin}), which any insert or
	 * update moves on: reading each row's text would take as long as the test, some payloads being
	 * a megabyte.
	 */
	private static String fingerprint() {
		String schema = fixture.schema().name();
		return fixture.jdbc().queryForObject("SELECT concat_ws(':', (SELECT count(*) || '/' || max(xmin::text::bigint) "
				+ "FROM (SELECT xmin FROM " + fixture.table() + " WHERE queue <> ? UNION ALL SELECT xmin FROM "
				+ fixture.finishedTable() + " WHERE queue <> ?) t), (SELECT md5(string_agg(p::text, '|' ORDER BY queue)) "
				+ "FROM " + schema + ".pgqueue_queue_pauses p), (SELECT md5(string_agg(s::text, '|' ORDER BY name)) FROM "
				+ schema + ".pgqueue_schedules s))", String.class, QUEUE, QUEUE);
	}

	private static long countRows() {
		return fixture.jdbc().queryForObject("SELECT count(*) FROM " + fixture.allJobs(), Long.class);
	}

	private static List<Map<String, Object>> sentinelRows() {
		return fixture.jdbc().queryForList("SELECT *, payload::text AS payload_text, tags::text AS tags_text FROM "
				+ fixture.allJobs() + " WHERE queue = ? ORDER BY id", SENTINEL_QUEUE)
			.stream()
			.map((row) -> {
				Map<String, Object> copy = new LinkedHashMap<>(row);
				copy.replaceAll((column, value) -> (value instanceof java.sql.Array || value instanceof org.postgresql.util.PGobject)
						? String.valueOf(value) : value);
				return copy;
			})
			.toList();
	}

	private static String describeRow(UUID id) {
		return fixture.jdbc().queryForList("SELECT state, kind, queue, run_at, attempt, last_error FROM " + fixture.allJobs()
				+ " WHERE public_id = ?", id).toString();
	}

	private static void failure(String operation, String what, String example) {
		failures.putIfAbsent(operation + ": " + what, (example.length() > 3000) ? example.substring(0, 3000) + "…" : example);
	}

	private static void count(String outcome) {
		tally.merge(outcome, 1, Integer::sum);
	}

	private static String signature(String message) {
		return (message != null) ? message.split("\n")[0].replaceAll("\"[^\"]*\"", "\"…\"").replaceAll("[0-9]+", "#")
				: "null";
	}

	// Values

	private static final List<String> PIECES = List.of("", " ", "  ", "\t", "\r\n", "'", "''", "\"", "--", ";", "%",
			"_", "\\", "\\\\", "%_", "' OR '1'='1", "'; DROP TABLE pgqueue_jobs; --", "$$", "$1", "?", "E'\\x00'",
			"/", "..", "../..", ".", "#", "a/b", "%2F", "%00", "%252F", "%", "{", "}", "{\"a\":1}", "[", "]", ",",
			"\u202Eevil", "\u05E9\u05DC\u05D5\u05DD", "\u0645\u0631\u062D\u0628\u0627", "\uD83D\uDE00",
			"\uD83D\uDC68\u200D\uD83D\uDC69\u200D\uD83D\uDC67", "e\u0301", "\u200B", "\uFEFF", "\u00A0", "\u2028",
			"\uD800", "\uDC00", "\uDBFF\uDBFF", "\uFFFF", "\uFFFE", "null", "NULL", "undefined", "NaN", "default",
			"mail", "a.b-c_d:e", "\u0130", "\u00DF", "\u212A", "<script>alert(1)</script>", "${jndi:ldap://x}",
			"%s%n", "\\u0000", "\\", String.valueOf(NUL), "a" + NUL + "b", String.valueOf((char) 0x7F),
			String.valueOf((char) 0x85), String.valueOf((char) 0x1B) + "[31m");

	private static String hostileString() {
		return hostileString(random);
	}

	private static String hostileString(Random random) {
		switch (random.nextInt(12)) {
			case 0:
				return PIECES.get(random.nextInt(PIECES.size()));
			case 1: {
				int length = switch (random.nextInt(6)) {
					case 0 -> 199;
					case 1 -> 200;
					case 2 -> 201;
					case 3 -> 100;
					case 4 -> 101;
					default -> random.nextInt(5000);
				};
				return "x".repeat(length);
			}
			case 2: {
				StringBuilder text = new StringBuilder();
				int length = 1 + random.nextInt(30);
				for (int i = 0; i < length; i++) {
					text.append((char) random.nextInt(0x10000));
				}
				return text.toString();
			}
			case 3: {
				StringBuilder text = new StringBuilder();
				int length = 1 + random.nextInt(10);
				for (int i = 0; i < length; i++) {
					text.append((char) random.nextInt(0x20));
				}
				return text.toString();
			}
			case 4:
				return "tenant-" + random.nextInt(1000);
			default: {
				StringBuilder text = new StringBuilder();
				int pieces = 1 + random.nextInt(5);
				for (int i = 0; i < pieces; i++) {
					text.append(PIECES.get(random.nextInt(PIECES.size())));
					if (random.nextBoolean()) {
						text.append((char) ('a' + random.nextInt(26)));
					}
				}
				return text.toString();
			}
		}
	}

	/** A name outside this test's own queues, or null. */
	private static String otherName() {
		String name = maybeNull(HostileInputTests::hostileString);
		return (QUEUE.equals(name) || SENTINEL_QUEUE.equals(name)) ? name + "-other" : name;
	}

	private static <T> T maybeNull(Supplier<T> value) {
		return (random.nextInt(40) == 0) ? null : value.get();
	}

	private static int randomInt() {
		return switch (random.nextInt(10)) {
			case 0 -> Integer.MIN_VALUE;
			case 1 -> Integer.MAX_VALUE;
			case 2 -> Short.MAX_VALUE + random.nextInt(3) - 1;
			case 3 -> Short.MIN_VALUE + random.nextInt(3) - 1;
			case 4 -> random.nextInt(3) - 1;
			case 5 -> random.nextInt();
			default -> random.nextInt(100);
		};
	}

	private static Instant randomInstant() {
		Instant now = Instant.now();
		return switch (random.nextInt(14)) {
			case 0 -> Instant.MIN;
			case 1 -> Instant.MAX;
			case 2 -> Instant.EPOCH;
			case 3 -> Instant.parse("+294276-12-31T23:59:59Z");
			case 4 -> Instant.parse("+300000-01-01T00:00:00Z");
			case 5 -> Instant.parse("-4713-11-24T00:00:00Z");
			case 6 -> Instant.parse("-5000-01-01T00:00:00Z");
			case 7 -> Instant.ofEpochSecond(random.nextLong() % 10_000_000_000_000L, random.nextInt(1_000_000_000));
			case 8 -> now.plus(random.nextInt(100_000), ChronoUnit.DAYS);
			case 9 -> null;
			default -> now.minus(Duration.ofMillis(random.nextInt(1_000_000)));
		};
	}

	private static Duration randomDuration() {
		return switch (random.nextInt(12)) {
			case 0 -> Duration.ZERO;
			case 1 -> Duration.ofNanos(-1);
			case 2 -> Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);
			case 3 -> Duration.ofSeconds(Long.MIN_VALUE);
			case 4 -> Duration.ofNanos(1 + random.nextInt(1_000_000));
			case 5 -> Duration.ofDays(365L * (1 + random.nextInt(300_000)));
			case 6 -> Duration.ofSeconds(random.nextLong());
			case 7 -> null;
			case 8 -> Duration.ofMinutes(random.nextInt(100_000));
			case 9 -> Duration.ofSeconds(1 + random.nextInt(100));
			default -> Duration.ofMillis(random.nextInt(50));
		};
	}

	private static Object randomPayload() {
		return switch (random.nextInt(40)) {
			case 0 -> null;
			case 1 -> hostileString();
			case 2 -> deep(random.nextInt(2) == 0 ? 50 + random.nextInt(200) : 990 + random.nextInt(30));
			case 3 -> Map.of("blob", "y".repeat(random.nextBoolean() ? 200_000 : 1_048_570));
			case 4 -> new byte[] { 0, 1, (byte) 0xFF };
			case 5 -> List.of(Double.NaN, Double.POSITIVE_INFINITY, -0.0, Double.MIN_VALUE, Double.MAX_VALUE);
			case 6 -> List.of(new BigInteger("9".repeat(300)), new BigDecimal("1e-400"), new BigDecimal("-1e900"),
					Long.MIN_VALUE, Long.MAX_VALUE);
			case 7 -> Map.of("", 1, " ", 2);
			default -> randomValue(0);
		};
	}

	private static Object randomValue(int depth) {
		int choice = random.nextInt(depth > 4 ? 6 : 9);
		return switch (choice) {
			case 0 -> null;
			case 1 -> random.nextBoolean();
			case 2 -> randomInt();
			case 3 -> random.nextDouble() * Math.pow(10, random.nextInt(600) - 300);
			case 4, 5 -> hostileString();
			case 6 -> {
				List<Object> list = new ArrayList<>();
				int size = random.nextInt(6);
				for (int i = 0; i < size; i++) {
					list.add(randomValue(depth + 1));
				}
				yield list;
			}
			default -> {
				Map<String, Object> map = new LinkedHashMap<>();
				int size = random.nextInt(6);
				for (int i = 0; i < size; i++) {
					String key = hostileString();
					map.put(key, randomValue(depth + 1));
				}
				yield map;
			}
		};
	}

	private static Object deep(int depth) {
		Object value = "bottom";
		for (int i = 0; i < depth; i++) {
			value = (i % 2 == 0) ? List.of(value) : Map.of("k", value);
		}
		return value;
	}

	private static boolean isValidName(String name) {
		try {
			JobRequest.of(name, null);
			return true;
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
	}

	private static <T> T pick(List<T> values) {
		return values.get(random.nextInt(values.size()));
	}

	/** Whether two JSON texts hold the same value, numbers compared by value (jsonb rewrites them). */
	static boolean sameJson(String expected, String actual) {
		if (actual == null) {
			return false;
		}
		try {
			JsonNode left = exact.readTree(expected);
			JsonNode right = exact.readTree(actual);
			Comparator<JsonNode> numbers = (a, b) -> {
				if (a.isNumber() && b.isNumber()) {
					return a.decimalValue().compareTo(b.decimalValue());
				}
				return a.equals(b) ? 0 : 1;
			};
			return left.equals(numbers, right);
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	private static String show(Object value) {
		if (value == null) {
			return "null";
		}
		StringBuilder text = new StringBuilder("\"");
		String string = abbreviate(String.valueOf(value));
		for (int i = 0; i < string.length(); i++) {
			char ch = string.charAt(i);
			if (ch < 0x20 || ch == 0x7F || Character.isSurrogate(ch) || (ch >= 0x80 && ch < 0xA0)) {
				text.append(String.format("<%04X>", (int) ch));
			}
			else {
				text.append(ch);
			}
		}
		return text.append('"').toString();
	}

	private static String abbreviate(String text) {
		return (text != null && text.length() > 300) ? text.substring(0, 300) + "…(" + text.length() + " chars)" : text;
	}

	/** What an accepted request should store. */
	private static final class Expected {

		String kind;

		Object payload;

		String queue;

		int priority;

		Instant runAt;

		Duration delay;

		Duration jitter;

		Integer maxAttempts;

		String concurrencyKey;

		String uniqueKey;

		Duration uniquePeriod;

		Integer rateWeight;

		List<String> tags = List.of();

		boolean runs;

		boolean refused;

		@Override
		public String toString() {
			return "request[kind " + show(this.kind) + ", queue " + show(this.queue) + ", priority " + this.priority
					+ ", runAt " + this.runAt + ", delay " + this.delay + ", jitter " + this.jitter + ", maxAttempts "
					+ this.maxAttempts + ", concurrencyKey " + show(this.concurrencyKey) + ", uniqueKey "
					+ show(this.uniqueKey) + ((this.uniquePeriod != null) ? " for " + this.uniquePeriod : "") + ", rateWeight " + this.rateWeight + ", tags "
					+ this.tags.stream().map(HostileInputTests::show).toList() + ", payload "
					+ abbreviate(String.valueOf(this.payload instanceof String ? show(this.payload)
							: safeJson(this.payload))) + "]";
		}

		private static String safeJson(Object payload) {
			try {
				return json.writeValueAsString(payload);
			}
			catch (RuntimeException ex) {
				return "(unwritable " + ex.getClass().getSimpleName() + ")";
			}
		}

	}

}
