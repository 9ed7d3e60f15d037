package dev.pgqueue.autoconfigure.dashboard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobState;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.status.DatabaseStatus;
import dev.pgqueue.engine.status.EngineStatus;
import dev.pgqueue.engine.status.QueueStatus;
import dev.pgqueue.engine.status.QueueStatus.PollerStatus;
import dev.pgqueue.autoconfigure.dashboard.QueueSummary.KindRateUse;
import dev.pgqueue.autoconfigure.dashboard.QueueSummary.RateUse;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.metrics.QueueStats;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Reads the queues for the dashboard: their jobs by state from {@link JobAdmin#counts()} (with shards,
 * from the reading of each shard the Shards section shows), the jobs
 * finished in the last minute from {@link JobAdmin#finishedWithin}, the age of their oldest due job
 * from the stats reader, pauses, and this application's pollers.
 *
 * <p>The jobs are counted at most once per refresh interval, and everyone looking shares the count:
 * counting reads every row of the table. The jobs finished in the last minute are counted from their
 * rows' {@code finished_at}, so the first page shows them, and they cover every instance, not only
 * this one. Where this application deletes completed jobs as they finish ({@code retention.completed:
 * 0}) there are no rows to count, and the figure is not shown.
 */
final class QueueSummaries {

	static final Duration RATE_WINDOW = Duration.ofMinutes(1);

	private final JobAdmin admin;

	private final Supplier<Map<String, Map<JobState, Long>>> counts;

	private final ObjectProvider<QueueEngine> engine;

	private final LongSupplier nanoTime;

	private final long minReadingGapNanos;

	private @Nullable Counted lastCounted;

	private long lastCountedAt;

	/**
	 * @param counts the jobs by queue and state: the admin's, or with shards the sum of the reading the
	 * Shards section shows, so that a refresh does not count each shard's rows twice
	 * @param minReadingGap shortest time between two counts of the jobs; pages asking sooner share
	 * the last one
	 */
	QueueSummaries(JobAdmin admin, Supplier<Map<String, Map<JobState, Long>>> counts,
			ObjectProvider<QueueEngine> engine, Duration minReadingGap) {
		this(admin, counts, engine, minReadingGap, System::nanoTime);
	}

	QueueSummaries(JobAdmin admin, ObjectProvider<QueueEngine> engine, Duration minReadingGap, LongSupplier nanoTime) {
		this(admin, admin::counts, engine, minReadingGap, nanoTime);
	}

	private QueueSummaries(JobAdmin admin, Supplier<Map<String, Map<JobState, Long>>> counts,
			ObjectProvider<QueueEngine> engine, Duration minReadingGap, LongSupplier nanoTime) {
		this.admin = admin;
		this.counts = counts;
		this.engine = engine;
		this.minReadingGapNanos = minReadingGap.toNanos();
		this.nanoTime = nanoTime;
	}

	/** Every queue that has jobs, is paused or is polled here, by name. */
	List<QueueSummary> read() {
		Counted counted = count();
		Map<String, Map<JobState, Long>> counts = counted.counts();
		Set<String> paused = this.admin.pausedQueues();
		QueueEngine current = this.engine.getIfAvailable();
		EngineStatus status = (current != null) ? current.status() : null;
		// Over shards, no one shard's readings stand for all.
		DatabaseStatus database = (status != null && !status.sharded()) ? status.database() : null;
		Map<String, QueueStats> stats = new HashMap<>();
		Map<String, PollerStatus> polled = new HashMap<>();
		if (database != null) {
			database.queues().values().forEach((queue) -> {
				if (queue.stats() != null) {
					stats.put(queue.name(), queue.stats());
				}
				if (queue.poller() != null) {
					polled.put(queue.name(), queue.poller());
				}
			});
		}
		boolean rowsDeleted = database != null && database.deletesCompleted();

		Set<String> queues = new TreeSet<>(counts.keySet());
		queues.addAll(paused);
		queues.addAll(polled.keySet());
		List<QueueSummary> summaries = new ArrayList<>();
		for (String queue : queues) {
			Map<JobState, Long> states = counts.getOrDefault(queue, Map.of());
			QueueStats queueStats = stats.get(queue);
			PollerStatus poller = polled.get(queue);
			summaries.add(new QueueSummary(queue, count(states, JobState.AVAILABLE),
					(queueStats != null) ? queueStats.oldestAvailableAge() : null, count(states, JobState.SCHEDULED),
					count(states, JobState.RUNNING), count(states, JobState.FAILED),
					rowsDeleted ? null : counted.finished().getOrDefault(queue, 0L), paused.contains(queue),
					(poller != null) ? mode(poller) : null,
					(poller != null) ? poller.busyWorkers() : null,
					(poller != null) ? poller.settings().concurrency() : null, rateUse(poller)));
		}
		return summaries;
	}

	/**
	 * Counts the jobs, and those finished in the last minute, at most once per {@code minReadingGap},
	 * however many pages ask: the count reads every row of the table.
	 */
	private synchronized Counted count() {
		long now = this.nanoTime.getAsLong();
		Counted last = this.lastCounted;
		if (last != null && now - this.lastCountedAt < this.minReadingGapNanos) {
			return last;
		}
		Counted counted = new Counted(this.counts.get(), this.admin.finishedWithin(RATE_WINDOW));
		this.lastCounted = counted;
		this.lastCountedAt = now;
		return counted;
	}

	/** How the queue runs here: its mode, and whether it takes its keys in turn. */
	private static String mode(PollerStatus poller) {
		String mode = poller.settings().mode().name().toLowerCase(Locale.ROOT);
		return (poller.settings().fairness() != null) ? mode + ", fair across keys" : mode;
	}

	/** The queue's rate limit and its use, when it has one and this application polls it. */
	private static @Nullable RateUse rateUse(@Nullable PollerStatus poller) {
		if (poller == null) {
			return null;
		}
		RateLimit perKey = poller.settings().perKeyRateLimit();
		if (poller.rate() == null && poller.kindRates().isEmpty() && perKey == null) {
			return null;
		}
		List<KindRateUse> kinds = new ArrayList<>();
		poller.kindRates().forEach((kind, use) -> kinds.add(new KindRateUse(kind, use.used(), use.limit(), use.heldFor())));
		QueueStatus.RateUse queue = poller.rate();
		return new RateUse((queue != null) ? queue.used() : 0, (queue != null) ? queue.limit() : null,
				(queue != null) ? queue.heldFor() : Duration.ZERO, kinds, perKey, poller.keysHeld());
	}

	private static long count(Map<JobState, Long> states, JobState state) {
		@Nullable Long count = states.get(state);
		return (count != null) ? count : 0;
	}

	private record Counted(Map<String, Map<JobState, Long>> counts, Map<String, Long> finished) {
	}

}
