package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.Schedule;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.schedules.ScheduleTicker;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;
import org.springframework.scheduling.support.CronExpression;

/**
 * What unique keys cost, and how long a tick pass of recurring jobs takes.
 *
 * <p>Enqueue: the {@code enqueue} workload's producers (the same thread counts, batch sizes and timed
 * windows) enqueueing without a key, with a fresh key every job ({@code uniqueKey(key)}, never
 * taken), and, one per transaction, with a key already held by a waiting job (the enqueue inserts
 * nothing and returns the holder's id, which is checked). The baseline of the keyed figures is the
 * enqueue without a key in the same rounds; beside it, the raw loop runs the engine's own unique
 * insert ({@code INSERT … ON CONFLICT DO NOTHING} over {@code unnest}) and, for the keys it turned
 * away, the engine's look-up of their holders, in autocommit and without notifying, as
 * {@code enqueue}'s raw loop runs the plain inserts.
 *
 * <p>Ticks: a table of schedules ({@link Profile.Ticks}) of which some are due, spread among the
 * others (each with one due tick, the start of the current hour; the others a year away), fired by
 * {@link ScheduleTicker#pass()} until every due one has fired; the time of those passes together and
 * of one. Baseline: the same statements, raw: the engine's lock of the due schedules
 * ({@code FOR UPDATE SKIP LOCKED}), one unique insert of all their jobs (each holding its tick's key
 * for the tick's period, as the engine's does) and one update moving them on, in one transaction for
 * all due schedules, and again in transactions of as many as a pgqueue pass took. An unmeasured round
 * comes first, and an untimed one at the end counts each side's calls that wait on the server.
 */
final class UniqueWorkload implements Workload {

	/** The baseline of the keyed figures. */
	static final String WITHOUT_KEY = "pgqueue without key";

	/** Keys held by waiting jobs before a held-key run; each enqueue takes the next, round robin. */
	static final int HELD_KEYS = 1_000;

	/** Every hour, on the hour: one due tick, whatever the time of the run. */
	static final String CRON = "0 0 * * * *";

	/** What the enqueued jobs carry. */
	private enum Keys {

		NONE("without key"), FRESH("fresh keys"), HELD("held keys");

		private final String label;

		Keys(String label) {
			this.label = label;
		}

	}

	@Override
	public String name() {
		return "unique";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		Profile profile = context.profile();
		List<Result> results = new ArrayList<>();
		try (BenchSchema schema = context.database().createSchema("unique")) {
			for (int threads : profile.enqueueThreads()) {
				results.addAll(enqueue(context, schema, threads, 1));
			}
			for (int batchSize : profile.enqueueBatchSizes()) {
				for (int threads : profile.enqueueThreads()) {
					results.addAll(enqueue(context, schema, threads, batchSize));
				}
			}
			results.addAll(ticks(context, schema));
		}
		return results;
	}

	private List<Result> enqueue(Context context, BenchSchema schema, int threads, int batchSize) throws Exception {
		boolean single = batchSize == 1;
		List<Keys> measured = single ? List.of(Keys.NONE, Keys.FRESH, Keys.HELD) : List.of(Keys.NONE, Keys.FRESH);
		Map<Keys, List<Double>> pgqueueRounds = new EnumMap<>(Keys.class);
		Map<Keys, List<Double>> rawRounds = new EnumMap<>(Keys.class);
		HikariDataSource pool = schema.pool("unique", threads + 1);
		try {
			for (int round = 0; round < context.profile().rounds(); round++) {
				for (Keys keys : measured) {
					prepare(schema, keys);
					pgqueueRounds.computeIfAbsent(keys, (k) -> new ArrayList<>())
						.add(pgqueue(schema, pool, threads, batchSize, keys, context.profile()));
					prepare(schema, keys);
					rawRounds.computeIfAbsent(keys, (k) -> new ArrayList<>())
						.add(raw(schema, pool, threads, batchSize, keys, context.profile()));
				}
			}
			schema.truncate();
		}
		finally {
			schema.release(pool);
		}
		String variant = single ? "one per transaction, " + threads + " thr"
				: batchSize + " per call, " + threads + " thr";
		Map<Keys, Double> pgqueue = new EnumMap<>(Keys.class);
		Map<Keys, Double> raw = new EnumMap<>(Keys.class);
		StringBuilder pgqueueLine = new StringBuilder();
		StringBuilder rawLine = new StringBuilder();
		for (Keys keys : measured) {
			pgqueue.put(keys, Profile.median(pgqueueRounds.get(keys)));
			raw.put(keys, Profile.median(rawRounds.get(keys)));
			pgqueueLine.append(String.format(Locale.ROOT, "  %s %,9.0f %s", keys.label, pgqueue.get(keys),
					Profile.rounds(pgqueueRounds.get(keys))));
			rawLine.append(String.format(Locale.ROOT, "  %s %,9.0f %s", keys.label, raw.get(keys),
					Profile.rounds(rawRounds.get(keys))));
		}
		double plain = pgqueue.get(Keys.NONE);
		double rawPlain = raw.get(Keys.NONE);
		context.progress("%-28s pgqueue jobs/s:%s; fresh ÷ without %.2f%s", variant, pgqueueLine,
				pgqueue.get(Keys.FRESH) / plain,
				single ? String.format(Locale.ROOT, ", held ÷ without %.2f", pgqueue.get(Keys.HELD) / plain) : "");
		context.progress("%-28s raw jobs/s:%s; fresh ÷ without %.2f%s", "", rawLine, raw.get(Keys.FRESH) / rawPlain,
				single ? String.format(Locale.ROOT, ", held ÷ without %.2f", raw.get(Keys.HELD) / rawPlain) : "");
		List<Result> results = new ArrayList<>();
		for (Keys keys : measured) {
			if (keys == Keys.NONE) {
				continue;
			}
			String keyed = keys.label + ", " + variant;
			results.add(new Result(name(), keyed, "throughput", "jobs/s", pgqueue.get(keys), plain, WITHOUT_KEY, true,
					(keys == Keys.FRESH) ? Target.ratioAtLeast(0.8) : null));
			results.add(Result.higher(name(), keyed, "throughput", "jobs/s", pgqueue.get(keys), raw.get(keys), null));
		}
		return results;
	}

