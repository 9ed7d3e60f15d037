package dev.pgqueue.benchmark;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.benchmark.Workload.Context;

/**
 * One layout of the finished-layouts workload: its schema, its connections, what it does in a round
 * and after the rounds, and its figures.
 */
final class FinishedLayoutRun implements AutoCloseable {

	/** Jobs per insert statement. */
	static final int INSERT_CHUNK = 500;

	/** Jobs per claim, as transactional mode claims under a backlog. */
	static final int CLAIM_BATCH = 100;

	/** Finished jobs looked up by public id. */
	static final int LOOKUPS = 1_000;

	final FinishedLayout layout;

	private final BenchSchema schema;

	private final Connection admin;

	private HikariDataSource pool;

	private final Random random = new Random(42);

	/** Claims that failed because a row they read had moved to another partition, and ran again. */
	final AtomicLong claimRetries = new AtomicLong();

	final List<Double> drainRates = new ArrayList<>();

	final List<Double> enqueueWal = new ArrayList<>();

	final List<Double> completionWal = new ArrayList<>();

	final List<Double> vacuumWal = new ArrayList<>();

	private Sizes start;

	private Sizes end;

	private long hotBytes;

	private double claimEmpty;

	private double claimKept;

	private double find = Double.NaN;

	private double cleanupMillis;

	private double vacuumAfterDrainMillis;

	private double cleanupWal;

	private double vacuumAfterCleanupMillis;

	private double vacuumAfterCleanupWal;

	private List<UUID> lastRound = List.of();

	private long keptJobs;

	FinishedLayoutRun(FinishedLayout layout, BenchSchema schema) throws SQLException {
		this.layout = layout;
		this.schema = schema;
		this.admin = schema.connect();
		try (Statement statement = this.admin.createStatement()) {
			statement.execute("SET search_path TO " + schema.name().quoted());
		}
	}

	String setting(String name) throws SQLException {
		try (Statement statement = this.admin.createStatement();
				ResultSet rs = statement.executeQuery("SELECT current_setting('" + name + "')")) {
			rs.next();
			return rs.getString(1);
		}
	}

	void create(List<OffsetDateTime> hours, int threads) throws SQLException {
		try (Statement statement = this.admin.createStatement()) {
			for (String ddl : this.layout.ddl(hours)) {
				statement.execute(ddl);
			}
		}
		this.pool = this.schema.pool("finished-" + this.layout.name().toLowerCase(Locale.ROOT), threads);
	}

	/** Enqueues, vacuums, drains and vacuums; finished jobs stay. */
	void round(Context context, int round, int jobs, OffsetDateTime hour) throws Exception {
		checkpoint();
		long wal0 = wal();
		List<UUID> ids = enqueue(jobs);
		long wal1 = wal();
		vacuum();
		long wal2 = wal();
		long started = System.nanoTime();
		long drained = drain(this.pool, hour);
		double seconds = (System.nanoTime() - started) / 1e9;
		long wal3 = wal();
		this.vacuumAfterDrainMillis = vacuum();
		long wal4 = wal();
		if (drained != jobs) {
			throw new IllegalStateException(this.layout.label() + ", round " + round + ": drained " + drained + " of "
					+ jobs + " jobs");
		}
		this.lastRound = ids;
		this.keptJobs += jobs;
		this.drainRates.add(jobs / seconds);
		this.enqueueWal.add((wal1 - wal0) / (double) jobs);
		this.completionWal.add((wal3 - wal2) / (double) jobs);
		this.vacuumWal.add((wal2 - wal1 + wal4 - wal3) / (double) jobs);
		this.end = sizes();
		this.hotBytes = single("SELECT pg_total_relation_size('" + this.layout.hotRelation() + "')");
		context.progress("round %d %-16s drain %,8.0f jobs/s  WAL/job enqueue %4.0f, completion %4.0f, vacuums %4.0f; "
				+ "claims run again so far %,d", round, this.layout.label(), jobs / seconds,
				this.enqueueWal.get(round - 1), this.completionWal.get(round - 1), this.vacuumWal.get(round - 1),
				this.claimRetries.get());
	}

