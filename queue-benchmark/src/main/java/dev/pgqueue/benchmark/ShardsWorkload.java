package dev.pgqueue.benchmark;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.embedded.EmbeddedPostgresServer;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.shards.ShardLayout;
import dev.pgqueue.engine.shards.ShardWatch;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.SchemaName;

/**
 * What spreading queues over shards costs each server, and what routing costs the client. Three
 * PostgreSQL servers of the workload's own (embedded clusters on this machine, so that each one's CPU
 * time can be read apart from the others'), each holding a backlog of the same number of no-op jobs:
 * with 1, 2 and then 3 shards, every shard's backlog is drained at once by one engine over them, built
 * as the starter builds a sharded application's ({@code QueueEngine.builder().shard(...)}), with the
 * queue's poller on each shard at the queue defaults (transactional), and each server's jobs per
 * CPU-second are compared with the one-shard figure; the raw SQL drain of the first server is
 * the baseline. The order of the shard counts alternates between rounds.
 *
 * <p>The router: the CPU time a thread spends choosing a shard for a keyed job (its slot, the shard's
 * health) with each shard's client doing nothing, against the client CPU time of a whole enqueue on one
 * server.
 *
 * <p>What a 2-core machine cannot show: three servers and the engines share its two cores, so the
 * jobs per second of all shards together cannot grow with the shards here; the figure that carries to
 * servers of their own is each server's jobs per CPU-second.
 */
final class ShardsWorkload implements Workload {

	static final int SHARDS = 3;

	private static final int CONCURRENCY = QueueSettings.DEFAULT_CONCURRENCY;

	private static final int ROUTED = 1_000_000;

	@Override
	public String name() {
		return "shards";
	}

	@Override
	public List<Result> run(Context context) throws Exception {
		Profile profile = context.profile();
		// Large enough for each server's CPU time to span a hundred clock ticks or so.
		int perShard = Math.max(2_000, profile.warmUpJobs() * 40);
		Duration cap = profile.drainTimeCap().multipliedBy(8);
		List<EmbeddedPostgresServer> servers = new ArrayList<>();
		List<BenchSchema> schemas = new ArrayList<>();
		List<HikariDataSource> pools = new ArrayList<>();
		try {
			for (int i = 0; i < SHARDS; i++) {
				EmbeddedPostgresServer server = EmbeddedPostgresServer.start();
				servers.add(server);
				BenchSchema schema = new BenchDatabase(server.jdbcUrl("postgres"), null, null).createSchema("shard");
				schemas.add(schema);
				pools.add(schema.pool("shard", CONCURRENCY + 3));
				DrainWorkload.warmUp(schema, profile);
			}
			context.progress("%d PostgreSQL servers started (embedded clusters), %,d jobs a shard", SHARDS, perShard);
			QueueSettings settings = QueueSettings.defaults(BenchSchema.QUEUE).withMode(QueueMode.TRANSACTIONAL);
			Map<Integer, List<List<Double>>> figures = new LinkedHashMap<>();
			List<Double> raw = new ArrayList<>();
			for (int round = 0; round < profile.rounds(); round++) {
				raw.add(rawPerCpuSecond(servers.get(0), schemas.get(0), pools.get(0), perShard, cap));
				List<Integer> counts = (round % 2 == 0) ? List.of(1, 2, 3) : List.of(3, 2, 1);
				for (int shards : counts) {
					List<Double> perServer = drainTogether(servers.subList(0, shards), schemas.subList(0, shards),
							pools.subList(0, shards), settings, perShard, cap);
					figures.computeIfAbsent(shards, (k) -> new ArrayList<>()).add(perServer);
					context.progress("round %d, %d shard(s): jobs per server CPU-second %s", round + 1, shards,
							perServer.stream().map((value) -> String.format("%,.0f", value)).toList());
				}
			}
			List<Result> results = new ArrayList<>();
			double rawMedian = Profile.median(raw);
			double oneShard = Profile.median(figures.get(1).stream().map((perServer) -> perServer.get(0)).toList());
			for (int shards = 1; shards <= SHARDS; shards++) {
				for (int shard = 0; shard < shards; shard++) {
					int index = shard;
					List<Double> rounds = figures.get(shards).stream().map((perServer) -> perServer.get(index)).toList();
					double median = Profile.median(rounds);
					String variant = shards + " shard" + ((shards > 1) ? "s" : "") + ", server s" + (shard + 1);
					results.add(Result.higher(name(), variant, "jobs per server CPU-second", "jobs/CPU-s", median,
							rawMedian, null));
					if (shards > 1) {
						results.add(new Result(name(), variant, "jobs per server CPU-second", "jobs/CPU-s", median, oneShard,
								"1 shard", true, Target.ratioAtLeast(0.9)));
					}
					context.progress("%s: %,.0f jobs per server CPU-second, %s of one shard's (rounds %s)", variant, median,
							String.format("%.2f", median / oneShard), Profile.rounds(rounds));
				}
			}
			results.add(router(context, pools, schemas.get(0)));
			return results;
		}
		finally {
			pools.forEach(HikariDataSource::close);
			schemas.forEach(BenchSchema::close);
			servers.forEach(EmbeddedPostgresServer::close);
		}
	}

