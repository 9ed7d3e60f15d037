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
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What one run of the soak workload saw, window by window: jobs offered and started, pickup
 * latencies, and the table's statistics read from the catalog at the end of each window; and the
 * figures {@link SoakWorkload} reports from them.
 */
final class SoakRun {

	final int rate;

	final Profile.Soak soak;

	final AtomicLongArray offered;

	final AtomicLongArray completed;

	final List<List<Long>> pickupsMicros = new ArrayList<>();

	final List<Window> windows = new ArrayList<>();

	private long totalOffered;

	private long totalCompleted;

	private Sample previous;

	SoakRun(int rate, int windows, Profile.Soak soak) {
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

	/**
	 * Pickup figures of one phase ({@code before}, {@code hold} or {@code after}), without the run's
	 * first window, which warms the JIT (unless it is the phase's only one). The clean phase of the same
	 * run is what the hold is compared with: on a shared machine both see the same neighbours.
	 */
	PhaseFigures phaseFigures(String phase) {
		List<Window> windows = this.windows.stream().filter((w) -> w.phase().equals(phase)).toList();
		if (windows.size() > 1 && windows.get(0).index() == 0) {
			windows = windows.subList(1, windows.size());
		}
		List<Long> pooled = new ArrayList<>();
		for (Window window : windows) {
			List<Long> pickups = this.pickupsMicros.get(window.index());
			synchronized (pickups) {
				pooled.addAll(pickups);
			}
		}
		pooled.sort(null);
		List<Double> p99s = windows.stream().map(Window::p99).toList();
		return new PhaseFigures(phase, windows.size(),
				(int) windows.stream().filter((w) -> w.p99() > SLOW_WINDOW_P99_MILLIS).count(), percentile(pooled, 99),
				p99s.isEmpty() ? Double.NaN : Profile.median(p99s),
				p99s.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN));
	}

	/** A window's pickup p99 above this many milliseconds counts as slow. */
	static final double SLOW_WINDOW_P99_MILLIS = 100;

	/**
	 * One phase's pickups.
	 *
	 * @param phase its name
	 * @param windows windows counted
	 * @param slowWindows of those, windows whose pickup p99 was over {@link #SLOW_WINDOW_P99_MILLIS}
	 * @param p99 pickup p99 over every job of the phase, in milliseconds
	 * @param medianWindowP99 the median of the windows' p99s
	 * @param highestWindowP99 the highest window p99
	 */
	record PhaseFigures(String phase, int windows, int slowWindows, double p99, double medianWindowP99,
			double highestWindowP99) {

		String line() {
			return String.format(Locale.ROOT,
					"%-6s %2d windows, %2d with p99 over %.0f ms; pickup p99 %7.1f ms over the phase, windows' p99 "
							+ "median %7.1f, highest %7.1f ms",
					this.phase, this.windows, this.slowWindows, SLOW_WINDOW_P99_MILLIS, this.p99, this.medianWindowP99,
					this.highestWindowP99);
		}

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

	/** Reads the table's statistics from the catalog. */
	static Sample sample(BenchSchema schema) throws SQLException {
		String table = schema.table();
		String claimIndex = schema.name().qualify("pgqueue_jobs_claim_idx");
		String sql = """
				SELECT t.n_dead_tup, pg_relation_size('%1$s'), pg_relation_size('%2$s'),
				       pg_indexes_size('%1$s') - pg_relation_size('%2$s'), i.idx_scan, i.idx_tup_read,
				       (SELECT coalesce(sum(pg_total_relation_size(relid)), 0) FROM pg_partition_tree('%3$s'))
				FROM pg_stat_user_tables t, pg_stat_user_indexes i
				WHERE t.relid = '%1$s'::regclass AND i.indexrelid = '%2$s'::regclass
				""".formatted(table, claimIndex, schema.finishedTable());
		try (Connection connection = schema.connect(); Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery(sql)) {
			rs.next();
			return new Sample(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5),
					rs.getLong(6), rs.getLong(7));
		}
	}

	/** What the catalog says of the table at the end of a window. */
	record Sample(long deadTuples, long tableBytes, long claimIndexBytes, long otherIndexBytes, long claimScans,
			long claimEntriesRead, long finishedBytes) {

	}

	/** One window's figures. */
	record Window(int index, long offered, long completed, long backlog, double p50, double p99, Sample sample,
			double entriesPerScan, String phase) {

		String line(Profile.Soak soak) {
			return String.format(Locale.ROOT,
					"%4d s %-7s offered %6.0f/s completed %6.0f/s backlog %7d  pickup p50 %8.1f p99 %8.1f ms  "
							+ "dead %8d  table %6.1f MB claim idx %5.1f MB other idx %6.1f MB  finished %7.1f MB  "
							+ "claim entries/scan %8.0f",
					(this.index + 1) * soak.window().toSeconds(), this.phase,
					this.offered / (double) soak.window().toSeconds(),
					this.completed / (double) soak.window().toSeconds(), this.backlog, this.p50, this.p99,
					this.sample.deadTuples(), this.sample.tableBytes() / 1e6, this.sample.claimIndexBytes() / 1e6,
					this.sample.otherIndexBytes() / 1e6, this.sample.finishedBytes() / 1e6, this.entriesPerScan);
		}

	}

}