	/** With every round's jobs kept: the claim and the look-up timed, then one cleanup. */
	void afterRounds(Context context, Profile.FinishedLayouts sizes, OffsetDateTime probeHour,
			OffsetDateTime cleanupBefore) throws Exception {
		this.claimKept = claimProbe(sizes.probeJobs(), probeHour);
		if (this.layout.findByPublicId() != null) {
			this.find = findProbe();
		}
		checkpoint();
		long wal0 = wal();
		long started = System.nanoTime();
		long deleted = this.layout.cleanUp(this.admin, cleanupBefore);
		this.cleanupMillis = (System.nanoTime() - started) / 1e6;
		long wal1 = wal();
		this.vacuumAfterCleanupMillis = vacuum();
		long wal2 = wal();
		if (deleted >= 0 && deleted != sizes.jobs() && this.layout != FinishedLayout.COUNTERS) {
			throw new IllegalStateException(this.layout.label() + ": cleanup deleted " + deleted + " rows, not "
					+ sizes.jobs());
		}
		this.cleanupWal = (wal1 - wal0) / (double) sizes.jobs();
		this.vacuumAfterCleanupWal = (wal2 - wal1) / (double) sizes.jobs();
		context.progress("%-16s claim p50 %.0f → %.0f µs with %,d finished jobs kept; cleanup of %,d jobs %.0f ms, "
				+ "WAL %.1f B/job; vacuum after it %.0f ms, WAL %.1f B/job", this.layout.label(), this.claimEmpty,
				this.claimKept, this.keptJobs, sizes.jobs(), this.cleanupMillis, this.cleanupWal,
				this.vacuumAfterCleanupMillis, this.vacuumAfterCleanupWal);
	}

	/** Before the rounds: the claim with no finished job anywhere, after an unmeasured pass to warm up. */
	void probeEmpty(Profile.FinishedLayouts sizes, OffsetDateTime probeHour) throws Exception {
		claimProbe(sizes.probeJobs(), probeHour);
		this.claimEmpty = claimProbe(sizes.probeJobs(), probeHour);
		this.start = sizes();
	}

	private List<UUID> enqueue(int jobs) throws SQLException {
		List<UUID> ids = new ArrayList<>(jobs);
		try (Connection connection = this.pool.getConnection();
				PreparedStatement insert = connection.prepareStatement(FinishedLayout.INSERT)) {
			for (int start = 0; start < jobs; start += INSERT_CHUNK) {
				int size = Math.min(INSERT_CHUNK, jobs - start);
				UUID[] publicIds = new UUID[size];
				String[] payloads = new String[size];
				for (int i = 0; i < size; i++) {
					publicIds[i] = UUID.randomUUID();
					ids.add(publicIds[i]);
					payloads[i] = "{\"order\": " + (start + i) + ", \"customer\": \"c-" + this.random.nextInt(10_000)
							+ "\", \"action\": \"send-confirmation\"}";
				}
				insert.setArray(1, connection.createArrayOf("uuid", publicIds));
				insert.setArray(2, connection.createArrayOf("text", payloads));
				insert.executeUpdate();
			}
		}
		return ids;
	}

	/** Drains the queue with as many threads as the pool has connections; returns the jobs completed. */
	private long drain(HikariDataSource threads, OffsetDateTime finishedAt) throws Exception {
		AtomicLong done = new AtomicLong();
		AtomicReference<Exception> failure = new AtomicReference<>();
		List<Thread> workers = new ArrayList<>();
		for (int i = 0; i < threads.getMaximumPoolSize(); i++) {
			Thread worker = new Thread(() -> {
				try (Connection connection = threads.getConnection()) {
					done.addAndGet(claimAndComplete(connection, finishedAt, null));
				}
				catch (Exception ex) {
					failure.compareAndSet(null, ex);
				}
			}, "finished-layouts-" + i);
			worker.start();
			workers.add(worker);
		}
		for (Thread worker : workers) {
			worker.join();
		}
		if (failure.get() != null) {
			throw failure.get();
		}
		return done.get();
	}

	/**
	 * Claims and completes in one transaction per batch until a claim finds nothing; adds each
	 * claim statement's time to {@code claimNanos} when given.
	 */
	private long claimAndComplete(Connection connection, OffsetDateTime finishedAt, List<Long> claimNanos)
			throws SQLException {
		connection.setAutoCommit(false);
		long done = 0;
		try (PreparedStatement claim = connection.prepareStatement(FinishedLayout.CLAIM);
				PreparedStatement complete = connection.prepareStatement(this.layout.complete())) {
			while (true) {
				long started = System.nanoTime();
				claim.setString(1, BenchSchema.QUEUE);
				claim.setInt(2, CLAIM_BATCH);
				List<Long> ids = new ArrayList<>(CLAIM_BATCH);
				try (ResultSet rs = claim.executeQuery()) {
					while (rs.next()) {
						ids.add(rs.getLong(1));
						rs.getObject(2, UUID.class);
						rs.getString(3);
						rs.getString(4);
						rs.getInt(5);
					}
				}
				catch (SQLException ex) {
					// A row that a concurrent completion moved to another partition is not skipped: its
					// lock fails with a serialization failure, and the claim must be run again.
					if (!"40001".equals(ex.getSQLState())) {
						throw ex;
					}
					connection.rollback();
					this.claimRetries.incrementAndGet();
					continue;
				}
				if (claimNanos != null && !ids.isEmpty()) {
					claimNanos.add(System.nanoTime() - started);
				}
				if (ids.isEmpty()) {
					connection.commit();
					return done;
				}
				Array array = connection.createArrayOf("bigint", ids.toArray());
				complete.setObject(1, finishedAt);
				complete.setArray(2, array);
				int completed = complete.executeUpdate();
				connection.commit();
				done += (this.layout == FinishedLayout.COUNTERS) ? ids.size() : completed;
			}
		}
		finally {
			connection.setAutoCommit(true);
		}
	}