	/** An empty table; for held keys, {@value #HELD_KEYS} waiting jobs holding them. */
	private static void prepare(BenchSchema schema, Keys keys) {
		schema.truncate();
		if (keys != Keys.HELD) {
			return;
		}
		schema.execute("""
				INSERT INTO %s (public_id, kind, queue, payload, state, run_at, max_attempts, bucket, unique_key)
				SELECT lpad(to_hex(g), 32, '0')::uuid, '%s', '%s', '%s'::jsonb, 'available', now(), 10,
				       floor(random() * %d)::smallint, 'held-' || g
				FROM generate_series(1, %d) g
				""".formatted(schema.table(), BenchSchema.KIND, BenchSchema.QUEUE, EnqueueWorkload.PAYLOAD_JSON,
				QueueSettings.DEFAULT_BUCKETS, HELD_KEYS));
		schema.vacuum();
	}

	/** The {@code n}th key of a run (from 1): a new one, or one of the held keys, round robin. */
	private static String key(Keys keys, long n) {
		return (keys == Keys.FRESH) ? "fresh-" + n : "held-" + held(n);
	}

	private static long held(long n) {
		return 1 + (n - 1) % HELD_KEYS;
	}

	/** Fails unless the enqueue of the {@code n}th held key returned the id of the job holding it. */
	private static void checkHolder(UUID id, long n) {
		UUID holder = new UUID(0, held(n));
		if (!holder.equals(id)) {
			throw new IllegalStateException("The enqueue of held key 'held-" + held(n) + "' returned " + id
					+ ", not the id of the job holding it, " + holder);
		}
	}

	private static double pgqueue(BenchSchema schema, HikariDataSource pool, int threads, int batchSize, Keys keys,
			Profile profile) throws InterruptedException {
		QueueSettings settings = PgqueueEngine.settings(QueueMode.TRANSACTIONAL, 1, 10,
				QueueSettings.DEFAULT_POLL_INTERVAL);
		try (PgqueueEngine engine = new PgqueueEngine(pool, schema.name(), settings, true, QueueMetrics.NONE,
				(job) -> {
				})) {
			JobClient client = engine.client(pool);
			EnqueueWorkload.Payload payload = new EnqueueWorkload.Payload(1);
			AtomicLong next = new AtomicLong();
			return EnqueueWorkload.loop(threads, profile, () -> {
				if (batchSize == 1) {
					if (keys == Keys.NONE) {
						client.enqueue(BenchSchema.KIND, payload);
						return 1;
					}
					long n = next.incrementAndGet();
					UUID id = client.enqueue(JobRequest.of(BenchSchema.KIND, payload).uniqueKey(key(keys, n)));
					if (keys == Keys.HELD) {
						checkHolder(id, n);
					}
					return 1;
				}
				List<JobRequest> requests = new ArrayList<>(batchSize);
				for (int i = 0; i < batchSize; i++) {
					JobRequest request = JobRequest.of(BenchSchema.KIND, payload);
					requests.add((keys == Keys.NONE) ? request : request.uniqueKey(key(keys, next.incrementAndGet())));
				}
				client.enqueueAll(requests);
				return batchSize;
			}, null);
		}
	}

