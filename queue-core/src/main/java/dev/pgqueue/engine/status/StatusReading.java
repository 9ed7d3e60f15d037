package dev.pgqueue.engine.status;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import dev.pgqueue.engine.buckets.BucketScope;
import dev.pgqueue.engine.limits.RateGate;
import dev.pgqueue.engine.maintenance.StatsReader;
import dev.pgqueue.engine.poll.ClaimProgress;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.sql.MaintenanceRepository.LockWaits;
import dev.pgqueue.engine.status.DatabaseStatus.ServiceStatus;
import dev.pgqueue.engine.status.QueueStatus.BucketShare;
import dev.pgqueue.engine.status.QueueStatus.ClaimSignals;
import dev.pgqueue.engine.status.QueueStatus.PollerStatus;
import dev.pgqueue.engine.status.QueueStatus.RateUse;
import dev.pgqueue.engine.twophase.InDoubtResolver;
import dev.pgqueue.metrics.OldestTransaction;
import dev.pgqueue.metrics.QueueStats;
import org.jspecify.annotations.Nullable;

/**
 * Reads one database's part of the engine into a {@link DatabaseStatus}: the one reader of the pollers,
 * rate gates, bucket scopes, claim signals and stats readings for what the engine shows.
 */
public final class StatusReading {

	private StatusReading() {
	}

	/**
	 * @param shard the shard, or {@code null} for the engine's one database
	 * @param processing whether jobs run here; without, the stats reader has read nothing
	 * @param deletesCompleted whether completed jobs' rows are deleted at once
	 * @param pollers the pollers of this database's part
	 * @param stats its stats reader, with the last readings, the pauses and the claim signals
	 * @param resolver its resolver of prepared transactions, or {@code null} without two-phase queues
	 * @param services its services, in start order
	 * @param answers whether the database answers: the rate limits' use is read from it, and left out of
	 * the status of a database that does not, so that reading a status never waits on one
	 */
	public static DatabaseStatus read(@Nullable String shard, boolean processing, boolean deletesCompleted,
			List<JobPoller> pollers, StatsReader stats, @Nullable InDoubtResolver resolver,
			List<EngineService> services, boolean answers) {
		Map<String, QueueStats> counted = processing ? stats.lastStats() : Map.of();
		Set<String> paused = (stats.pauses() != null) ? stats.pauses().current() : Set.of();
		Map<String, QueueStatus> queues = new TreeMap<>();
		Map<String, JobPoller> polled = new LinkedHashMap<>();
		pollers.forEach((poller) -> polled.putIfAbsent(poller.settings().name(), poller));
		polled.forEach((queue, poller) -> queues.put(queue, new QueueStatus(queue, paused.contains(queue),
				counted.get(queue), poller(poller, answers), claims(stats.signals().get(queue)))));
		counted.forEach((queue, queueStats) -> queues.putIfAbsent(queue,
				new QueueStatus(queue, paused.contains(queue), queueStats, null, null)));
		paused.forEach((queue) -> queues.putIfAbsent(queue, new QueueStatus(queue, true, null, null, null)));
		return new DatabaseStatus(shard, null, 0, processing, deletesCompleted, queues,
				processing ? stats.lastLockWaits() : LockWaits.NONE,
				processing ? stats.lastOldestTransaction() : OldestTransaction.NONE,
				processing ? stats.lastUnpolledQueues() : Map.of(), processing ? stats.lastVacuumHealth() : null,
				(resolver != null) ? resolver.last() : null,
				services(services, pollers));
	}

	/** The database's services, then each poller and the services it runs (completer, lease keeper…). */
	private static List<ServiceStatus> services(List<EngineService> services, List<JobPoller> pollers) {
		List<ServiceStatus> statuses = new ArrayList<>();
		services.forEach((service) -> statuses.add(ServiceStatus.of(service)));
		for (JobPoller poller : pollers) {
			statuses.add(ServiceStatus.of(poller));
			poller.services().forEach((service) -> statuses.add(ServiceStatus.of(service)));
		}
		return statuses;
	}

	private static PollerStatus poller(JobPoller poller, boolean answers) {
		RateGate gate = poller.rate();
		RateLimit limit = answers ? poller.settings().rateLimit() : null;
		Map<String, RateUse> kindRates = new LinkedHashMap<>();
		(answers ? gate.kindLimits(poller.kinds().toArray(String[]::new)) : Map.<String, RateLimit>of())
			.forEach((kind, kindLimit) -> kindRates.put(kind,
					new RateUse(kindLimit, gate.usedOfKind(kind), gate.kindHeldStretch(kind))));
		BucketShare buckets = (poller.scope() instanceof BucketScope scope)
				? new BucketShare(scope.buckets().length, poller.settings().buckets(),
						scope.coordinator().leadingGeneration() > 0)
				: null;
		return new PollerStatus(poller.settings(), poller.kinds(), poller.isRunning(), poller.busySlots(), buckets,
				(limit != null) ? new RateUse(limit, gate.used(), gate.heldStretch()) : null, kindRates,
				gate.keysHeld());
	}

	private static @Nullable ClaimSignals claims(@Nullable ClaimProgress progress) {
		return (progress != null) ? new ClaimSignals(progress.pollCycleP99(), progress.jobsClaimed(),
				progress.unproductiveClaims(), progress.sla(), progress.slaSlipping(), progress.slaMissed()) : null;
	}

}
