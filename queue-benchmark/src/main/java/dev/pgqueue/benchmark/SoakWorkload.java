package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobClient;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.settings.MaintenanceSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;
import org.jspecify.annotations.Nullable;

/**
 * Workload 9: a steady load while another session holds a {@code REPEATABLE READ} snapshot, as a
 * report, a {@code pg_dump} or a session left idle in transaction would.
 *
 * <p>Two producers offer the profile's rate, one job per transaction, to a queue with default
 * settings (concurrency 4, batch 10) in an application with a pool of Hikari's default size (10),
 * which also runs the background services (promoter, rescuer, cleaner, stats reader) at their
 * default intervals.
 * After a while under load another session takes a snapshot and holds it, then releases it, and the
 * load goes on. Every window prints the jobs offered and completed, the pickup latency (from the
 * enqueue's transaction start to the handler's start), the backlog, the table's dead tuples, the
 * sizes of the table and its indexes, and the claim index entries read per scan.
 *
 * <p>After each run the clean phase (before the snapshot), the hold and the phase after it are
 * summed up side by side: pickup p99 over each phase and how many of its windows had a p99 over
 * 100 ms. Beside busy loops ({@code --neighbours}) the clean phase shows what the machine costs by
 * itself; a longer clean phase ({@code --soak-phases}) makes that comparison fair.
 *
 * <p>Each variant runs twice in the same run: first as pgqueue claimed before claim floors (every
 * claim reads the claim index from its start), which is the baseline, then as it claims now.
 */
final class SoakWorkload implements Workload {

	static final int CONCURRENCY = 4;

	static final int BATCH_SIZE = 10;

	static final int PRODUCERS = 2;

	/** Hikari's default pool size, which an application that configures nothing gets. */
	static final int APP_POOL_SIZE = 10;

	static final String BASELINE = "no floors (before)";

	static final String CLEAN_PHASE = "clean phase, same run";

	/** The variants, numbered from 1 in this order; a profile names those it runs. */
	static final List<Variant> VARIANTS = List.of(new Variant("transactional", QueueMode.TRANSACTIONAL, false, false),
			new Variant("transactional, retention.completed 0", QueueMode.TRANSACTIONAL, true, false),
			new Variant("leased", QueueMode.LEASED, false, false),
			new Variant("transactional, holder on the app's pool", QueueMode.TRANSACTIONAL, false, true));

	@Override
	public String name() {
		return "soak";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		Profile.Soak soak = context.profile().soak();
		List<Result> results = new ArrayList<>();
		context.progress("%d jobs/s offered; snapshot held %d s after %d s, then %d s more; %d s windows; "
				+ "autovacuum %s; %d busy loop(s) beside it", soak.rate(), soak.hold().toSeconds(),
				soak.before().toSeconds(), soak.after().toSeconds(), soak.window().toSeconds(),
				setting(context.database(), "autovacuum"), soak.neighbours());
		try (BenchSchema schema = context.database().createSchema("soak");
				CpuNeighbours neighbours = CpuNeighbours.start(soak.neighbours())) {
			for (int number : soak.variants()) {
				Variant variant = VARIANTS.get(number - 1);
				context.progress("");
				// -Dpgqueue.bench.soak.baseline=false runs the engine as it claims now, only (its figures
				// against the clean phase of the same run).
				SoakRun before = null;
				if (Boolean.parseBoolean(System.getProperty("pgqueue.bench.soak.baseline", "true"))) {
					context.progress("%s, %s:", variant.name(), BASELINE);
					before = run(context, schema, variant, soak, false);
				}
				context.progress("");
				context.progress("%s, claim floors:", variant.name());
				SoakRun after = run(context, schema, variant, soak, true);
				for (String phase : List.of("before", "hold", "after")) {
					context.progress("  %s", after.phaseFigures(phase).line());
				}
				results.addAll(results(variant, before, after));
			}
		}
		return results;
	}

