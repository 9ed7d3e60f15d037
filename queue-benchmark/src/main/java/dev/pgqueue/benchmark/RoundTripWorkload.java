package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.metrics.QueueMetrics;

/**
 * Not a timing: counts the calls that wait on the server per job, on each path, to explain the
 * throughput ratios. Counted at the JDBC boundary, under Spring and Hikari, so that it sees what the
 * engine asks of the driver (savepoints included).
 */
final class RoundTripWorkload implements Workload {

	static final int CONCURRENCY = 2;

	static final int[] BATCH_SIZES = { 10, 100 };

	@Override
	public String name() {
		return "round-trips";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		int jobs = context.profile().roundTripJobs();
		List<Result> results = new ArrayList<>();
		try (BenchSchema schema = context.database().createSchema("trips")) {
			HikariDataSource pool = schema.pool("trips", CONCURRENCY + 2);
			CountingDataSource counting = new CountingDataSource(pool);
			for (QueueMode mode : DrainWorkload.MODES) {
				for (int batchSize : BATCH_SIZES) {
					schema.truncate();
					schema.loadAvailable(jobs);
					counting.reset();
					Drains.pgqueue(schema, counting, PgqueueEngine.settings(mode, CONCURRENCY, batchSize, QueueSettings.DEFAULT_POLL_INTERVAL),
							DrainWorkload.deletes(mode), 1, jobs, QueueMetrics.NONE, Drains.TIMEOUT);
					double pgqueue = (double) counting.total() / jobs;
					String pgqueueCalls = counting.byMethod().toString();
					schema.truncate();
					schema.loadAvailable(jobs);
					counting.reset();
					Drains.raw(schema, counting, mode, CONCURRENCY, batchSize, jobs, null, Long.MAX_VALUE,
							Drains.TIMEOUT);
					double raw = (double) counting.total() / jobs;
					results.add(record(context, "drain " + DrainWorkload.variant(mode, batchSize, CONCURRENCY), pgqueue,
							raw, pgqueueCalls, counting.byMethod().toString()));
				}
			}
			for (int batchSize : new int[] { 1, 100 }) {
				schema.truncate();
				counting.reset();
				try (PgqueueEngine engine = new PgqueueEngine(pool, schema.name(),
						PgqueueEngine.settings(QueueMode.TRANSACTIONAL, 1, 10, QueueSettings.DEFAULT_POLL_INTERVAL), true, QueueMetrics.NONE, (job) -> {
						})) {
					JobClient client = engine.client(counting);
					for (int done = 0; done < jobs; done += batchSize) {
						if (batchSize == 1) {
							client.enqueue(BenchSchema.KIND, new EnqueueWorkload.Payload(1));
						}
						else {
							List<JobRequest> requests = new ArrayList<>();
							for (int i = 0; i < batchSize; i++) {
								requests.add(JobRequest.of(BenchSchema.KIND, new EnqueueWorkload.Payload(1)));
							}
							client.enqueueAll(requests);
						}
					}
				}
				double pgqueue = (double) counting.total() / jobs;
				String pgqueueCalls = counting.byMethod().toString();
				counting.reset();
				try (Connection connection = counting.getConnection()) {
					RawQueue queue = new RawQueue(connection, schema.name());
					for (int done = 0; done < jobs; done += batchSize) {
						if (batchSize == 1) {
							queue.insertOne(UUID.randomUUID(), EnqueueWorkload.PAYLOAD_JSON);
						}
						else {
							queue.insertMany(batchSize, EnqueueWorkload.PAYLOAD_JSON);
						}
					}
					queue.close();
				}
				double raw = (double) counting.total() / jobs;
				results.add(record(context, (batchSize == 1) ? "enqueue one per transaction"
						: "enqueue " + batchSize + " per call", pgqueue, raw, pgqueueCalls, counting.byMethod().toString()));
			}
		}
		return results;
	}

	private Result record(Context context, String variant, double pgqueue, double raw, String pgqueueCalls,
			String rawCalls) {
		context.progress("%-32s pgqueue %5.2f per job %s   raw %5.2f per job %s", variant, pgqueue, pgqueueCalls, raw,
				rawCalls);
		return Result.lower(name(), variant, "round trips per job", "calls/job", pgqueue, raw, null);
	}

}
