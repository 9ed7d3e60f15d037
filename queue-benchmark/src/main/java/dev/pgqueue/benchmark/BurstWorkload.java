package dev.pgqueue.benchmark;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgqueue.QueueAssignment;
import dev.pgqueue.QueueMode;
import dev.pgqueue.benchmark.RawQueue.RawJob;
import dev.pgqueue.engine.buckets.BucketScope;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.sql.JobStatements;
import dev.pgqueue.metrics.QueueMetrics;
import org.postgresql.PGConnection;


/**
 * Workload 6: a burst of jobs all due at the same instant (the nightly-renewals case), drained by
 * several pollers at once, as if by as many application instances: how long each claim takes while
 * they compete, and how long the burst takes to drain from its common run-at.
 *
 * <p>The burst is enqueued ahead, {@code scheduled} with a run-at some seconds away, and made
 * available by the engine's promoter (once a second) as it falls due, as in production, with or
 * without jitter (each run-at spread over the profile's jitter); or it lands at once with one commit,
 * which shows the claims alone. Shared claims or bucket assignment. Each pgqueue drain has its raw
 * baseline in the same round: as many loops on the same statements and the same promoter, which
 * after an empty claim wait for a notification as the engine's pollers do; for buckets, each loop
 * claims from a fixed, disjoint slice of the buckets (the ideal a coordinator aims at). Pollers and
 * loops run, and bucket members have their shares, before the burst arrives; drain time counts from
 * when it fell due (its common run-at, or the commit).
 *
 * <p>Each poller runs in transactional mode with one slot and batches of 100 (deleting completed
 * jobs), and is woken by the promoter's notification.
 */
final class BurstWorkload implements Workload {

	static final int BATCH_SIZE = 100;

	private static final Duration SETTLE_TIMEOUT = Duration.ofMinutes(1);

	@Override
	public String name() {
		return "burst";
	}

	/**
	 * How the burst arrives and how it is claimed: all at once with one commit (what claims alone
	 * do with a burst), or enqueued ahead and promoted as it falls due, with or without jitter (what
	 * a scheduled burst meets in production, the promoter included); shared claims or buckets.
	 */
	enum Variant {

		AT_ONCE("shared, landing at once", false, false, false),
		AT_ONCE_BUCKETS("buckets, landing at once", false, false, true),
		AHEAD("shared, enqueued ahead", true, false, false),
		AHEAD_JITTERED("shared, enqueued ahead, jitter", true, true, false),
		AHEAD_BUCKETS("buckets, enqueued ahead", true, false, true);

		final String label;

		final boolean ahead;

		final boolean jittered;

		final boolean buckets;

		Variant(String label, boolean ahead, boolean jittered, boolean buckets) {
			this.label = label;
			this.ahead = ahead;
			this.jittered = jittered;
			this.buckets = buckets;
		}

	}

	@Override
	public List<Result> run(Context context) {
		Profile profile = context.profile();
		Profile.Buckets sizes = profile.buckets();
		int jobs = profile.burstJobs();
		int pollers = profile.burstPollers();
		Map<Variant, List<Drain>> pgqueue = new EnumMap<>(Variant.class);
		Map<Variant, List<Drain>> raw = new EnumMap<>(Variant.class);
		try (BenchSchema schema = context.database().createSchema("burst")) {
			schema.bucketClaims();
			// Transactional batches hold one connection each; coordinator heartbeats borrow one now and then.
			HikariDataSource pool = schema.pool("burst", 2 * pollers + 2);
			// Two: a stopped listener may hold its connection for a moment after the next one starts.
			HikariDataSource listener = schema.pool("burst-listen", 2);
			HikariDataSource promoter = schema.pool("burst-promote", 1);
			for (int round = 0; round < profile.rounds(); round++) {
				for (Variant variant : Variant.values()) {
					Duration jitter = variant.jittered ? sizes.burstJitter() : Duration.ZERO;
					Drain ours = pgqueue(context, schema, pool, listener, promoter, variant, jitter);
					Drain theirs = raw(context, schema, pool, promoter, variant, jitter);
					pgqueue.computeIfAbsent(variant, (v) -> new ArrayList<>()).add(ours);
					raw.computeIfAbsent(variant, (v) -> new ArrayList<>()).add(theirs);
					context.progress("round %d %-15s drain from due pgqueue %.2f s raw %.2f s   poll-cycle p99 "
							+ "pgqueue %.2f ms raw %.2f ms", round + 1, variant.label, ours.seconds(), theirs.seconds(),
							ours.p99(), theirs.p99());
				}
			}
		}
		List<Result> results = new ArrayList<>();
		for (Variant variant : Variant.values()) {
			List<Drain> ours = pgqueue.get(variant);
			List<Drain> theirs = raw.get(variant);
			String label = GrowthWorkload.label(jobs) + " due at once, " + pollers + " pollers b=" + BATCH_SIZE + ", "
					+ variant.label + (variant.jittered ? " " + seconds(sizes.burstJitter()) : "");
			results.add(Result.lower(name(), label, "poll-cycle p50", "ms", median(ours, Drain::p50),
					median(theirs, Drain::p50), null));
			results.add(Result.lower(name(), label, "poll-cycle p99", "ms", median(ours, Drain::p99),
					median(theirs, Drain::p99), null));
			results.add(Result.lower(name(), label, "drain time from due", "s", median(ours, Drain::seconds),
					median(theirs, Drain::seconds), null));
			context.progress("%-55s median of %d: drain pgqueue %.2f s %s raw %.2f s %s; p99 pgqueue %.2f ms %s raw "
					+ "%.2f ms %s", label, ours.size(), median(ours, Drain::seconds), spread(ours, Drain::seconds),
					median(theirs, Drain::seconds), spread(theirs, Drain::seconds), median(ours, Drain::p99),
					spread(ours, Drain::p99), median(theirs, Drain::p99), spread(theirs, Drain::p99));
		}
		return results;
	}