	private static double raw(BenchSchema schema, HikariDataSource pool, int threads, int batchSize, Keys keys,
			Profile profile) throws Exception {
		AtomicLong next = new AtomicLong();
		return EnqueueWorkload.loop(threads, profile, null, () -> {
			Connection connection = pool.getConnection();
			RawQueue queue = new RawQueue(connection, schema.name());
			return new EnqueueWorkload.Step() {
				@Override
				public int run() throws Exception {
					if (keys == Keys.NONE) {
						if (batchSize == 1) {
							queue.insertOne(UUID.randomUUID(), EnqueueWorkload.PAYLOAD_JSON);
						}
						else {
							queue.insertMany(batchSize, EnqueueWorkload.PAYLOAD_JSON);
						}
						return batchSize;
					}
					long[] numbers = new long[batchSize];
					String[] names = new String[batchSize];
					for (int i = 0; i < batchSize; i++) {
						numbers[i] = next.incrementAndGet();
						names[i] = key(keys, numbers[i]);
					}
					UUID[] ids = queue.enqueueUnique(names, EnqueueWorkload.PAYLOAD_JSON);
					if (keys == Keys.HELD) {
						for (int i = 0; i < batchSize; i++) {
							checkHolder(ids[i], numbers[i]);
						}
					}
					return batchSize;
				}

				@Override
				public void close() throws SQLException {
					queue.close();
					connection.close();
				}
			};
		});
	}

	private List<Result> ticks(Context context, BenchSchema schema) throws Exception {
		Profile.Ticks sizes = context.profile().ticks();
		List<Double> pgqueueTotals = new ArrayList<>();
		List<Double> pgqueuePerPass = new ArrayList<>();
		List<Double> rawTotals = new ArrayList<>();
		List<Double> rawBoundedTotals = new ArrayList<>();
		List<Double> rawPerPass = new ArrayList<>();
		int passes = 0;
		int perPass = 0;
		Map<String, Long> pgqueueCalls = Map.of();
		double pgqueueRoundTrips = 0;
		double rawRoundTrips = 0;
		HikariDataSource pool = schema.pool("ticks", 3);
		QueueSettings settings = PgqueueEngine.settings(QueueMode.TRANSACTIONAL, 1, 10,
				QueueSettings.DEFAULT_POLL_INTERVAL);
		try {
			try (PgqueueEngine engine = new PgqueueEngine(pool, schema.name(), settings, true, QueueMetrics.NONE,
					(job) -> {
					})) {
				QueueEngine scheduling = engine.scheduling();
				createSchedules(schema, scheduling, sizes);
				ScheduleTicker ticker = scheduling.database().scheduleTicker();
				// Round -1 is not counted: the JIT's and the server's first pass over the schedules.
				for (int round = -1; round < context.profile().rounds(); round++) {
					resetSchedules(schema, sizes);
					Passes pgqueue = pgqueuePasses(ticker, sizes.due());
					checkFired(schema, sizes.due(), "pgqueue's passes");
					resetSchedules(schema, sizes);
					Passes all = rawPasses(schema, pool, sizes.due(), sizes.due());
					checkFired(schema, sizes.due(), "the raw pass");
					resetSchedules(schema, sizes);
					Passes bounded = rawPasses(schema, pool, pgqueue.largest(), sizes.due());
					checkFired(schema, sizes.due(), "the raw passes");
					if (round >= 0) {
						pgqueueTotals.add(pgqueue.millis());
						pgqueuePerPass.add(pgqueue.perPass());
						rawTotals.add(all.millis());
						rawBoundedTotals.add(bounded.millis());
						rawPerPass.add(bounded.perPass());
						passes = pgqueue.count();
						perPass = pgqueue.largest();
					}
				}
			}
			// Untimed: the calls that wait on the server, per schedule fired, of each side.
			CountingDataSource counting = new CountingDataSource(pool);
			try (PgqueueEngine engine = new PgqueueEngine(counting, schema.name(), settings, true, QueueMetrics.NONE,
					(job) -> {
					})) {
				ScheduleTicker ticker = engine.scheduling().database().scheduleTicker();
				resetSchedules(schema, sizes);
				counting.reset();
				pgqueuePasses(ticker, sizes.due());
				pgqueueCalls = counting.byMethod();
				pgqueueRoundTrips = counting.total() / (double) sizes.due();
			}
			resetSchedules(schema, sizes);
			counting.reset();
			rawPasses(schema, counting, perPass, sizes.due());
			rawRoundTrips = counting.total() / (double) sizes.due();
			schema.truncate();
		}
		finally {
			schema.release(pool);
		}
		double total = Profile.median(pgqueueTotals);
		double onePass = Profile.median(pgqueuePerPass);
		double rawTotal = Profile.median(rawTotals);
		double rawBounded = Profile.median(rawBoundedTotals);
		double rawOnePass = Profile.median(rawPerPass);
		String variant = "tick pass, " + sizes.due() + " of " + sizes.schedules() + " schedules due";
		context.progress("%-38s pgqueue %7.1f ms %-24s in %d passes of at most %d, %6.2f ms per pass %s", variant,
				total, millis(pgqueueTotals), passes, perPass, onePass, millis(pgqueuePerPass));
		context.progress("%-38s raw, one transaction %7.1f ms %s; raw, %d per transaction %7.1f ms %s, %6.2f ms per "
				+ "pass %s", "", rawTotal, millis(rawTotals), perPass, rawBounded, millis(rawBoundedTotals), rawOnePass,
				millis(rawPerPass));
		context.progress("%-38s calls that wait on the server per schedule fired: pgqueue %.2f %s, raw %.2f", "",
				pgqueueRoundTrips, pgqueueCalls, rawRoundTrips);
		return List.of(
				Result.lower(name(), variant, "time to fire all due", "ms", total, rawTotal, Target.valueAtMost(100)),
				Result.lower(name(), "tick pass, " + perPass + " schedules per pass", "time per pass", "ms", onePass,
						rawOnePass, null));
	}