	private static double baseline(@Nullable SoakRun before, java.util.function.ToDoubleFunction<SoakRun> figure) {
		return (before != null) ? figure.applyAsDouble(before) : Double.NaN;
	}

	private List<Result> results(Variant variant, @Nullable SoakRun before, SoakRun floors) {
		String label = variant.name() + " @ " + floors.rate + "/s";
		List<Result> results = new ArrayList<>();
		results.add(new Result(name(), label, "lowest window completed/offered, during and after the hold", "%",
				floors.lowestCompletionShare(), baseline(before, SoakRun::lowestCompletionShare), BASELINE, true, Target.valueAtLeast(95)));
		results.add(new Result(name(), label, "highest window pickup p99 during the hold", "ms",
				floors.highestHoldP99(), baseline(before, SoakRun::highestHoldP99), BASELINE, false, Target.valueAtMost(100)));
		results.add(new Result(name(), label, "pickup p99 back to its pre-hold value, after the release", "s",
				floors.recoverySeconds(), baseline(before, SoakRun::recoverySeconds), BASELINE, false, Target.valueAtMost(30)));
		results.add(new Result(name(), label, "claim index entries read per scan, second half of the hold",
				"entries", floors.lateHoldEntriesPerScan(), baseline(before, SoakRun::lateHoldEntriesPerScan), BASELINE, false, null));
		// The hold against the clean phase of the same run: on a shared machine, what the neighbours cost
		// shows in both, and only the difference is the held snapshot's.
		SoakRun.PhaseFigures clean = floors.phaseFigures("before");
		SoakRun.PhaseFigures hold = floors.phaseFigures("hold");
		results.add(new Result(name(), label, "pickup p99 over the whole phase, hold vs the clean phase", "ms", hold.p99(),
				clean.p99(), CLEAN_PHASE, false, null));
		return results;
	}

	private SoakRun run(Context context, BenchSchema schema, Variant variant, Profile.Soak soak, boolean claimFloors)
			throws Exception {
		schema.truncate();
		Duration total = soak.before().plus(soak.hold()).plus(soak.after());
		int windowCount = (int) (total.toMillis() / soak.window().toMillis());
		long windowNanos = soak.window().toNanos();
		SoakRun run = new SoakRun(soak.rate(), windowCount, soak);
		HikariDataSource app = schema.pool("soak-app", APP_POOL_SIZE);
		QueueSettings settings = QueueSettings.defaults(BenchSchema.QUEUE).withMode(variant.mode());
		long start = System.nanoTime();
		AtomicBoolean producing = new AtomicBoolean(true);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		try (PgqueueEngine engine = new PgqueueEngine(app, schema.name(), settings, variant.deleteCompleted(),
				QueueMetrics.NONE, (job) -> run.started(start, windowNanos, job.createdAt()))) {
			if (!claimFloors) {
				engine.withoutClaimFloors();
			}
			JobPoller poller = engine.poller();
			JobClient client = engine.localClient(app, poller);
			engine.listen(app, poller);
			poller.start();
			// The background services as an application runs them: promoter, rescuer, cleaner, stats reader.
			MaintenanceSettings defaults = MaintenanceSettings.DEFAULT;
			List<EngineService> maintenance = engine.maintenance(new MaintenanceSettings(defaults.promoteInterval(),
					defaults.rescueInterval(), defaults.cleanupInterval(), defaults.statsInterval(),
					variant.deleteCompleted() ? Duration.ZERO : completedRetention(defaults), defaults.failedRetention(),
					defaults.cleanupBatchSize(), defaults.deadRowsWarning()));
			maintenance.forEach(EngineService::start);
			List<Thread> producers = new ArrayList<>();
			for (int p = 0; p < PRODUCERS; p++) {
				int producer = p;
				Thread thread = new Thread(() -> produce(client, producer, soak.rate(), start, windowNanos, run,
						producing, failure), "soak-producer-" + p);
				thread.start();
				producers.add(thread);
			}
			Thread holder = new Thread(() -> hold(schema, variant.holderOnAppPool() ? app : null, start, soak, failure),
					"soak-holder");
			holder.start();
			for (int w = 0; w < windowCount; w++) {
				long windowEnd = start + (w + 1) * windowNanos;
				LockSupport.parkNanos(windowEnd - System.nanoTime());
				if (failure.get() != null) {
					throw new IllegalStateException("Soak run failed: " + failure.get(), failure.get());
				}
				SoakRun.Window window = run.close(w, SoakRun.sample(schema));
				context.progress("  %s", window.line(soak));
			}
			producing.set(false);
			for (Thread producer : producers) {
				producer.join();
			}
			holder.join();
			poller.stop();
			maintenance.forEach(EngineService::stop);
		}
		finally {
			producing.set(false);
			schema.release(app);
		}
		return run;
	}