	private Drain pgqueue(Context context, BenchSchema schema, DataSource pool, DataSource listener,
			DataSource promoter, Variant variant, Duration jitter) {
		Profile profile = context.profile();
		int jobs = profile.burstJobs();
		schema.truncate();
		schema.resetCoordination();
		Latencies claims = new Latencies();
		QueueMetrics timing = new QueueMetrics() {
			@Override
			public void pollCycle(String queue, long nanos, int claimed) {
				// The raw side times only claims that found jobs too.
				if (claimed > 0) {
					claims.add(nanos);
				}
			}
		};
		QueueSettings settings = PgqueueEngine.settings(QueueMode.TRANSACTIONAL, 1, BATCH_SIZE, QueueSettings.DEFAULT_POLL_INTERVAL);
		if (variant.buckets) {
			settings = settings.withAssignment(QueueAssignment.BUCKETS);
		}
		AtomicLong handled = new AtomicLong();
		try (PgqueueEngine engine = new PgqueueEngine(pool, schema.name(), settings, true, timing,
				(job) -> handled.incrementAndGet())
			.withHeartbeatInterval(profile.buckets().heartbeat())) {
			JobPoller[] started = new JobPoller[profile.burstPollers()];
			for (int i = 0; i < started.length; i++) {
				started[i] = engine.poller();
				started[i].start();
			}
			engine.listen(listener, started);
			if (variant.buckets) {
				awaitBuckets(started);
			}
			long due = arrive(context, schema, variant, jitter);
			try (BurstPromoter promoting = variant.ahead ? new BurstPromoter(promoter, schema, due) : null) {
				Drains.awaitTrue(() -> handled.get() >= jobs, () -> "pgqueue ran " + handled.get() + " of " + jobs);
				Drains.awaitTrue(() -> schema.count("true") == 0, () -> schema.count("true") + " jobs left");
				return new Drain((System.nanoTime() - due) / 1e9, claims.percentileMillis(50),
						claims.percentileMillis(99));
			}
		}
	}

	/**
	 * Lets the burst arrive: enqueued ahead (the promoter makes it available as it falls due), or
	 * inserted available with one commit and announced as an enqueue announces it. Returns when, by
	 * {@link System#nanoTime()}, the jobs fell due.
	 */
	private static long arrive(Context context, BenchSchema schema, Variant variant, Duration jitter) {
		int jobs = context.profile().burstJobs();
		if (variant.ahead) {
			load(context, schema, jobs, jitter);
			return System.nanoTime();
		}
		schema.insertAvailable(jobs);
		long due = System.nanoTime();
		schema.execute("SELECT pg_notify('" + new JobStatements(schema.name()).channel + "', '" + BenchSchema.QUEUE
				+ "')");
		return due;
	}

	/**
	 * Loads the burst ahead of its run-at and returns when it falls due; says so when loading took
	 * longer than the lead.
	 */
	private static void load(Context context, BenchSchema schema, int jobs, Duration jitter) {
		Duration late = schema.loadScheduled(jobs, context.profile().buckets().burstLead(), jitter);
		if (late.toMillis() > 10) {
			context.progress("(loading took %d ms longer than the lead: the drain starts late)", late.toMillis());
		}
	}

	/** Waits until every poller has its share of the buckets. */
	static void awaitBuckets(JobPoller... pollers) {
		long deadline = System.nanoTime() + SETTLE_TIMEOUT.toNanos();
		while (true) {
			int owned = 0;
			boolean each = true;
			for (JobPoller poller : pollers) {
				int count = ((BucketScope) poller.scope()).buckets().length;
				owned += count;
				each &= count > 0;
			}
			if (each && owned == QueueSettings.DEFAULT_BUCKETS) {
				return;
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException(
						"Pollers owned " + owned + " buckets after " + SETTLE_TIMEOUT + ", some none");
			}
			Drains.sleep(10);
		}
	}

