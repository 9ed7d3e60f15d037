package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.pgqueue.QueueAssignment;
import dev.pgqueue.engine.settings.QueueSettings;

/**
 * How long a dead member's buckets wait: worker processes with bucket assignment share the
 * buckets; one that does not lead is killed with {@code SIGKILL}, and jobs are enqueued into every
 * bucket at once. Measured from the kill: until every bucket is owned by a live member (read from
 * the coordinator's tables), and until every job, those in the dead member's buckets included, is
 * done. Tried at each of the profile's heartbeat intervals, beside the bound the coordinator
 * promises (a dead member's buckets move within five heartbeats of its last one).
 */
final class RebalanceWorkload implements Workload {

	private static final Duration SETTLE_TIMEOUT = Duration.ofMinutes(1);

	@Override
	public String name() {
		return "rebalance";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		Profile.Buckets sizes = context.profile().buckets();
		List<Result> results = new ArrayList<>();
		try (BenchSchema schema = context.database().createSchema("rebalance");
				Connection observer = context.database().connect()) {
			schema.bucketClaims();
			for (Duration heartbeat : sizes.rebalanceHeartbeats()) {
				List<Double> owned = new ArrayList<>();
				List<Double> done = new ArrayList<>();
				for (int round = 0; round < sizes.rebalanceRounds(); round++) {
					double[] times = kill(context, schema, observer, heartbeat);
					owned.add(times[0]);
					done.add(times[1]);
					context.progress("heartbeat %d ms, round %d: buckets owned by live members %.2f s, jobs done "
							+ "%.2f s after the kill", heartbeat.toMillis(), round + 1, times[0], times[1]);
				}
				double bound = 5 * heartbeat.toMillis() / 1000.0;
				String variant = sizes.rebalanceProcesses() + " processes, one killed, heartbeat "
						+ heartbeat.toMillis() + " ms";
				results.add(new Result(name(), variant, "kill to buckets owned by live members", "s",
						Profile.median(owned), bound, "bound (5 heartbeats)", false, null));
				results.add(new Result(name(), variant, "kill to their jobs done", "s", Profile.median(done), bound,
						"bound (5 heartbeats)", false, null));
				context.progress("heartbeat %d ms: median of %d, owned %.2f s %s, done %.2f s %s (bound %.1f s)",
						heartbeat.toMillis(), owned.size(), Profile.median(owned), rounds(owned), Profile.median(done),
						rounds(done), bound);
			}
		}
		return results;
	}

	/** One kill; returns seconds until the buckets are owned by live members and until the jobs are done. */
	private static double[] kill(Context context, BenchSchema schema, Connection observer, Duration heartbeat)
			throws Exception {
		Profile.Buckets sizes = context.profile().buckets();
		schema.truncate();
		schema.resetCoordination();
		List<QueueWorkerProcess> workers = new ArrayList<>();
		try {
			for (int i = 0; i < sizes.rebalanceProcesses(); i++) {
				workers.add(QueueWorkerProcess.start(context.database(), schema, QueueAssignment.BUCKETS, heartbeat,
						ScalingWorkload.CONCURRENCY, ScalingWorkload.BATCH_SIZE, ScalingWorkload.POLL_INTERVAL));
			}
			awaitShares(workers);
			String leader = single(observer, "SELECT leader FROM " + schema.name().qualify("pgqueue_leaders")
					+ " WHERE queue = '" + BenchSchema.QUEUE + "'");
			QueueWorkerProcess victim = workers.stream()
				.filter((worker) -> !worker.owner().equals(leader))
				.reduce((a, b) -> b)
				.orElseThrow();
			long killed = System.nanoTime();
			victim.kill();
			schema.insertAvailable(sizes.rebalanceJobs());
			String orphaned = "SELECT count(*) FROM " + schema.name().qualify("pgqueue_buckets") + " b WHERE b.queue = '"
					+ BenchSchema.QUEUE + "' AND (b.owner = ? OR b.next_owner = ?)";
			String left = "SELECT 1 FROM " + schema.table() + " WHERE queue = '" + BenchSchema.QUEUE
					+ "' AND state = 'available' LIMIT 1";
			double ownedAt = Double.NaN;
			double doneAt = Double.NaN;
			long deadline = killed + Drains.TIMEOUT.toNanos();
			try (PreparedStatement orphans = observer.prepareStatement(orphaned);
					PreparedStatement remaining = observer.prepareStatement(left)) {
				orphans.setString(1, victim.owner());
				orphans.setString(2, victim.owner());
				while (Double.isNaN(ownedAt) || Double.isNaN(doneAt)) {
					long now = System.nanoTime();
					if (Double.isNaN(ownedAt) && count(orphans) == 0) {
						ownedAt = (now - killed) / 1e9;
					}
					if (Double.isNaN(doneAt)) {
						try (ResultSet rs = remaining.executeQuery()) {
							if (!rs.next()) {
								doneAt = (now - killed) / 1e9;
							}
						}
					}
					if (now > deadline) {
						throw new IllegalStateException("The dead member's buckets did not move in " + Drains.TIMEOUT);
					}
					Drains.sleep(5);
				}
			}
			return new double[] { ownedAt, doneAt };
		}
		finally {
			workers.forEach(QueueWorkerProcess::close);
		}
	}

	/** Waits until every worker claims from a share of the buckets and together they claim from all. */
	static void awaitShares(List<QueueWorkerProcess> workers) {
		long deadline = System.nanoTime() + SETTLE_TIMEOUT.toNanos();
		while (true) {
			int owned = 0;
			boolean each = true;
			for (QueueWorkerProcess worker : workers) {
				owned += worker.buckets();
				each &= worker.buckets() > 0;
			}
			if (each && owned == QueueSettings.DEFAULT_BUCKETS) {
				return;
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Workers claimed from " + owned + " buckets after " + SETTLE_TIMEOUT);
			}
			Drains.sleep(10);
		}
	}

	private static long count(PreparedStatement statement) throws SQLException {
		try (ResultSet rs = statement.executeQuery()) {
			rs.next();
			return rs.getLong(1);
		}
	}

	private static String single(Connection connection, String sql) throws SQLException {
		try (var statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
			if (!rs.next()) {
				throw new IllegalStateException("No leader yet: " + sql);
			}
			return rs.getString(1);
		}
	}

	private static String rounds(List<Double> figures) {
		return figures.stream().map((f) -> String.format(Locale.ROOT, "%.2f", f)).toList().toString();
	}

}