	/**
	 * Saves one schedule as an application does ({@code JobSchedules.save}), then copies its row in SQL
	 * to {@code tick-2} … {@code tick-<schedules>}.
	 */
	private static void createSchedules(BenchSchema schema, QueueEngine scheduling, Profile.Ticks sizes) {
		scheduling.schedules().save(Schedule.of("tick-1", CRON, BenchSchema.KIND).queue(BenchSchema.QUEUE));
		schema.execute("""
				INSERT INTO %1$s (name, cron, zone, kind, queue, payload, missed, overlap, next_tick, declared)
				SELECT 'tick-' || g, t.cron, t.zone, t.kind, t.queue, t.payload, t.missed, t.overlap, t.next_tick,
				       t.declared
				FROM %1$s t CROSS JOIN generate_series(2, %2$d) g
				WHERE t.name = 'tick-1'""".formatted(schema.name().qualify("pgqueue_schedules"), sizes.schedules()));
	}

	/**
	 * No jobs and no held tick keys; every {@code schedules ÷ due}th schedule due (its next tick the
	 * start of the current hour, so one tick is due), the others a year away; vacuumed.
	 */
	private static void resetSchedules(BenchSchema schema, Profile.Ticks sizes) {
		String schedules = schema.name().qualify("pgqueue_schedules");
		schema.truncate();
		schema.execute("TRUNCATE " + schema.name().qualify("pgqueue_unique_periods"));
		schema.execute("""
				UPDATE %s
				SET next_tick = date_trunc('hour', now())
				                + CASE WHEN substr(name, 6)::int %% %d = 0 THEN interval '0' ELSE interval '365 days' END,
				    last_tick = NULL, last_job = NULL""".formatted(schedules, sizes.schedules() / sizes.due()));
		schema.execute("VACUUM (ANALYZE) " + schedules);
		schema.vacuum();
	}

	private static void checkFired(BenchSchema schema, int due, String what) {
		long jobs = schema.count("true");
		if (jobs != due) {
			throw new IllegalStateException(what + " enqueued " + jobs + " jobs for " + due + " due schedules");
		}
	}

	/** Calls {@code pass()} until every due schedule has fired; times the passes. */
	private static Passes pgqueuePasses(ScheduleTicker ticker, int due) {
		long nanos = 0;
		int fired = 0;
		int count = 0;
		int largest = 0;
		while (fired < due) {
			long start = System.nanoTime();
			ScheduleTicker.Pass pass = ticker.pass();
			nanos += System.nanoTime() - start;
			if (pass.fired() == 0) {
				throw new IllegalStateException("A tick pass fired nothing with " + (due - fired) + " schedules due");
			}
			fired += pass.fired();
			count++;
			largest = Math.max(largest, pass.fired());
		}
		return new Passes(nanos / 1e6, count, largest);
	}