	/** Enqueues {@code jobs}, vacuums, then claims them on one connection; the claim's p50 in µs. */
	private double claimProbe(int jobs, OffsetDateTime finishedAt) throws Exception {
		enqueue(jobs);
		vacuum();
		List<Long> nanos = new ArrayList<>();
		try (Connection connection = this.pool.getConnection()) {
			claimAndComplete(connection, finishedAt, nanos);
		}
		vacuum();
		this.keptJobs += jobs;
		return Profile.median(nanos.stream().map((n) -> n / 1e3).toList());
	}

	/** Finds finished jobs of the last round by public id, one statement each; p50 in µs. */
	private double findProbe() throws SQLException {
		List<UUID> sample = new ArrayList<>(this.lastRound);
		Collections.shuffle(sample, this.random);
		List<Double> micros = new ArrayList<>();
		try (PreparedStatement find = this.admin.prepareStatement(this.layout.findByPublicId())) {
			for (UUID id : sample.subList(0, Math.min(LOOKUPS, sample.size()))) {
				long started = System.nanoTime();
				for (int i = 1; i <= this.layout.findParameters(); i++) {
					find.setObject(i, id);
				}
				int found = 0;
				try (ResultSet rs = find.executeQuery()) {
					while (rs.next()) {
						found++;
					}
				}
				micros.add((System.nanoTime() - started) / 1e3);
				if (found != 1) {
					throw new IllegalStateException(this.layout.label() + ": job " + id + " found " + found + " times");
				}
			}
		}
		return Profile.median(micros);
	}

	/**
	 * Vacuums, then analyzes, the layout's tables; returns the vacuum's time in ms. The analyze is
	 * left out of the time: on a partitioned table it also samples every partition again for the
	 * parent's statistics, which autovacuum never gathers, and it removes nothing.
	 */
	private double vacuum() throws SQLException {
		String tables = String.join(", ", this.layout.vacuumed());
		try (Statement statement = this.admin.createStatement()) {
			long started = System.nanoTime();
			statement.execute("VACUUM " + tables);
			double millis = (System.nanoTime() - started) / 1e6;
			statement.execute("ANALYZE " + tables);
			return millis;
		}
	}

	private void checkpoint() {
		try (Statement statement = this.admin.createStatement()) {
			statement.execute("CHECKPOINT");
		}
		catch (SQLException ex) {
			// Needs superuser or pg_checkpoint; without it a checkpoint may land in a measured window.
		}
	}

	private long wal() throws SQLException {
		return single("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint");
	}

	private long single(String sql) throws SQLException {
		return FinishedLayout.count(this.admin, sql);
	}

	/** Heap and index bytes of the layout's tables (partitions included, partitioned parents hold none). */
	private Sizes sizes() throws SQLException {
		try (Statement statement = this.admin.createStatement(); ResultSet rs = statement.executeQuery("""
				SELECT coalesce(sum(pg_relation_size(c.oid)) FILTER (WHERE c.relkind = 'r'), 0),
				       coalesce(sum(pg_relation_size(c.oid)) FILTER (WHERE c.relkind = 'i'), 0)
				FROM pg_class c
				WHERE c.relnamespace = current_schema()::text::regnamespace AND c.relname LIKE 'fl\\_%'""")) {
			rs.next();
			return new Sizes(rs.getLong(1), rs.getLong(2));
		}
	}

	Figures figures(Profile.FinishedLayouts sizes) {
		long jobs = (long) sizes.jobs() * sizes.rounds();
		List<Double> rates = this.drainRates;
		return new Figures(Profile.median(rates), Collections.min(rates), Collections.max(rates),
				Profile.median(this.enqueueWal), Profile.median(this.completionWal), Profile.median(this.vacuumWal),
				this.vacuumAfterDrainMillis,
				(this.end.heap() - this.start.heap()) / (double) jobs,
				(this.end.index() - this.start.index()) / (double) jobs, this.hotBytes / 1e6, this.claimEmpty,
				this.claimKept, this.find, this.cleanupMillis, this.cleanupWal, this.vacuumAfterCleanupMillis,
				this.vacuumAfterCleanupWal);
	}

	record Figures(double drainMedian, double drainMin, double drainMax, double enqueueWal, double completionWal,
			double vacuumWal, double vacuumAfterDrainMillis, double heap, double index, double hotMegabytes, double claimEmpty, double claimKept,
			double find, double cleanupMillis, double cleanupWal, double vacuumAfterCleanupMillis,
			double vacuumAfterCleanupWal) {
	}

	@Override
	public void close() {
		try {
			this.admin.close();
		}
		catch (SQLException ex) {
			// The schema goes anyway.
		}
		this.schema.close();
	}

	private record Sizes(long heap, long index) {
	}

}
