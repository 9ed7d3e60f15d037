package dev.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.engine.DatabaseEngine;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.maintenance.TransactionHorizon;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.sql.MaintenanceRepository.LockWaits;
import dev.pgqueue.engine.status.DatabaseStatus;
import dev.pgqueue.engine.status.EngineStatus;
import dev.pgqueue.engine.status.QueueStatus;
import dev.pgqueue.engine.status.QueueStatus.ClaimSignals;
import dev.pgqueue.engine.status.QueueStatus.PollerStatus;
import dev.pgqueue.engine.status.QueueStatus.RateUse;
import dev.pgqueue.metrics.OldestTransaction;
import dev.pgqueue.metrics.PollCycleAssessment;
import dev.pgqueue.metrics.PreparedTransactions;
import dev.pgqueue.metrics.QueueStats;
import dev.pgqueue.metrics.VacuumHealth;
import org.jspecify.annotations.Nullable;

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
 * <p>{@code DOWN} when a queue that has listeners here is not being polled, or when a service's thread
 * ended on its own ({@code stoppedServices}, naming each with what ended it: its work, completions
 * or lease extensions say, is not done until a restart); else {@link #DEGRADED}
 * while a queue's jobs miss its SLA; else {@code UP}. A paused queue changes no status: it was
 * paused on purpose. Neither does the vacuum verdict, nor a transaction that holds back cleanup, nor a
 * queue that no instance polls: they are the deployment's or the database's, the same for every
 * instance, and no instance serves better for being taken out of service (a probe failing on an
 * unpolled queue would take the producers out because the workers are missing); the details, the
 * warnings in the log and the {@code pgqueue.table.*} and {@code pgqueue.queue.unpolled.jobs} gauges
 * say so. Spring Boot's default status order does not know {@code DEGRADED}, so the
 * application's overall status stays {@code UP} (and its HTTP status 200) unless
 * {@code management.endpoint.health.status.order} lists it.
 *
 * <p>Over shards, the details are each shard's, under {@code shards}, with whether it {@code answers}
 * (and {@code why} not); the status is {@code DOWN} when none answers, else at least {@link #DEGRADED}
 * while one does not, else the worst of theirs. Everything but the schedules (read from the
 * database on each call) comes from the engine's {@link QueueEngine#status() status}.
 */
public class QueueHealthIndicator extends AbstractHealthIndicator {

	/** A queue polled here has claimed jobs later than its SLA allows, within the last two stats intervals. */
	public static final Status DEGRADED = new Status("DEGRADED", "jobs of a queue were claimed later than its SLA");

	private final QueueEngine engine;

	/** The health of a running engine's queues and services; over shards, of each shard's, and which answer. */
	public QueueHealthIndicator(QueueEngine engine) {
		super("pgqueue health check failed");
		this.engine = engine;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		EngineStatus status = this.engine.status();
		if (!status.sharded()) {
			Map<String, Object> details = new LinkedHashMap<>();
			builder.status(health(status.database(), this.engine.database(), details)).withDetails(details);
			return;
		}
		Map<String, Object> shards = new LinkedHashMap<>();
		int down = 0;
		Status worst = Status.UP;
		for (DatabaseStatus database : status.databases()) {
			Map<String, Object> shard = new LinkedHashMap<>();
			shard.put("answers", database.whyDown() == null);
			if (database.whyDown() != null) {
				shard.put("why", database.whyDown());
				down++;
			}
			Map<String, Object> details = new LinkedHashMap<>();
			Status health = health(database, this.engine.database(Objects.requireNonNull(database.shard())), details);
			shard.put("status", health.getCode());
			shard.putAll(details);
			shards.put(database.shard(), shard);
			worst = worse(worst, health);
		}
		Status overall = (down == status.databases().size()) ? Status.DOWN
				: (down > 0) ? worse(DEGRADED, worst) : worst;
		builder.status(overall).withDetail("shards", shards);
	}

	/** One database's part: its details, and its status. */
	private static Status health(DatabaseStatus status, DatabaseEngine database, Map<String, Object> details) {
		Map<String, Object> queues = new LinkedHashMap<>();
		boolean allPolling = true;
		boolean slaSlipping = false;
		for (QueueStatus queue : status.queues().values()) {
			Map<String, Object> one = details(queue.stats(), queue.paused());
			PollerStatus poller = queue.poller();
			if (poller != null) {
				one.put("polling", poller.running());
				one.put("busyWorkers", poller.busyWorkers());
				one.put("concurrency", poller.settings().concurrency());
				one.put("mode", poller.settings().mode().name().toLowerCase(Locale.ROOT));
				one.put("assignment", poller.settings().assignment().name().toLowerCase(Locale.ROOT));
				if (poller.buckets() != null) {
					one.put("buckets", poller.buckets().held());
					one.put("bucketsOfQueue", poller.buckets().ofQueue());
					one.put("leadsCoordinator", poller.buckets().leadsCoordinator());
				}
				if (poller.rate() != null) {
					one.put("rateLimit", rateLimitDetails(queue.name(), poller.rate()));
				}
				if (!poller.kindRates().isEmpty()) {
					Map<String, Object> kinds = new LinkedHashMap<>();
					poller.kindRates().forEach((kind, use) -> kinds.put(kind, kindRateLimitDetails(kind, use)));
					one.put("kindRateLimits", kinds);
				}
				if (poller.settings().fairness() != null) {
					one.put("fairByKey", true);
				}
				RateLimit perKey = poller.settings().perKeyRateLimit();
				if (perKey != null) {
					Map<String, Object> keys = new LinkedHashMap<>();
					keys.put("starts", perKey.starts());
					keys.put("period", perKey.period().toString());
					keys.put("keysHeld", poller.keysHeld());
					one.put("perKeyRateLimit", keys);
				}
				if (queue.claims() != null) {
					slaSlipping |= addClaimSignals(one, queue.claims());
				}
				allPolling &= poller.running();
			}
			queues.put(queue.name(), one);
		}
		details.put("queues", queues);
		LockWaits lockWaits = status.lockWaits();
		if (lockWaits.applicationName() != null) {
			Map<String, Object> waits = new LinkedHashMap<>();
			waits.put("waiting", lockWaits.waiting());
			waits.put("applicationName", lockWaits.applicationName());
			details.put("lockWaits", waits);
		}
		OldestTransaction oldest = status.oldestTransaction();
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
		details.put("oldestTransaction", transaction);
		Map<String, Object> unpolled = new LinkedHashMap<>();
		status.unpolledQueues().forEach((queue, queueStats) -> {
			Map<String, Object> one = new LinkedHashMap<>();
			one.put("depth", queueStats.available());
			one.put("scheduled", queueStats.scheduled());
			one.put("oldestAge", queueStats.oldestAvailableAge().toString());
			unpolled.put(queue, one);
		});
		details.put("unpolledQueues", unpolled);
		VacuumHealth vacuum = status.vacuum();
		if (vacuum != null) {
			details.put("vacuum", vacuumDetails(vacuum));
		}
		Map<String, Object> schedules = scheduleDetails(database);
		if (!schedules.isEmpty()) {
			details.put("schedules", schedules);
		}
		PreparedTransactions last = status.preparedTransactions();
		if (last != null) {
			Map<String, Object> prepared = new LinkedHashMap<>();
			prepared.put("count", last.count());
			prepared.put("oldestAge", last.oldestAge().toString());
			prepared.put("inDoubt", last.inDoubt());
			details.put("preparedTransactions", prepared);
		}
		Map<String, Object> stopped = new LinkedHashMap<>();
		status.stoppedServices().forEach((service) -> stopped.put(service.name(), service.stoppedBy()));
		if (!stopped.isEmpty()) {
			details.put("stoppedServices", stopped);
		}
		return (!allPolling || !stopped.isEmpty()) ? Status.DOWN : slaSlipping ? DEGRADED : Status.UP;
	}

	private static Status worse(Status one, Status other) {
		return (rank(other) > rank(one)) ? other : one;
	}

	private static int rank(Status status) {
		if (Status.DOWN.equals(status)) {
			return 3;
		}
		if (Status.OUT_OF_SERVICE.equals(status)) {
			return 2;
		}
		return DEGRADED.equals(status) ? 1 : 0;
	}

	/**
	 * Every schedule with its next and last tick, whether it is paused, whether its due tick is later
	 * than the grace (no instance fires it: none runs, or every one's ticker fails), and whether a
	 * listener of its kind runs here (a schedule may be run by another service on the same table).
	 * Read from the database on each call: a row per schedule.
	 */
	private static Map<String, Object> scheduleDetails(DatabaseEngine engine) {
		Map<String, Object> details = new LinkedHashMap<>();
		List<ScheduleDetails> all;
		Set<String> overdueNames;
		try {
			all = engine.schedules().list();
			// On the database's clock, as the ticks are.
			overdueNames = Set.copyOf(engine.schedules().overdue(engine.scheduleSettings().grace()));
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
			one.put("listenedHere", engine.handlers().queueOf(schedule.kind()) != null);
			details.put(schedule.name(), one);
		}
		return details;
	}

	/**
	 * A queue's rate limit: how long this instance's claims have been held by it without a break, and,
	 * past two periods (at least a minute), a warning that jobs arrive faster than it lets them start.
	 */
	private static Map<String, Object> rateLimitDetails(String queue, RateUse use) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("starts", use.limit().starts());
		details.put("period", use.limit().period().toString());
		putHeld(details, "queue '" + queue + "'", "pgqueue.queues." + queue, use.limit(), use.heldFor());
		return details;
	}

	/** A kind's rate limit: the units its last period granted, and how long it has held claims, as above. */
	private static Map<String, Object> kindRateLimitDetails(String kind, RateUse use) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("starts", use.limit().starts());
		details.put("period", use.limit().period().toString());
		details.put("used", use.used());
		putHeld(details, "kind '" + kind + "'", "pgqueue.kinds." + kind, use.limit(), use.heldFor());
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
	private static boolean addClaimSignals(Map<String, Object> details, ClaimSignals progress) {
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

	private static Map<String, Object> details(@Nullable QueueStats stats, boolean paused) {
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