	/** Jobs per CPU-second of the first server while the raw SQL loop drains its backlog alone. */
	private static double rawPerCpuSecond(EmbeddedPostgresServer server, BenchSchema schema, DataSource pool,
			int jobs, Duration cap) {
		schema.truncate();
		schema.loadAvailable(jobs);
		long pid = server.postmasterPid();
		double before = CpuTimes.serverTree(pid);
		// The batch pgqueue's adaptive batches reach under a backlog.
		Drains.Drained drained = Drains.raw(schema, pool, QueueMode.TRANSACTIONAL, CONCURRENCY,
				QueueSettings.DEFAULT_MAX_BATCH_SIZE, jobs, null, Long.MAX_VALUE, cap);
		return drained.finished() / (CpuTimes.serverTree(pid) - before);
	}

	/**
	 * Each server's jobs per CPU-second while one engine over them all, built as a sharded application's,
	 * drains every shard's backlog at once with the queue's poller on each shard; a server's figure is
	 * taken when its own backlog is done.
	 */
	private static List<Double> drainTogether(List<EmbeddedPostgresServer> servers, List<BenchSchema> schemas,
			List<HikariDataSource> pools, QueueSettings settings, int jobs, Duration cap) {
		Map<String, DataSource> shardPools = new LinkedHashMap<>();
		Map<String, SchemaName> shardSchemas = new LinkedHashMap<>();
		Map<String, AtomicLong> handled = new LinkedHashMap<>();
		for (int i = 0; i < servers.size(); i++) {
			String shard = "s" + (i + 1);
			schemas.get(i).truncate();
			schemas.get(i).loadAvailable(jobs);
			shardPools.put(shard, pools.get(i));
			shardSchemas.put(shard, schemas.get(i).name());
			handled.put(shard, new AtomicLong());
		}
		try (PgqueueEngine bench = new PgqueueEngine(pools.get(0), schemas.get(0).name(), settings,
				DrainWorkload.deletes(QueueMode.TRANSACTIONAL), QueueMetrics.NONE,
				(job) -> handled.get(job.shard()).incrementAndGet())) {
			QueueEngine engine = bench.overShards(shardPools, shardSchemas);
			double[] before = new double[servers.size()];
			for (int i = 0; i < servers.size(); i++) {
				before[i] = CpuTimes.serverTree(servers.get(i).postmasterPid());
			}
			Double[] perServer = new Double[servers.size()];
			long deadline = System.nanoTime() + cap.toNanos();
			// The queue's poller on every shard, as the other drains run pgqueue: the engine's background
			// services cost CPU by the second, not by the job, and would weigh more on the drains that the
			// shared cores slow down.
			engine.databases().forEach((database) -> database.newPoller(BenchSchema.QUEUE, null).start());
			int left = servers.size();
			while (left > 0) {
				for (int i = 0; i < servers.size(); i++) {
					boolean late = System.nanoTime() > deadline;
					if (perServer[i] == null && (late || handled.get("s" + (i + 1)).get() >= jobs)) {
						// The last outcomes commit after their handlers return; only committed ones count.
						long unfinished = schemas.get(i).unfinished();
						if (unfinished == 0 || late) {
							perServer[i] = (jobs - unfinished)
									/ (CpuTimes.serverTree(servers.get(i).postmasterPid()) - before[i]);
							left--;
						}
					}
				}
				Drains.sleep(1);
			}
			return List.of(perServer);
		}
	}