	/**
	 * The raw equivalent of the ticker's passes, each locking at most {@code limit} due schedules, until
	 * every due schedule has fired; times them.
	 */
	private static Passes rawPasses(BenchSchema schema, DataSource pool, int limit, int due) throws SQLException {
		String schedules = schema.name().qualify("pgqueue_schedules");
		String advance = """
				UPDATE %s s SET next_tick = r.next_tick, last_tick = r.last_tick, last_job = r.last_job
				FROM unnest(?::text[], ?::timestamptz[], ?::timestamptz[], ?::uuid[])
				     AS r(name, next_tick, last_tick, last_job)
				WHERE s.name = r.name""".formatted(schedules);
		String lockDue = EngineStatements.schedules(schema.name(), "lockDue");
		Map<String, CronExpression> expressions = new HashMap<>();
		try (Connection connection = pool.getConnection();
				RawQueue queue = new RawQueue(connection, schema.name());
				PreparedStatement lock = connection.prepareStatement(lockDue);
				PreparedStatement move = connection.prepareStatement(advance)) {
			connection.setAutoCommit(false);
			try {
				long nanos = 0;
				int fired = 0;
				int count = 0;
				int largest = 0;
				while (fired < due) {
					long start = System.nanoTime();
					int n = rawPass(connection, queue, lock, move, limit, expressions);
					connection.commit();
					nanos += System.nanoTime() - start;
					if (n == 0) {
						throw new IllegalStateException("A raw tick pass fired nothing with " + (due - fired)
								+ " schedules due");
					}
					fired += n;
					count++;
					largest = Math.max(largest, n);
				}
				return new Passes(nanos / 1e6, count, largest);
			}
			finally {
				connection.rollback();
				connection.setAutoCommit(true);
			}
		}
	}

	/**
	 * Locks up to {@code limit} due schedules with the engine's statement, inserts the job of each one's
	 * next tick with one unique insert (the tick's key held from the tick to the following one), and
	 * moves them all to their following tick with one update. Returns how many fired.
	 */
	private static int rawPass(Connection connection, RawQueue queue, PreparedStatement lock, PreparedStatement move,
			int limit, Map<String, CronExpression> expressions) throws SQLException {
		List<String> names = new ArrayList<>();
		List<String> payloads = new ArrayList<>();
		List<Instant> ticks = new ArrayList<>();
		List<Instant> following = new ArrayList<>();
		lock.setInt(1, limit);
		try (ResultSet rs = lock.executeQuery()) {
			while (rs.next()) {
				String cron = rs.getString(2);
				ZoneId zone = ZoneId.of(rs.getString(3));
				Instant tick = rs.getObject(9, OffsetDateTime.class).toInstant();
				CronExpression expression = expressions.computeIfAbsent(cron, CronExpression::parse);
				names.add(rs.getString(1));
				payloads.add(rs.getString(6));
				ticks.add(tick);
				following.add(expression.next(tick.atZone(zone)).toInstant());
			}
		}
		int n = names.size();
		if (n == 0) {
			return 0;
		}
		UUID[] ids = new UUID[n];
		String[] keys = new String[n];
		Timestamp[] runAts = new Timestamp[n];
		Timestamp[] nextTicks = new Timestamp[n];
		Long[] periods = new Long[n];
		for (int i = 0; i < n; i++) {
			ids[i] = UUID.randomUUID();
			keys[i] = ScheduleTicker.TICK_KEY_PREFIX + names.get(i);
			runAts[i] = Timestamp.from(ticks.get(i));
			nextTicks[i] = Timestamp.from(following.get(i));
			periods[i] = Math.max(1, Duration.between(ticks.get(i), following.get(i)).getSeconds());
		}
		Set<UUID> inserted = queue.insertUnique(ids, keys, payloads.toArray(new String[0]), runAts, periods, runAts);
		if (inserted.size() != n) {
			throw new IllegalStateException((n - inserted.size()) + " of " + n + " ticks had fired already");
		}
		move.setArray(1, connection.createArrayOf("text", names.toArray(new String[0])));
		move.setArray(2, connection.createArrayOf("timestamptz", nextTicks));
		move.setArray(3, connection.createArrayOf("timestamptz", runAts));
		move.setArray(4, connection.createArrayOf("uuid", ids));
		move.executeUpdate();
		return n;
	}

	private static String millis(List<Double> figures) {
		return figures.stream().map((figure) -> String.format(Locale.ROOT, "%.1f", figure)).toList().toString();
	}

	/**
	 * Passes that fired every due schedule.
	 * @param millis their time together
	 * @param count how many
	 * @param largest the most schedules one fired
	 */
	private record Passes(double millis, int count, int largest) {

		double perPass() {
			return this.millis / this.count;
		}

	}

}