	private Drain raw(Context context, BenchSchema schema, DataSource pool, DataSource promoter, Variant variant,
			Duration jitter) throws IllegalStateException {
		Profile profile = context.profile();
		int jobs = profile.burstJobs();
		int loops = profile.burstPollers();
		schema.truncate();
		Latencies claims = new Latencies();
		AtomicLong finished = new AtomicLong();
		AtomicLong lastCommit = new AtomicLong();
		AtomicReference<Throwable> failure = new AtomicReference<>();
		CountDownLatch listening = new CountDownLatch(loops);
		CountDownLatch done = new CountDownLatch(loops);
		long deadline = System.nanoTime() + Drains.TIMEOUT.toNanos();
		String channel = new JobStatements(schema.name()).channel;
		long due = 0;
		BurstPromoter promoting = null;
		try {
			for (int i = 0; i < loops; i++) {
				Integer[] slice = variant.buckets ? slice(i, loops) : null;
				Thread loop = new Thread(() -> {
					try (Connection connection = pool.getConnection()) {
						try (Statement listen = connection.createStatement()) {
							listen.execute("LISTEN \"" + channel + "\"");
						}
						listening.countDown();
						RawQueue queue = new RawQueue(connection, schema.name());
						drainLocked(queue, slice, claims, finished, jobs, lastCommit, deadline);
						try (Statement unlisten = connection.createStatement()) {
							unlisten.execute("UNLISTEN *");
						}
						queue.close();
					}
					catch (Throwable ex) {
						failure.compareAndSet(null, ex);
						listening.countDown();
					}
					finally {
						done.countDown();
					}
				}, "raw-burst-" + i);
				loop.start();
			}
			listening.await();
			due = arrive(context, schema, variant, jitter);
			if (variant.ahead) {
				promoting = new BurstPromoter(promoter, schema, due);
			}
			if (!done.await(Drains.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
				throw new IllegalStateException("Raw burst drain did not finish in " + Drains.TIMEOUT);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
		finally {
			if (promoting != null) {
				promoting.close();
			}
		}
		if (failure.get() != null) {
			throw new IllegalStateException("Raw burst drain failed: " + failure.get(), failure.get());
		}
		return new Drain((lastCommit.get() - due) / 1e9, claims.percentileMillis(50), claims.percentileMillis(99));
	}

	/** Loop {@code index}'s fixed share of the buckets: a contiguous slice, disjoint from the others'. */
	static Integer[] slice(int index, int loops) {
		int from = index * QueueSettings.DEFAULT_BUCKETS / loops;
		int to = (index + 1) * QueueSettings.DEFAULT_BUCKETS / loops;
		Integer[] slice = new Integer[to - from];
		for (int b = from; b < to; b++) {
			slice[b - from] = b;
		}
		return slice;
	}

	/**
	 * Claim, delete, commit until every job of the burst is finished; after an empty claim, wait for
	 * a notification (at most the engine's 1 s poll interval) as the engine's pollers do; a slice of buckets is read one bucket after the other, each claim starting one
	 * bucket further on, as the engine's bucket scope reads its own.
	 */
	private static void drainLocked(RawQueue queue, Integer[] slice, Latencies claims, AtomicLong finished, long jobs,
			AtomicLong lastCommit, long deadline) throws Exception {
		Connection connection = queue.connection();
		connection.setAutoCommit(false);
		int rotation = 0;
		try {
			while (finished.get() < jobs && System.nanoTime() < deadline) {
				long start = System.nanoTime();
				List<RawJob> claimed;
				if (slice == null) {
					claimed = queue.claimLocked(BATCH_SIZE);
				}
				else {
					Integer[] order = new Integer[slice.length];
					int first = rotation++ % slice.length;
					for (int i = 0; i < slice.length; i++) {
						order[i] = slice[(first + i) % slice.length];
					}
					claimed = queue.claimLockedInBuckets(order, BATCH_SIZE);
				}
				if (claimed.isEmpty()) {
					connection.commit();
					connection.unwrap(PGConnection.class).getNotifications(1000);
					continue;
				}
				claims.add(System.nanoTime() - start);
				queue.deleteLocked(claimed);
				connection.commit();
				if (finished.addAndGet(claimed.size()) >= jobs) {
					lastCommit.set(System.nanoTime());
				}
			}
		}
		finally {
			connection.rollback();
			connection.setAutoCommit(true);
		}
	}

	private static double median(List<Drain> drains, java.util.function.ToDoubleFunction<Drain> figure) {
		return Profile.median(drains.stream().map(figure::applyAsDouble).toList());
	}

	/** Every round's figure, for the log. */
	private static String spread(List<Drain> drains, java.util.function.ToDoubleFunction<Drain> figure) {
		return drains.stream().map((d) -> String.format(Locale.ROOT, "%.2f", figure.applyAsDouble(d))).toList().toString();
	}

	private static String seconds(Duration duration) {
		return (duration.toMillis() % 1000 == 0) ? duration.toSeconds() + " s" : duration.toMillis() + " ms";
	}

	/**
	 * One drain of the burst.
	 *
	 * @param seconds from the common run-at until the last job's outcome committed
	 * @param p50 median claim statement, of claims that found jobs
	 * @param p99 99th percentile of the same
	 */
	record Drain(double seconds, double p50, double p99) {
	}

}
