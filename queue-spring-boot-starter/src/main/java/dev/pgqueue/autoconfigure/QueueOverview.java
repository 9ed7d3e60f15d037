package dev.pgqueue.autoconfigure;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.ShardsPartlyFailedException;
import dev.pgqueue.autoconfigure.QueuesDescriptor.LockWaitsDescriptor;
import dev.pgqueue.autoconfigure.QueuesDescriptor.QueueDescriptor;
import dev.pgqueue.autoconfigure.QueuesDescriptor.ShardDescriptor;
import dev.pgqueue.autoconfigure.QueuesDescriptor.SignalsDescriptor;
import dev.pgqueue.autoconfigure.QueuesDescriptor.WritesDescriptor;
import dev.pgqueue.engine.DatabaseEngine;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.maintenance.StatsReader;
import dev.pgqueue.engine.poll.ClaimProgress;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.sql.MaintenanceRepository.LockWaits;
import dev.pgqueue.metrics.PollCycleAssessment;
import dev.pgqueue.metrics.QueueStats;
import org.jspecify.annotations.Nullable;

/**
 * Reads the queues for {@code GET /actuator/pgqueue}: the stats an engine that runs jobs last read,
 * the pauses, this application's pollers and their signals; with shards, each shard's own counts.
 */
final class QueueOverview {

	static final String READ_ONLY_REASON = "The endpoint's access is read-only, so Spring Boot does not map its "
			+ "write operations (retry, cancel, delete, pause, resume, retry-failed): they answer 404. Set "
			+ "management.endpoint.pgqueue.access=unrestricted where only trusted callers reach Actuator.";

	private final JobAdmin admin;

	private final @Nullable QueueEngine engine;

	private final boolean writable;

	QueueOverview(JobAdmin admin, @Nullable QueueEngine engine, boolean writable) {
		this.admin = admin;
		this.engine = engine;
		this.writable = writable;
	}

	QueuesDescriptor read() {
		// Only an engine that runs jobs reads stats, signals and lock waits.
		// Over shards, each shard's signals and lock waits are its own: none is shown for all.
		StatsReader services = (this.engine != null && this.engine.shards().names().isEmpty() && this.engine.processing())
				? this.engine.database().statsReader() : null;
		List<DatabaseEngine> engines = (this.engine != null) ? this.engine.databases() : List.of();
		Map<String, QueueStats> stats = stats(engines);
		Map<String, List<JobPoller>> pollers = new TreeMap<>();
		engines.forEach((each) -> each.pollers()
			.forEach((poller) -> pollers.computeIfAbsent(poller.settings().name(), (name) -> new ArrayList<>()).add(poller)));
		Set<String> paused = pausedQueues();
		Set<String> names = new TreeSet<>(stats.keySet());
		names.addAll(paused);
		names.addAll(pollers.keySet());
		Map<String, QueueDescriptor> queues = new TreeMap<>();
		for (String name : names) {
			ClaimProgress progress = (services != null) ? services.signals().get(name) : null;
			queues.put(name, queue(stats.get(name), pollers.getOrDefault(name, List.of()), paused.contains(name), progress));
		}
		LockWaitsDescriptor lockWaits = null;
		if (services != null) {
			LockWaits waits = services.lastLockWaits();
			lockWaits = new LockWaitsDescriptor(waits.waiting(), waits.applicationName());
		}
		Map<String, ShardDescriptor> shardDescriptors = (this.engine != null && !this.engine.shards().names().isEmpty())
				? ShardDescriptor.of(ShardReading.readAll(this.engine)) : null;
		return new QueuesDescriptor(queues, writes(), lockWaits, shardDescriptors);
	}

	/**
	 * The stats each engine that runs jobs last read, added up over the shards: jobs summed, the oldest
	 * available job's age the largest. Read from memory, so a shard that does not answer delays nothing.
	 */
	private static Map<String, QueueStats> stats(List<DatabaseEngine> engines) {
		Map<String, QueueStats> merged = new TreeMap<>();
		for (DatabaseEngine each : engines) {
			if (!each.processing()) {
				continue;
			}
			each.statsReader().lastStats().forEach((queue, stats) -> merged.merge(queue, stats,
					(a, b) -> new QueueStats(queue, a.available() + b.available(), a.scheduled() + b.scheduled(),
							a.running() + b.running(), (a.oldestAvailableAge().compareTo(b.oldestAvailableAge()) >= 0)
									? a.oldestAvailableAge() : b.oldestAvailableAge())));
		}
		return merged;
	}

	/**
	 * The queues paused on any shard that answers: one that does not leaves out only its own pauses,
	 * and the shards' part of the answer says which one that is.
	 */
	private Set<String> pausedQueues() {
		try {
			return this.admin.pausedQueues();
		}
		catch (ShardsPartlyFailedException ex) {
			Set<String> paused = new TreeSet<>();
			for (Object queues : ex.results().values()) {
				((Collection<?>) queues).forEach((queue) -> paused.add((String) queue));
			}
			return paused;
		}
	}

	/**
	 * Whether the write operations answer, and if not why they answer 404: a caller that posts to a
	 * read-only endpoint finds the reason where it reads the queues.
	 */
	private WritesDescriptor writes() {
		return new WritesDescriptor(this.writable, this.writable ? null : READ_ONLY_REASON);
	}

	/**
	 * One queue. With shards its pollers are one per shard: polled while any runs, their busy workers
	 * and concurrency added up.
	 */
	private static QueueDescriptor queue(@Nullable QueueStats stats, List<JobPoller> pollers, boolean paused,
			@Nullable ClaimProgress progress) {
		JobPoller poller = pollers.isEmpty() ? null : pollers.get(0);
		return new QueueDescriptor((stats != null) ? stats.available() : null,
				(stats != null) ? stats.oldestAvailableAge() : null, (stats != null) ? stats.scheduled() : null,
				(stats != null) ? stats.running() : null,
				(poller != null) ? pollers.stream().anyMatch(JobPoller::isRunning) : null,
				(poller != null) ? pollers.stream().mapToInt(JobPoller::busySlots).sum() : null,
				(poller != null) ? pollers.stream().mapToInt((each) -> each.settings().concurrency()).sum() : null,
				(poller != null) ? poller.settings().mode().name().toLowerCase(Locale.ROOT) : null, paused,
				(progress != null) ? signals(progress) : null);
	}

	/** The signals of a queue polled here: poll cycle, claims without progress, SLA. */
	private static SignalsDescriptor signals(ClaimProgress progress) {
		boolean sla = progress.sla() != null;
		return new SignalsDescriptor(PollCycleAssessment.of(progress.pollCycleP99()).label(),
				progress.pollCycleP99(), progress.jobsClaimed(), progress.unproductiveClaims(),
				sla ? (progress.slaSlipping() ? "slipping" : "met") : null, sla ? progress.slaMissed() : null);
	}

}