	/** Offers {@code rate / PRODUCERS} jobs a second, catching up after a stall, until told to stop. */
	private static void produce(JobClient client, int producer, int rate, long start, long windowNanos, SoakRun run,
			AtomicBoolean producing, AtomicReference<Throwable> failure) {
		long interval = 1_000_000_000L * PRODUCERS / rate;
		long next = start + producer * (interval / PRODUCERS);
		try {
			while (producing.get()) {
				long wait = next - System.nanoTime();
				if (wait > 0) {
					LockSupport.parkNanos(wait);
					continue;
				}
				client.enqueue(BenchSchema.KIND, new EnqueueWorkload.Payload(1));
				run.offered(start, windowNanos);
				next += interval;
			}
		}
		catch (Throwable ex) {
			failure.compareAndSet(null, ex);
		}
	}

	/**
	 * Takes a {@code REPEATABLE READ} snapshot at the end of the "before" phase and holds it, idle in
	 * transaction, for the hold; on a connection of the application's pool or one of its own.
	 */
	private static void hold(BenchSchema schema, DataSource appPool, long start, Profile.Soak soak,
			AtomicReference<Throwable> failure) {
		LockSupport.parkNanos(start + soak.before().toNanos() - System.nanoTime());
		try (Connection connection = (appPool != null) ? appPool.getConnection() : schema.connect()) {
			connection.setAutoCommit(false);
			connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
			try (Statement statement = connection.createStatement()) {
				statement.execute("SET application_name = 'soak-snapshot-holder'");
				statement.executeQuery("SELECT count(*) FROM pg_class").close();
			}
			LockSupport.parkNanos(start + soak.before().plus(soak.hold()).toNanos() - System.nanoTime());
			connection.commit();
			connection.setAutoCommit(true);
			connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
		}
		catch (Throwable ex) {
			failure.compareAndSet(null, ex);
		}
	}

	private static String setting(BenchDatabase database, String name) throws SQLException {
		try (Connection connection = database.connect(); Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SELECT current_setting('" + name + "')")) {
			rs.next();
			return rs.getString(1);
		}
	}

	/**
	 * The completed jobs' retention of the variants that keep them: the default, or
	 * {@code -Dpgqueue.bench.soak.completed-retention} (an ISO-8601 duration such as {@code PT15M}), so
	 * that a run shorter than the default hour still sees partitions of finished jobs expire.
	 */
	private static Duration completedRetention(MaintenanceSettings defaults) {
		String chosen = System.getProperty("pgqueue.bench.soak.completed-retention");
		return (chosen == null || chosen.isBlank()) ? defaults.completedRetention() : Duration.parse(chosen.trim());
	}

	/**
	 * One variant.
	 *
	 * @param name as printed
	 * @param mode the queue's mode
	 * @param deleteCompleted whether completed jobs are deleted ({@code retention.completed: 0})
	 * @param holderOnAppPool whether the snapshot is held on a connection of the application's pool
	 */
	record Variant(String name, QueueMode mode, boolean deleteCompleted, boolean holderOnAppPool) {

	}

}
