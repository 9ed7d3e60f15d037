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
import dev.pgqueue.engine.JobPoller;
import dev.pgqueue.engine.QueueMaintenance;
import dev.pgqueue.metrics.QueueStats;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Reads the queues for the dashboard: their jobs by state from {@link JobAdmin#counts()}, the age
 * of their oldest due job from the stats reader, pauses, and this application's pollers.
 *
 * <p>The rate is how many more jobs are completed or failed than a reading up to a minute earlier,
 * per second. Readings are shared by everyone looking, so any open page keeps the rate current. It
 * counts the jobs of every instance (they are rows), not only this one's; pruning finished rows in
 * between makes a reading useless, and the rate is then not shown until the pruned reading ages out.
 */
final class QueueSummaries {

	static final Duration RATE_WINDOW = Duration.ofMinutes(1);

	private static final long MIN_READING_GAP_NANOS = Duration.ofSeconds(1).toNanos();

	private final JobAdmin admin;

	private final ObjectProvider<QueueMaintenance> maintenance;

	private final ObjectProvider<JobPoller> pollers;

	private final LongSupplier nanoTime;

	private final Deque<Reading> readings = new ArrayDeque<>();

	QueueSummaries(JobAdmin admin, ObjectProvider<QueueMaintenance> maintenance, ObjectProvider<JobPoller> pollers) {
		this(admin, maintenance, pollers, System::nanoTime);
	}

	QueueSummaries(JobAdmin admin, ObjectProvider<QueueMaintenance> maintenance, ObjectProvider<JobPoller> pollers,
			LongSupplier nanoTime) {
		this.admin = admin;
		this.maintenance = maintenance;
		this.pollers = pollers;
		this.nanoTime = nanoTime;
	}

	/** Every queue that has jobs, is paused or is polled here, by name. */
	List<QueueSummary> read() {
		Map<String, Map<JobState, Long>> counts = this.admin.counts();
		Set<String> paused = this.admin.pausedQueues();
		QueueMaintenance services = this.maintenance.getIfAvailable();
		Map<String, QueueStats> stats = (services != null) ? services.lastStats() : Map.of();
		Map<String, JobPoller> polled = new HashMap<>();
		this.pollers.orderedStream().forEach((poller) -> polled.put(poller.settings().name(), poller));
		Map<String, Double> rates = rates(counts);

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
					count(states, JobState.RUNNING), count(states, JobState.FAILED), rates.get(queue),
					paused.contains(queue),
					(poller != null) ? poller.settings().mode().name().toLowerCase(Locale.ROOT) : null,
					(poller != null) ? poller.busySlots() : null,
					(poller != null) ? poller.settings().concurrency() : null));
		}
		return summaries;
	}

	/** Records this reading of finished jobs and compares it with the oldest one in the window. */
	private synchronized Map<String, Double> rates(Map<String, Map<JobState, Long>> counts) {
		long now = this.nanoTime.getAsLong();
		Map<String, Long> finished = new HashMap<>();
		counts.forEach((queue, states) -> finished.put(queue,
				count(states, JobState.COMPLETED) + count(states, JobState.FAILED)));
		while (this.readings.size() > 1 && now - this.readings.peekFirst().nanos() > RATE_WINDOW.toNanos()) {
			this.readings.removeFirst();
		}
		Reading oldest = this.readings.peekFirst();
		Reading latest = this.readings.peekLast();
		if (latest == null || now - latest.nanos() >= MIN_READING_GAP_NANOS) {
			this.readings.addLast(new Reading(now, finished));
		}
		if (oldest == null || now - oldest.nanos() < MIN_READING_GAP_NANOS) {
			return Map.of();
		}
		double seconds = (now - oldest.nanos()) / 1e9;
		Map<String, Double> rates = new HashMap<>();
		finished.forEach((queue, total) -> {
			long before = oldest.finished().getOrDefault(queue, 0L);
			if (total >= before) {
				rates.put(queue, (total - before) / seconds);
			}
		});
		return rates;
	}

	private static long count(Map<JobState, Long> states, JobState state) {
		@Nullable Long count = states.get(state);
		return (count != null) ? count : 0;
	}

	private record Reading(long nanos, Map<String, Long> finished) {
	}

}
