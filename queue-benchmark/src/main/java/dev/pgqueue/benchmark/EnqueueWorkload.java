package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * Workload 3: enqueue throughput, one job per transaction ({@code JobClient.enqueue} outside any
 * transaction, so each insert commits on its own, against a single-row INSERT in autocommit) and
 * many per call ({@code enqueueAll} against the same multi-row INSERT over {@code unnest}). pgqueue
 * notifies as the starter does by default, at most once per queue every 2 ms; the raw inserts never
 * notify.
 *
 * <p>Many per call is also measured, in the same rounds, against a second baseline that is not the
 * engine's SQL: a plain multi-row {@code INSERT ... VALUES (...), (...), ...} of the columns a job
 * cannot do without (public id, kind, queue, payload, state, max attempts; the others take their
 * defaults), one prepared statement per batch size, in autocommit. It is the least an insert of those
 * jobs into the same table costs, so {@code enqueueAll} against it shows what the engine's statement
 * and the client around it cost together (target: at least {@value #PLAIN_TARGET} of its throughput,
 * that is a job's time within 1.25 times). The order of the three sides is mirrored from one round to
 * the next, so that a drift of the machine over a round weighs on each alike.
 */
final class EnqueueWorkload implements Workload {

	/** The payload pgqueue serializes; the raw side inserts its JSON as a constant. */
	public record Payload(long n) {
	}

	static final String PAYLOAD_JSON = "{\"n\":1}";

	/** The second baseline of many per call, as results name it. */
	static final String PLAIN = "plain multi-row INSERT";

	/** enqueueAll's throughput ÷ the plain multi-row insert's it aims at. */
	static final double PLAIN_TARGET = 0.8;

	@Override
	public String name() {
		return "enqueue";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		Profile profile = context.profile();
		List<Result> results = new ArrayList<>();
		// -Dpgqueue.bench.enqueue.threads=1 and -Dpgqueue.bench.enqueue.batch-sizes=100 narrow the grid
		// (a batch size of 1 keeps one job per transaction, which is measured unless the sizes leave it out).
		List<Integer> threadCounts = Profile.only("pgqueue.bench.enqueue.threads", profile.enqueueThreads());
		List<Integer> batchSizes = new ArrayList<>(profile.enqueueBatchSizes());
		batchSizes.add(0, 1);
		batchSizes = Profile.only("pgqueue.bench.enqueue.batch-sizes", batchSizes);
		try (BenchSchema schema = context.database().createSchema("enqueue")) {
			if (batchSizes.contains(1)) {
				for (int threads : threadCounts) {
					results.addAll(measure(context, schema, threads, 1));
				}
			}
			for (int batchSize : batchSizes) {
				if (batchSize == 1) {
					continue;
				}
				for (int threads : threadCounts) {
					results.addAll(measure(context, schema, threads, batchSize));
				}
			}
		}
		return results;
	}

	private List<Result> measure(Context context, BenchSchema schema, int threads, int batchSize) throws Exception {
		boolean single = batchSize == 1;
		HikariDataSource pool = schema.pool("enqueue", threads + 1);
		try {
			List<Double> pgqueueRounds = new ArrayList<>();
			List<Double> rawRounds = new ArrayList<>();
			List<Double> plainRounds = new ArrayList<>();
			for (int round = 0; round < context.profile().rounds(); round++) {
				boolean mirrored = round % 2 == 1;
				if (mirrored && !single) {
					schema.truncate();
					plainRounds.add(plain(schema, pool, threads, batchSize, context.profile()));
				}
				if (mirrored) {
					schema.truncate();
					rawRounds.add(raw(schema, pool, threads, batchSize, context.profile()));
				}
				schema.truncate();
				pgqueueRounds.add(pgqueue(schema, pool, threads, batchSize, context.profile()));
				if (!mirrored) {
					schema.truncate();
					rawRounds.add(raw(schema, pool, threads, batchSize, context.profile()));
				}
				if (!mirrored && !single) {
					schema.truncate();
					plainRounds.add(plain(schema, pool, threads, batchSize, context.profile()));
				}
			}
			schema.truncate();
			double pgqueue = Profile.median(pgqueueRounds);
			double raw = Profile.median(rawRounds);
			String variant = single ? "one per transaction, " + threads + " thr"
					: batchSize + " per call, " + threads + " thr";
			List<Result> results = new ArrayList<>();
			results.add(Result.higher(name(), variant, "throughput", "jobs/s", pgqueue, raw,
					Target.ratioAtLeast(single ? 0.8 : 0.5)));
			if (single) {
				context.progress("%-28s pgqueue %,9.0f jobs/s %-28s raw %,9.0f jobs/s %-28s %5.2f", variant, pgqueue,
						Profile.rounds(pgqueueRounds), raw, Profile.rounds(rawRounds), pgqueue / raw);
				return results;
			}
			double plain = Profile.median(plainRounds);
			context.progress("%-28s pgqueue %,9.0f jobs/s %-28s raw %,9.0f jobs/s %-28s %5.2f  plain %,9.0f jobs/s "
					+ "%-28s %5.2f", variant, pgqueue, Profile.rounds(pgqueueRounds), raw, Profile.rounds(rawRounds),
					pgqueue / raw, plain, Profile.rounds(plainRounds), pgqueue / plain);
			results.add(new Result(name(), variant, "throughput", "jobs/s", pgqueue, plain, PLAIN, true,
					Target.ratioAtLeast(PLAIN_TARGET)));
			return results;
		}
		finally {
			schema.release(pool);
		}
	}

	private static double pgqueue(BenchSchema schema, HikariDataSource pool, int threads, int batchSize,
			Profile profile) throws InterruptedException {
		QueueSettings settings = PgqueueEngine.settings(QueueMode.TRANSACTIONAL, 1, 10,
				QueueSettings.DEFAULT_POLL_INTERVAL);
		try (PgqueueEngine engine = new PgqueueEngine(pool, schema.name(), settings, true, QueueMetrics.NONE,
				(job) -> {
				})) {
			// -Dpgqueue.bench.enqueue.notify=false enqueues without notifications, to see what they cost.
			boolean notify = Boolean.parseBoolean(System.getProperty("pgqueue.bench.enqueue.notify", "true"));
			JobClient client = notify ? engine.client(pool) : engine.client(pool, null);
			Payload payload = new Payload(1);
			return loop(threads, profile, () -> {
				if (batchSize == 1) {
					client.enqueue(BenchSchema.KIND, payload);
					return 1;
				}
				List<JobRequest> requests = new ArrayList<>(batchSize);
				for (int i = 0; i < batchSize; i++) {
					requests.add(JobRequest.of(BenchSchema.KIND, payload));
				}
				client.enqueueAll(requests);
				return batchSize;
			}, null);
		}
	}

	private static double raw(BenchSchema schema, HikariDataSource pool, int threads, int batchSize,
			Profile profile) throws Exception {
		return loop(threads, profile, null, () -> {
			Connection connection = pool.getConnection();
			RawQueue queue = new RawQueue(connection, schema.name());
			return new Step() {
				@Override
				public int run() throws Exception {
					if (batchSize == 1) {
						queue.insertOne(UUID.randomUUID(), PAYLOAD_JSON);
						return 1;
					}
					queue.insertMany(batchSize, PAYLOAD_JSON);
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

	/**
	 * The second baseline: {@code batchSize} due jobs per plain multi-row {@code INSERT ... VALUES},
	 * each thread on a connection of its own with the statement prepared once, in autocommit, not
	 * notifying; random public ids, the payload as a constant.
	 */
	private static double plain(BenchSchema schema, HikariDataSource pool, int threads, int batchSize,
			Profile profile) throws Exception {
		String sql = plainInsert(schema.table(), batchSize);
		return loop(threads, profile, null, () -> {
			Connection connection = pool.getConnection();
			PreparedStatement insert = connection.prepareStatement(sql);
			return new Step() {
				@Override
				public int run() throws Exception {
					int p = 1;
					for (int i = 0; i < batchSize; i++) {
						insert.setObject(p++, UUID.randomUUID());
						insert.setString(p++, BenchSchema.KIND);
						insert.setString(p++, BenchSchema.QUEUE);
						insert.setString(p++, PAYLOAD_JSON);
						insert.setInt(p++, 10);
					}
					insert.executeUpdate();
					return batchSize;
				}

				@Override
				public void close() throws SQLException {
					insert.close();
					connection.close();
				}
			};
		});
	}

	/** {@code INSERT INTO table (...) VALUES (?, ?, ?, ?::jsonb, 'available', ?), ...} of {@code rows} rows. */
	static String plainInsert(String table, int rows) {
		StringBuilder sql = new StringBuilder("INSERT INTO ").append(table)
			.append(" (public_id, kind, queue, payload, state, max_attempts) VALUES ");
		for (int i = 0; i < rows; i++) {
			sql.append((i == 0) ? "" : ", ").append("(?, ?, ?, ?::jsonb, 'available', ?)");
		}
		return sql.toString();
	}

	/**
	 * Runs {@code threads} producers for the warm-up and measured windows; returns jobs per second in
	 * the measured one. Each producer runs {@code step}, or the step {@code perThread} makes for it
	 * (holding a connection for the whole loop).
	 */
	static double loop(int threads, Profile profile, Step step, StepFactory perThread)
			throws InterruptedException {
		AtomicLong inserted = new AtomicLong();
		AtomicBoolean running = new AtomicBoolean(true);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		List<Thread> producers = new ArrayList<>();
		for (int i = 0; i < threads; i++) {
			Thread producer = new Thread(() -> {
				try {
					try (Step own = (perThread != null) ? perThread.create() : step) {
						while (running.get()) {
							inserted.addAndGet(own.run());
						}
					}
				}
				catch (Throwable ex) {
					failure.compareAndSet(null, ex);
				}
			}, "enqueue-" + i);
			producer.start();
			producers.add(producer);
		}
		double rate = SlowJobsWorkload.rate(inserted, profile);
		running.set(false);
		for (Thread producer : producers) {
			producer.join();
		}
		if (failure.get() != null) {
			throw new IllegalStateException("Enqueue loop failed: " + failure.get(), failure.get());
		}
		return rate;
	}

	@FunctionalInterface
	interface Step extends AutoCloseable {

		/** Enqueues and returns how many jobs. */
		int run() throws Exception;

		@Override
		default void close() throws SQLException {
		}

	}

	@FunctionalInterface
	interface StepFactory {

		Step create() throws Exception;

	}

}
