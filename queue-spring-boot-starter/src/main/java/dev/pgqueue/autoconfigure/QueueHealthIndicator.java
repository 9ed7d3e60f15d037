package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.engine.DatabaseEngine;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.buckets.BucketScope;
import dev.pgqueue.engine.maintenance.StatsReader;
import dev.pgqueue.engine.maintenance.TransactionHorizon;
import dev.pgqueue.engine.poll.ClaimProgress;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.limits.RateGate;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.sql.MaintenanceRepository.LockWaits;
import dev.pgqueue.engine.twophase.InDoubtResolver;
import dev.pgqueue.metrics.OldestTransaction;
import dev.pgqueue.metrics.PollCycleAssessment;
import dev.pgqueue.metrics.PreparedTransactions;
import dev.pgqueue.metrics.QueueStats;
import dev.pgqueue.metrics.VacuumHealth;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * Reports each queue's depth, age of its oldest due job, scheduled and running jobs (as last read
 * by the stats reader), whether an operator paused it, and whether this instance polls it (with
 * bucket assignment, how many of the queue's buckets it claims from and whether it leads their
 * coordinator), with the p99 of its recent poll cycles judged and, when it has an SLA, whether jobs
 * are claimed within it; how many of this application's connections wait on a lock; the
 * transaction that holds back cleanup in the database the longest, when one does; and, with queues
 * that use two-phase commit, this schema's prepared transactions: how many, the age of the oldest,
 * and how many are in doubt; whether the jobs table gets vacuumed ({@code vacuum}: autovacuum
 * for the server and for the table, dead and live rows, the last vacuum, the verdict and what to do);
 * the queues that have waiting jobs and no live poller on any instance ({@code unpolledQueues},
 * with their depth, scheduled jobs and the age of their oldest due job); and a queue's rate limit, with
 * how long this instance's claims have been held by it, naming it once it has held jobs back for two
 * periods and at least a minute ({@code rateLimit}).
 *
 * <p>{@code DOWN} when a queue that has listeners here is not being polled; else {@link #DEGRADED}
 * while a queue's jobs miss its SLA; else {@code UP}. A paused queue changes no status: it was
 * paused on purpose. Neither does the vacuum verdict, nor a transaction that holds back cleanup, nor a
 * queue that no instance polls: they are the deployment's or the database's, the same for every
 * instance, and no instance serves better for being taken out of service (a probe failing on an
 * unpolled queue would take the producers out because the workers are missing); the details, the
 * warnings in the log and the {@code pgqueue.table.*} and {@code pgqueue.queue.unpolled.jobs} gauges
 * say so. Spring Boot's default status order does not know {@code DEGRADED}, so the
 * application's overall status stays {@code UP} (and its HTTP status 200) unless
 * {@code management.endpoint.health.status.order} lists it.
 */
public class QueueHealthIndicator extends AbstractHealthIndicator {

	/** A queue polled here has claimed jobs later than its SLA allows, within the last two stats intervals. */
	public static final Status DEGRADED = new Status("DEGRADED", "jobs of a queue were claimed later than its SLA");

	private final DatabaseEngine engine;

	private final StatsReader maintenance;

	/** The health of a running engine's queues and services. */
	public QueueHealthIndicator(QueueEngine engine) {
		this(engine.database());
	}

	/** The health of one database's part of a running engine: its queues and services. */
	QueueHealthIndicator(DatabaseEngine engine) {
		super("pgqueue health check failed");
		this.engine = engine;
		this.maintenance = engine.statsReader();
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		Map<String, Object> queues = new LinkedHashMap<>();
		boolean allPolling = true;
		boolean slaSlipping = false;
		Map<String, QueueStats> stats = this.maintenance.lastStats();
		Set<String> paused = (this.maintenance.pauses() != null) ? this.maintenance.pauses().current() : Set.of();
		for (JobPoller poller : this.engine.pollers()) {
			String queue = poller.settings().name();
			Map<String, Object> details = details(stats.get(queue), paused.contains(queue));
			details.put("polling", poller.isRunning());
			details.put("busyWorkers", poller.busySlots());
			details.put("concurrency", poller.settings().concurrency());
			details.put("mode", poller.settings().mode().name().toLowerCase(Locale.ROOT));
			details.put("assignment", poller.settings().assignment().name().toLowerCase(Locale.ROOT));
			if (poller.scope() instanceof BucketScope buckets) {
				details.put("buckets", buckets.buckets().length);
				details.put("bucketsOfQueue", poller.settings().buckets());
				details.put("leadsCoordinator", buckets.coordinator().leadingGeneration() > 0);
			}
			RateLimit rateLimit = poller.settings().rateLimit();
			if (rateLimit != null) {
				details.put("rateLimit", rateLimitDetails(queue, rateLimit, poller.rate()));
			}
			Map<String, RateLimit> kindLimits = poller.rate().kindLimits(poller.kinds().toArray(String[]::new));
			if (!kindLimits.isEmpty()) {
				Map<String, Object> kinds = new LinkedHashMap<>();
				kindLimits.forEach((kind, limit) -> kinds.put(kind, kindRateLimitDetails(kind, limit, poller.rate())));
				details.put("kindRateLimits", kinds);
			}
			if (poller.settings().fairness() != null) {
				details.put("fairByKey", true);
			}
			RateLimit perKey = poller.settings().perKeyRateLimit();
			if (perKey != null) {
				Map<String, Object> keys = new LinkedHashMap<>();
				keys.put("starts", perKey.starts());
				keys.put("period", perKey.period().toString());
				keys.put("keysHeld", poller.rate().keysHeld());
				details.put("perKeyRateLimit", keys);
			}
			ClaimProgress progress = this.maintenance.signals().get(queue);
			if (progress != null) {
				slaSlipping |= addClaimSignals(details, progress);
			}
			queues.put(queue, details);
			allPolling &= poller.isRunning();
		}
		stats.forEach((queue, queueStats) -> queues.putIfAbsent(queue, details(queueStats, paused.contains(queue))));
		paused.forEach((queue) -> queues.putIfAbsent(queue, details(null, true)));
		builder.status(!allPolling ? Status.DOWN : slaSlipping ? DEGRADED : Status.UP).withDetail("queues", queues);
		LockWaits lockWaits = this.maintenance.lastLockWaits();
		if (lockWaits.applicationName() != null) {
			Map<String, Object> waits = new LinkedHashMap<>();
			waits.put("waiting", lockWaits.waiting());
			waits.put("applicationName", lockWaits.applicationName());
			builder.withDetail("lockWaits", waits);
		}
		OldestTransaction oldest = this.maintenance.lastOldestTransaction();
		Map<String, Object> transaction = new LinkedHashMap<>();
		transaction.put("age", oldest.age().toString());
		if (oldest.holder() != null) {
			transaction.put("ageEstimated", oldest.ageEstimated());
			transaction.put("transactionsSince", oldest.transactionsSince());
			if (oldest.pid() != null) {
				transaction.put("pid", oldest.pid());
			}
			transaction.put("holder", oldest.holder());
			if (oldest.state() != null) {
				transaction.put("state", oldest.state());
			}
		}
		transaction.put("holdsBackCleanup", oldest.age().compareTo(TransactionHorizon.WARN_AFTER) >= 0);
		builder.withDetail("oldestTransaction", transaction);
		Map<String, Object> unpolled = new LinkedHashMap<>();
		this.maintenance.lastUnpolledQueues().forEach((queue, queueStats) -> {
			Map<String, Object> details = new LinkedHashMap<>();
			details.put("depth", queueStats.available());
			details.put("scheduled", queueStats.scheduled());
			details.put("oldestAge", queueStats.oldestAvailableAge().toString());
			unpolled.put(queue, details);
		});
		builder.withDetail("unpolledQueues", unpolled);
		VacuumHealth vacuum = this.maintenance.lastVacuumHealth();
		if (vacuum != null) {
			builder.withDetail("vacuum", vacuumDetails(vacuum));
		}
		Map<String, Object> schedules = scheduleDetails();
		if (!schedules.isEmpty()) {
			builder.withDetail("schedules", schedules);
		}
		InDoubtResolver resolver = this.engine.inDoubtResolver();
		if (resolver != null) {
			PreparedTransactions last = resolver.last();
			Map<String, Object> prepared = new LinkedHashMap<>();
			prepared.put("count", last.count());
			prepared.put("oldestAge", last.oldestAge().toString());
			prepared.put("inDoubt", last.inDoubt());
			builder.withDetail("preparedTransactions", prepared);
		}
	}

	/**
	 * Every schedule with its next and last tick, whether it is paused, whether its due tick is later
	 * than the grace (no instance fires it: none runs, or every one's ticker fails), and whether a
	 * listener of its kind runs here (a schedule may be run by another service on the same table).
	 * Read from the database on each call: a row per schedule.
	 */
	private Map<String, Object> scheduleDetails() {
		Map<String, Object> details = new LinkedHashMap<>();
		List<ScheduleDetails> all;
		Set<String> overdueNames;
		try {
			all = this.engine.schedules().list();
			// On the database's clock, as the ticks are.
			overdueNames = Set.copyOf(this.engine.schedules().overdue(this.engine.scheduleSettings().grace()));
		}
		catch (RuntimeException ex) {
			return details;
		}
		for (ScheduleDetails schedule : all) {
			Map<String, Object> one = new LinkedHashMap<>();
			one.put("cron", schedule.cron());
			one.put("zone", schedule.zone().getId());
			one.put("kind", schedule.kind());
			one.put("queue", schedule.queue());
			one.put("nextTick", schedule.nextTick().toString());
			one.put("lastTick", (schedule.lastTick() != null) ? schedule.lastTick().toString() : null);
			one.put("paused", schedule.paused());
			if (schedule.paused()) {
				one.put("pausedBy", schedule.pausedBy());
			}
			boolean overdue = overdueNames.contains(schedule.name());
			one.put("overdue", overdue);
			if (overdue) {
				one.put("warning", "its tick of " + schedule.nextTick() + " has not fired: no instance that processes jobs "
						+ "runs, or their tickers fail (see their logs)");
			}
			one.put("listenedHere", this.engine.handlers().queueOf(schedule.kind()) != null);
			details.put(schedule.name(), one);
		}
		return details;
	}

	/**
	 * A queue's rate limit: how long this instance's claims have been held by it without a break, and,
	 * past two periods (at least a minute), a warning that jobs arrive faster than it lets them start.
	 */
	private static Map<String, Object> rateLimitDetails(String queue, RateLimit limit, RateGate gate) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("starts", limit.starts());
		details.put("period", limit.period().toString());
		putHeld(details, "queue '" + queue + "'", "pgqueue.queues." + queue, limit, gate.heldStretch());
		return details;
	}

	/** A kind's rate limit: the units its last period granted, and how long it has held claims, as above. */
	private static Map<String, Object> kindRateLimitDetails(String kind, RateLimit limit, RateGate gate) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("starts", limit.starts());
		details.put("period", limit.period().toString());
		details.put("used", gate.usedOfKind(kind));
		putHeld(details, "kind '" + kind + "'", "pgqueue.kinds." + kind, limit, gate.kindHeldStretch(kind));
		return details;
	}

	/**
	 * How long a limit has held claims without a break and whether that passed two periods (at least a
	 * minute), with a warning naming the limit and its key when it did.
	 */
	private static void putHeld(Map<String, Object> details, String owner, String prefix, RateLimit limit,
			Duration held) {
		details.put("heldFor", held.toString());
		boolean holdingBack = held.compareTo(limit.holdingBackAfter()) >= 0;
		details.put("holdingBack", holdingBack);
		if (holdingBack) {
			details.put("warning", "the rate limit of " + owner + " (" + limit + ") has held its jobs back for "
					+ held.toSeconds() + " s: they arrive faster than it lets them start; raise " + prefix
					+ ".rate-limit.starts if the system it protects allows, or expect the backlog to grow");
		}
	}

	private static Map<String, Object> vacuumDetails(VacuumHealth vacuum) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("verdict", vacuum.verdict().label());
		details.put("serverAutovacuum", vacuum.serverAutovacuum());
		details.put("trackCounts", vacuum.trackCounts());
		details.put("tableAutovacuum", vacuum.tableAutovacuum());
		details.put("deadRows", vacuum.deadRows());
		details.put("liveRows", vacuum.liveRows());
		details.put("lastVacuum", (vacuum.lastVacuum() != null) ? vacuum.lastVacuum().toString() : "never");
		details.put("message", vacuum.message());
		return details;
	}

	/** Adds the poll-cycle assessment and the SLA of a queue polled here; returns whether it is slipping. */
	private static boolean addClaimSignals(Map<String, Object> details, ClaimProgress progress) {
		Duration p99 = progress.pollCycleP99();
		details.put("pollCycleP99", p99.toString());
		details.put("pollCycle", PollCycleAssessment.of(p99).label());
		if (progress.sla() == null) {
			return false;
		}
		boolean slipping = progress.slaSlipping();
		details.put("sla", slipping ? "slipping" : "met");
		details.put("slaMissed", progress.slaMissed());
		return slipping;
	}

	private static Map<String, Object> details(QueueStats stats, boolean paused) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("paused", paused);
		if (stats != null) {
			details.put("depth", stats.available());
			details.put("oldestAge", stats.oldestAvailableAge().toString());
			details.put("scheduled", stats.scheduled());
			details.put("running", stats.running());
		}
		return details;
	}

}
