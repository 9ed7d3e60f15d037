package dev.pgqueue.autoconfigure;

import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.pgqueue.JobAdmin;
import dev.pgqueue.ShardsPartlyFailedException;
import dev.pgqueue.autoconfigure.QueuesDescriptor.LockWaitsDescriptor;
import dev.pgqueue.autoconfigure.QueuesDescriptor.QueueDescriptor;
import dev.pgqueue.autoconfigure.QueuesDescriptor.ShardDescriptor;
import dev.pgqueue.autoconfigure.QueuesDescriptor.SignalsDescriptor;
import dev.pgqueue.autoconfigure.QueuesDescriptor.WritesDescriptor;
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

	private final @Nullable QueueShards shards;

	private final boolean writable;

	QueueOverview(JobAdmin admin, @Nullable QueueEngine engine, @Nullable QueueShards shards, boolean writable) {
		this.admin = admin;
		this.engine = engine;
		this.shards = shards;
		this.writable = writable;
	}

	QueuesDescriptor read() {
		// Only an engine that runs jobs reads stats, signals and lock waits.
		StatsReader services = (this.engine != null && this.engine.processing()) ? this.engine.statsReader() : null;
		Map<String, QueueStats> stats = (services != null) ? services.lastStats() : Map.of();
		Map<String, JobPoller> pollers = (this.engine != null) ? this.engine.pollers()
			.stream()
			.collect(Collectors.toMap((poller) -> poller.settings().name(), Function.identity(), (a, b) -> a))
				: Map.of();
		Set<String> paused = pausedQueues();
		Set<String> names = new TreeSet<>(stats.keySet());
		names.addAll(paused);
		names.addAll(pollers.keySet());
		Map<String, QueueDescriptor> queues = new TreeMap<>();
		for (String name : names) {
			ClaimProgress progress = (services != null) ? services.signals().get(name) : null;
			queues.put(name, queue(stats.get(name), pollers.get(name), paused.contains(name), progress));
		}
		LockWaitsDescriptor lockWaits = null;
		if (services != null) {
			LockWaits waits = services.lastLockWaits();
			lockWaits = new LockWaitsDescriptor(waits.waiting(), waits.applicationName());
		}
		Map<String, ShardDescriptor> shardDescriptors = (this.shards != null)
				? ShardDescriptor.of(ShardReading.readAll(this.shards)) : null;
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

	private static QueueDescriptor queue(@Nullable QueueStats stats, @Nullable JobPoller poller, boolean paused,
			@Nullable ClaimProgress progress) {
		return new QueueDescriptor((stats != null) ? stats.available() : null,
				(stats != null) ? stats.oldestAvailableAge() : null, (stats != null) ? stats.scheduled() : null,
				(stats != null) ? stats.running() : null, (poller != null) ? poller.isRunning() : null,
				(poller != null) ? poller.busySlots() : null,
				(poller != null) ? poller.settings().concurrency() : null,
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
