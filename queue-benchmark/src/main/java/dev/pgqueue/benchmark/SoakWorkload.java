package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobClient;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.JobPoller;
import dev.pgqueue.engine.MaintenanceSettings;
import dev.pgqueue.engine.QueueMaintenance;
import dev.pgqueue.engine.sql.MaintenanceRepository;
import dev.pgqueue.engine.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;

import org.springframework.jdbc.core.JdbcTemplate;

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
				+ "autovacuum %s", soak.rate(), soak.hold().toSeconds(), soak.before().toSeconds(),
				soak.after().toSeconds(), soak.window().toSeconds(), setting(context.database(), "autovacuum"));
		try (BenchSchema schema = context.database().createSchema("soak")) {
			for (int number : soak.variants()) {
				Variant variant = VARIANTS.get(number - 1);
				context.progress("");
				context.progress("%s, %s:", variant.name(), BASELINE);
				Run before = run(context, schema, variant, soak, false);
				context.progress("");
				context.progress("%s, claim floors:", variant.name());
				Run after = run(context, schema, variant, soak, true);
				results.addAll(results(variant, before, after));
			}
		}
		return results;
	}

	private List<Result> results(Variant variant, Run before, Run floors) {
		String label = variant.name() + " @ " + floors.rate + "/s";
		List<Result> results = new ArrayList<>();
		results.add(new Result(name(), label, "lowest window completed/offered, during and after the hold", "%",
				floors.lowestCompletionShare(), before.lowestCompletionShare(), BASELINE, true, Target.valueAtLeast(95)));
		results.add(new Result(name(), label, "highest window pickup p99 during the hold", "ms",
				floors.highestHoldP99(), before.highestHoldP99(), BASELINE, false, Target.valueAtMost(100)));
		results.add(new Result(name(), label, "pickup p99 back to its pre-hold value, after the release", "s",
				floors.recoverySeconds(), before.recoverySeconds(), BASELINE, false, Target.valueAtMost(30)));
		results.add(new Result(name(), label, "claim index entries read per scan, second half of the hold",
				"entries", floors.lateHoldEntriesPerScan(), before.lateHoldEntriesPerScan(), BASELINE, false, null));
		return results;
	}

	private Run run(Context context, BenchSchema schema, Variant variant, Profile.Soak soak, boolean claimFloors)
			throws Exception {
		schema.truncate();
		Duration total = soak.before().plus(soak.hold()).plus(soak.after());
		int windowCount = (int) (total.toMillis() / soak.window().toMillis());
		long windowNanos = soak.window().toNanos();
		Run run = new Run(soak.rate(), windowCount, soak);
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
			QueueMaintenance maintenance = new QueueMaintenance(
					new MaintenanceRepository(new JdbcTemplate(app), schema.name(), true),
					new MaintenanceSettings(defaults.promoteInterval(), defaults.rescueInterval(),
							defaults.cleanupInterval(), defaults.statsInterval(),
							variant.deleteCompleted() ? Duration.ZERO : defaults.completedRetention(),
							defaults.failedRetention(), defaults.cleanupBatchSize()),
					QueueMetrics.NONE, () -> List.of(BenchSchema.QUEUE));
			maintenance.start();
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
			Sampler sampler = new Sampler(schema);
			for (int w = 0; w < windowCount; w++) {
				long windowEnd = start + (w + 1) * windowNanos;
				LockSupport.parkNanos(windowEnd - System.nanoTime());
				if (failure.get() != null) {
					throw new IllegalStateException("Soak run failed: " + failure.get(), failure.get());
				}
				Window window = run.close(w, sampler.sample());
				context.progress("  %s", window.line(soak));
			}
			producing.set(false);
			for (Thread producer : producers) {
				producer.join();
			}
			holder.join();
			poller.stop();
			maintenance.stop();
		}
		finally {
			producing.set(false);
			schema.release(app);
		}
		return run;
	}

	/** Offers {@code rate / PRODUCERS} jobs a second, catching up after a stall, until told to stop. */
	private static void produce(JobClient client, int producer, int rate, long start, long windowNanos, Run run,
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
	 * One variant.
	 *
	 * @param name as printed
	 * @param mode the queue's mode
	 * @param deleteCompleted whether completed jobs are deleted ({@code retention.completed: 0})
	 * @param holderOnAppPool whether the snapshot is held on a connection of the application's pool
	 */
	record Variant(String name, QueueMode mode, boolean deleteCompleted, boolean holderOnAppPool) {

	}

	/** What the catalog says of the table at the end of a window. */
	record Sample(long deadTuples, long tableBytes, long claimIndexBytes, long otherIndexBytes, long claimScans,
			long claimEntriesRead, double oldestSnapshotSeconds) {

	}

	/** Reads the table's statistics from the catalog. */
	private static final class Sampler {

		private final BenchSchema schema;

		Sampler(BenchSchema schema) {
			this.schema = schema;
		}

		Sample sample() throws SQLException {
			String table = this.schema.table();
			String claimIndex = this.schema.name().qualify("pgqueue_jobs_claim_idx");
			String sql = """
					SELECT t.n_dead_tup, pg_relation_size('%1$s'), pg_relation_size('%2$s'),
					       pg_indexes_size('%1$s') - pg_relation_size('%2$s'), i.idx_scan, i.idx_tup_read,
					       coalesce((SELECT extract(epoch FROM clock_timestamp() - min(xact_start))
					                 FROM pg_stat_activity WHERE application_name = 'soak-snapshot-holder'
					                   AND backend_xmin IS NOT NULL), 0)
					FROM pg_stat_user_tables t, pg_stat_user_indexes i
					WHERE t.relid = '%1$s'::regclass AND i.indexrelid = '%2$s'::regclass
					""".formatted(table, claimIndex);
			try (Connection connection = this.schema.connect(); Statement statement = connection.createStatement();
					ResultSet rs = statement.executeQuery(sql)) {
				rs.next();
				return new Sample(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5),
						rs.getLong(6), rs.getDouble(7));
			}
		}

	}

	/** One window's figures. */
	record Window(int index, long offered, long completed, long backlog, double p50, double p99, Sample sample,
			double entriesPerScan, String phase) {

		String line(Profile.Soak soak) {
			return String.format(Locale.ROOT,
					"%4d s %-7s offered %6.0f/s completed %6.0f/s backlog %7d  pickup p50 %8.1f p99 %8.1f ms  "
							+ "dead %8d  table %6.1f MB claim idx %5.1f MB other idx %6.1f MB  claim entries/scan %8.0f",
					(this.index + 1) * soak.window().toSeconds(), this.phase,
					this.offered / (double) soak.window().toSeconds(),
					this.completed / (double) soak.window().toSeconds(), this.backlog, this.p50, this.p99,
					this.sample.deadTuples(), this.sample.tableBytes() / 1e6, this.sample.claimIndexBytes() / 1e6,
					this.sample.otherIndexBytes() / 1e6, this.entriesPerScan);
		}

	}

	/** Counts and latencies of one run, by window. */
	private static final class Run {

		final int rate;

		final Profile.Soak soak;

		final AtomicLongArray offered;

		final AtomicLongArray completed;

		final List<List<Long>> pickupsMicros = new ArrayList<>();

		final List<Window> windows = new ArrayList<>();

		private long totalOffered;

		private long totalCompleted;

		private Sample previous;

		Run(int rate, int windows, Profile.Soak soak) {
			this.rate = rate;
			this.soak = soak;
			// One spare slot for the moments after the last window closes.
			this.offered = new AtomicLongArray(windows + 1);
			this.completed = new AtomicLongArray(windows + 1);
			for (int i = 0; i <= windows; i++) {
				this.pickupsMicros.add(new ArrayList<>());
			}
		}

		private int window(long start, long windowNanos) {
			return (int) Math.min(this.offered.length() - 1, (System.nanoTime() - start) / windowNanos);
		}

		void offered(long start, long windowNanos) {
			this.offered.incrementAndGet(window(start, windowNanos));
		}

		void started(long start, long windowNanos, Instant createdAt) {
			long micros = Duration.between(createdAt, Instant.now()).toNanos() / 1_000;
			int window = window(start, windowNanos);
			this.completed.incrementAndGet(window);
			List<Long> pickups = this.pickupsMicros.get(window);
			synchronized (pickups) {
				pickups.add(micros);
			}
		}

		Window close(int index, Sample sample) {
			this.totalOffered += this.offered.get(index);
			this.totalCompleted += this.completed.get(index);
			List<Long> pickups = this.pickupsMicros.get(index);
			List<Long> sorted;
			synchronized (pickups) {
				sorted = pickups.stream().sorted().toList();
			}
			long scans = (this.previous != null) ? sample.claimScans() - this.previous.claimScans() : 0;
			long entries = (this.previous != null) ? sample.claimEntriesRead() - this.previous.claimEntriesRead() : 0;
			this.previous = sample;
			Window window = new Window(index, this.offered.get(index), this.completed.get(index),
					this.totalOffered - this.totalCompleted, percentile(sorted, 50), percentile(sorted, 99), sample,
					(scans > 0) ? entries / (double) scans : 0, phase(index));
			this.windows.add(window);
			return window;
		}

		private String phase(int index) {
			long endMillis = (index + 1) * this.soak.window().toMillis();
			if (endMillis <= this.soak.before().toMillis()) {
				return "before";
			}
			return (endMillis <= this.soak.before().plus(this.soak.hold()).toMillis()) ? "hold" : "after";
		}

		private static double percentile(List<Long> sorted, double p) {
			if (sorted.isEmpty()) {
				return Double.NaN;
			}
			int index = (int) Math.ceil(p / 100 * sorted.size()) - 1;
			return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index))) / 1000.0;
		}

		/** The lowest completed ÷ offered of the windows during and after the hold, in percent. */
		double lowestCompletionShare() {
			return this.windows.stream()
				.filter((w) -> !w.phase().equals("before"))
				.mapToDouble((w) -> 100.0 * w.completed() / Math.max(1, w.offered()))
				.min()
				.orElse(Double.NaN);
		}

		double highestHoldP99() {
			return this.windows.stream().filter((w) -> w.phase().equals("hold")).mapToDouble(Window::p99).max()
				.orElse(Double.NaN);
		}

		/**
		 * Seconds from the release to the end of the first window after it whose p99 is back within
		 * 25 % (and 2 ms) of the pre-hold windows' median p99, or the whole after-phase plus one
		 * window when none is.
		 */
		double recoverySeconds() {
			List<Double> before = this.windows.stream().filter((w) -> w.phase().equals("before"))
				.skip(1) // the first window warms the JIT
				.map(Window::p99).toList();
			if (before.isEmpty()) {
				before = this.windows.stream().filter((w) -> w.phase().equals("before")).map(Window::p99).toList();
			}
			double reference = Profile.median(before);
			double bound = Math.max(reference * 1.25, reference + 2);
			long releaseMillis = this.soak.before().plus(this.soak.hold()).toMillis();
			for (Window window : this.windows) {
				if (window.phase().equals("after") && window.p99() <= bound) {
					return ((window.index() + 1) * this.soak.window().toMillis() - releaseMillis) / 1000.0;
				}
			}
			return (this.soak.after().toMillis() + this.soak.window().toMillis()) / 1000.0;
		}

		/** Claim index entries read per scan over the second half of the hold. */
		double lateHoldEntriesPerScan() {
			List<Window> hold = this.windows.stream().filter((w) -> w.phase().equals("hold")).toList();
			if (hold.size() < 2) {
				return Double.NaN;
			}
			Sample from = hold.get(hold.size() / 2 - 1).sample();
			Sample to = hold.get(hold.size() - 1).sample();
			long scans = to.claimScans() - from.claimScans();
			return (scans > 0) ? (to.claimEntriesRead() - from.claimEntriesRead()) / (double) scans : Double.NaN;
		}

	}

}