	/**
	 * The client CPU time of routing a keyed job (its slot, the shard's health) with each shard's own
	 * client doing nothing, against that of a whole enqueue through one shard's client.
	 */
	private Result router(Context context, List<HikariDataSource> pools, BenchSchema first) {
		Map<String, String> names = new LinkedHashMap<>();
		Map<String, DataSource> dataSources = new LinkedHashMap<>();
		for (int i = 0; i < pools.size(); i++) {
			names.put("s" + (i + 1), null);
			dataSources.put("s" + (i + 1), pools.get(i));
		}
		ShardLayout layout = ShardLayout.of(names);
		UUID id = UUID.randomUUID();
		JobClient nothing = new JobClient() {

			@Override
			public UUID enqueue(JobRequest request) {
				return id;
			}

			@Override
			public List<UUID> enqueueAll(List<JobRequest> requests) {
				return requests.stream().map((request) -> id).toList();
			}

		};
		List<JobRequest> requests = new ArrayList<>();
		for (int i = 0; i < 10_000; i++) {
			requests.add(JobRequest.of(BenchSchema.KIND, null).shardKey("tenant-" + i));
		}
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		double routerMicros;
		try (ShardWatch watch = new ShardWatch(dataSources, Duration.ofMillis(200), Duration.ofSeconds(1))) {
			watch.start();
			JobClient router = layout.client(dataSources::get, (shard) -> nothing, watch, false, (call) -> {
			});
			for (int i = 0; i < ROUTED / 5; i++) {
				router.enqueue(requests.get(i % requests.size()));
			}
			long before = threads.getCurrentThreadCpuTime();
			for (int i = 0; i < ROUTED; i++) {
				router.enqueue(requests.get(i % requests.size()));
			}
			routerMicros = (threads.getCurrentThreadCpuTime() - before) / 1_000.0 / ROUTED;
		}
		first.truncate();
		int enqueues = 5_000;
		double enqueueMicros;
		try (PgqueueEngine engine = new PgqueueEngine(pools.get(0), first.name(),
				QueueSettings.defaults(BenchSchema.QUEUE), true, QueueMetrics.NONE, (job) -> {
				})) {
			JobClient client = engine.client(pools.get(0));
			for (int i = 0; i < enqueues / 5; i++) {
				client.enqueue(JobRequest.of(BenchSchema.KIND, null).queue(BenchSchema.QUEUE));
			}
			long before = threads.getCurrentThreadCpuTime();
			for (int i = 0; i < enqueues; i++) {
				client.enqueue(JobRequest.of(BenchSchema.KIND, null).queue(BenchSchema.QUEUE));
			}
			enqueueMicros = (threads.getCurrentThreadCpuTime() - before) / 1_000.0 / enqueues;
		}
		context.progress("router: %.3f µs of client CPU per keyed job over %d shards; a whole enqueue on one server: "
				+ "%.1f µs", routerMicros, SHARDS, enqueueMicros);
		return new Result(name(), "router, keyed job, " + SHARDS + " shards", "client CPU per job", "µs", routerMicros,
				enqueueMicros, "one enqueue's client CPU", false, Target.valueAtMost(5));
	}

}
