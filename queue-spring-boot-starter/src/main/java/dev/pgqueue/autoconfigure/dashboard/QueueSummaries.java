package dev.pgqueue.autoconfigure.dashboard;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobState;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.maintenance.StatsReader;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.metrics.QueueStats;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Reads the queues for the dashboard: their jobs by state from {@link JobAdmin#counts()}, the age
 * of their oldest due job from the stats reader, pauses, and this application's pollers.
 *
 * <p>The jobs are counted at most once per refresh interval, and everyone looking shares the count:
 * counting reads every row of the table. The rate is how many more jobs are completed or failed than
 * in a count up to a minute earlier, per second, so any open page keeps it current. It counts the
 * jobs of every instance (they are rows), not only this one's; pruning finished rows in between
 * makes a count useless, and the rate is then not shown until the pruned count ages out.
 */
final class QueueSummaries {

	static final Duration RATE_WINDOW = Duration.ofMinutes(1);

	private final JobAdmin admin;

	private final ObjectProvider<QueueEngine> engine;

	private final LongSupplier nanoTime;

	private final long minReadingGapNanos;

	private final Deque<Reading> readings = new ArrayDeque<>();

	private Counted lastCounted;

	/**
	 * @param minReadingGap shortest time between two counts of the jobs; pages asking sooner share
	 * the last one
	 */
	QueueSummaries(JobAdmin admin, ObjectProvider<QueueEngine> engine, Duration minReadingGap) {
		this(admin, engine, minReadingGap, System::nanoTime);
	}

	QueueSummaries(JobAdmin admin, ObjectProvider<QueueEngine> engine, Duration minReadingGap, LongSupplier nanoTime) {
		this.admin = admin;
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
		StatsReader services = (current != null && current.processing()) ? current.statsReader() : null;
		Map<String, QueueStats> stats = (services != null) ? services.lastStats() : Map.of();
		Map<String, JobPoller> polled = new HashMap<>();
		if (current != null) {
			current.pollers().forEach((poller) -> polled.putIfAbsent(poller.settings().name(), poller));
		}

		Set<String> queues = new TreeSet<>(counts.keySet());
		queues.addAll(paused);
		queues.addAll(polled.keySet());
		List<QueueSummary> summaries = new ArrayList<>();
		for (String queue : queues) {
			Map<JobState, Long> states = counts.getOrDefault(queue, Map.of());
			QueueStats queueStats = stats.get(queue);
			JobPoller poller = polled.get(queue);
			summaries.add(new QueueSummary(queue, count(states, JobState.AVAILABLE),
					(queueStats != null) ? queueStats.oldestAvailableAge() : null, count(states, JobState.SCHEDULED),
					count(states, JobState.RUNNING), count(states, JobState.FAILED), counted.rates().get(queue),
					paused.contains(queue),
					(poller != null) ? poller.settings().mode().name().toLowerCase(Locale.ROOT) : null,
					(poller != null) ? poller.busySlots() : null,
					(poller != null) ? poller.settings().concurrency() : null));
		}
		return summaries;
	}

	/**
	 * Counts the jobs at most once per {@code minReadingGap}, however many pages ask: the count
	 * reads every row of the table. A new count is a new reading for the rate, compared with the
	 * oldest one in the window.
	 */
	private synchronized Counted count() {
		long now = this.nanoTime.getAsLong();
		Reading latest = this.readings.peekLast();
		if (latest != null && now - latest.nanos() < this.minReadingGapNanos) {
			return this.lastCounted;
		}
		Map<String, Map<JobState, Long>> counts = this.admin.counts();
		Map<String, Long> finished = new HashMap<>();
		counts.forEach((queue, states) -> finished.put(queue,
				count(states, JobState.COMPLETED) + count(states, JobState.FAILED)));
		while (!this.readings.isEmpty() && now - this.readings.peekFirst().nanos() > RATE_WINDOW.toNanos()) {
			this.readings.removeFirst();
		}
		Reading oldest = this.readings.peekFirst();
		this.readings.addLast(new Reading(now, finished));
		Map<String, Double> rates = new HashMap<>();
		if (oldest != null) {
			double seconds = (now - oldest.nanos()) / 1e9;
			finished.forEach((queue, total) -> {
				long before = oldest.finished().getOrDefault(queue, 0L);
				if (total >= before) {
					rates.put(queue, (total - before) / seconds);
				}
			});
		}
		this.lastCounted = new Counted(counts, rates);
		return this.lastCounted;
	}

	private static long count(Map<JobState, Long> states, JobState state) {
		@Nullable Long count = states.get(state);
		return (count != null) ? count : 0;
	}

	private record Reading(long nanos, Map<String, Long> finished) {
	}

	private record Counted(Map<String, Map<JobState, Long>> counts, Map<String, Double> rates) {
	}

}
