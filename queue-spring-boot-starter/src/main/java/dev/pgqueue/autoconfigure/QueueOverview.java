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
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.sql.MaintenanceRepository.LockWaits;
import dev.pgqueue.engine.status.DatabaseStatus;
import dev.pgqueue.engine.status.EngineStatus;
import dev.pgqueue.engine.status.QueueStatus;
import dev.pgqueue.engine.status.QueueStatus.ClaimSignals;
import dev.pgqueue.engine.status.QueueStatus.PollerStatus;
import dev.pgqueue.metrics.PollCycleAssessment;
import dev.pgqueue.metrics.QueueStats;
import org.jspecify.annotations.Nullable;

/**
 * Reads the queues for {@code GET /actuator/pgqueue} from the engine's {@link QueueEngine#status() status}
 * (the stats it last read, its pollers and their signals) and the admin's pauses; with shards, each
 * shard's own counts.
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
		EngineStatus status = (this.engine != null) ? this.engine.status() : null;
		// Over shards, each shard's signals and lock waits are its own: none is shown for all.
		DatabaseStatus single = (status != null && !status.sharded() && status.processing()) ? status.database() : null;
		Map<String, QueueStats> stats = (status != null) ? status.stats() : Map.of();
		Map<String, List<PollerStatus>> pollers = new TreeMap<>();
		if (status != null) {
			status.databases().forEach((database) -> database.queues().values().stream()
				.filter((queue) -> queue.poller() != null)
				.forEach((queue) -> pollers.computeIfAbsent(queue.name(), (name) -> new ArrayList<>()).add(queue.poller())));
		}
		Set<String> paused = pausedQueues();
		Set<String> names = new TreeSet<>(stats.keySet());
		names.addAll(paused);
		names.addAll(pollers.keySet());
		Map<String, QueueDescriptor> queues = new TreeMap<>();
		for (String name : names) {
			QueueStatus queue = (single != null) ? single.queues().get(name) : null;
			queues.put(name, queue(stats.get(name), pollers.getOrDefault(name, List.of()), paused.contains(name),
					(queue != null) ? queue.claims() : null));
		}
		LockWaitsDescriptor lockWaits = null;
		if (single != null) {
			LockWaits waits = single.lockWaits();
			lockWaits = new LockWaitsDescriptor(waits.waiting(), waits.applicationName());
		}
		Map<String, ShardDescriptor> shardDescriptors = (status != null && status.sharded())
				? ShardDescriptor.of(ShardReading.readAll(this.engine)) : null;
		return new QueuesDescriptor(queues, writes(), lockWaits, shardDescriptors);
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
	private static QueueDescriptor queue(@Nullable QueueStats stats, List<PollerStatus> pollers, boolean paused,
			@Nullable ClaimSignals progress) {
		PollerStatus poller = pollers.isEmpty() ? null : pollers.get(0);
		return new QueueDescriptor((stats != null) ? stats.available() : null,
				(stats != null) ? stats.oldestAvailableAge() : null, (stats != null) ? stats.scheduled() : null,
				(stats != null) ? stats.running() : null,
				(poller != null) ? pollers.stream().anyMatch(PollerStatus::running) : null,
				(poller != null) ? pollers.stream().mapToInt(PollerStatus::busyWorkers).sum() : null,
				(poller != null) ? pollers.stream().mapToInt((each) -> each.settings().concurrency()).sum() : null,
				(poller != null) ? poller.settings().mode().name().toLowerCase(Locale.ROOT) : null, paused,
				(progress != null) ? signals(progress) : null);
	}

	/** The signals of a queue polled here: poll cycle, claims without progress, SLA. */
	private static SignalsDescriptor signals(ClaimSignals progress) {
		boolean sla = progress.sla() != null;
		return new SignalsDescriptor(PollCycleAssessment.of(progress.pollCycleP99()).label(),
				progress.pollCycleP99(), progress.jobsClaimed(), progress.unproductiveClaims(),
				sla ? (progress.slaSlipping() ? "slipping" : "met") : null, sla ? progress.slaMissed() : null);
	}

}
