package dev.pgqueue.metrics;

import java.time.Duration;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

import dev.pgqueue.JobOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

/**
 * Publishes the engine's figures to Micrometer under {@code pgqueue.*}.
 *
 * <table>
 * <caption>Meters</caption>
 * <tr><td>{@code pgqueue.poll.cycle}</td><td>timer with percentile histogram; tag {@code queue}</td></tr>
 * <tr><td>{@code pgqueue.poll.cycle.assessment}</td><td>gauge, 0 (healthy) to 3 (broken); tag {@code queue}</td></tr>
 * <tr><td>{@code pgqueue.claim.batch.size}</td><td>distribution summary; tag {@code queue}</td></tr>
 * <tr><td>{@code pgqueue.jobs.claimed}, {@code pgqueue.claims.unproductive}, {@code pgqueue.jobs.sla.missed}</td>
 * <td>counters; tag {@code queue}</td></tr>
 * <tr><td>{@code pgqueue.claims.paused}</td><td>timer of the pauses claim failures caused; tags {@code queue},
 * {@code cause}</td></tr>
 * <tr><td>{@code pgqueue.rate.refused}</td><td>counter; tags {@code queue}, {@code limit}</td></tr>
 * <tr><td>{@code pgqueue.rate.held}</td><td>timer; tag {@code queue}</td></tr>
 * <tr><td>{@code pgqueue.jobs.completed / retried / failed / released / snoozed / cancelled / rescued /
 * timed.out}</td><td>counters; tags {@code queue}, {@code kind}</td></tr>
 * <tr><td>{@code pgqueue.handler.duration}</td><td>timer; tags {@code queue}, {@code kind},
 * {@code outcome} (every {@link JobOutcome} but {@code released})</td></tr>
 * <tr><td>{@code pgqueue.queue.depth / scheduled / running}</td><td>gauges; tag {@code queue}</td></tr>
 * <tr><td>{@code pgqueue.handlers.abandoned}</td><td>gauge; tag {@code queue}</td></tr>
 * <tr><td>{@code pgqueue.queue.paused}</td><td>gauge, 1 while paused; tag {@code queue}</td></tr>
 * <tr><td>{@code pgqueue.schedule.ticks}, {@code pgqueue.schedule.ticks.skipped}</td><td>counters; tag
 * {@code schedule}, and {@code reason} ({@code missed}, {@code overlap}) for the skipped</td></tr>
 * <tr><td>{@code pgqueue.schedule.lag}</td><td>time gauge, how late the newest fired tick fired; tag
 * {@code schedule}</td></tr>
 * <tr><td>{@code pgqueue.queue.unpolled.jobs}</td><td>gauge, jobs waiting while no instance polls the queue;
 * tag {@code queue}</td></tr>
 * <tr><td>{@code pgqueue.queue.oldest.age}</td><td>time gauge; tag {@code queue}</td></tr>
 * <tr><td>{@code pgqueue.database.oldest.transaction.age}</td><td>time gauge</td></tr>
 * <tr><td>{@code pgqueue.database.lock.waits}</td><td>gauge</td></tr>
 * <tr><td>{@code pgqueue.table.dead.rows}</td><td>gauge</td></tr>
 * <tr><td>{@code pgqueue.table.autovacuum.off}</td><td>gauge, 1 while autovacuum cannot run on the jobs table</td></tr>
 * <tr><td>{@code pgqueue.prepared.transactions}, {@code pgqueue.prepared.transactions.oldest.age}</td><td>gauge
 * and time gauge, with two-phase commit</td></tr>
 * <tr><td>{@code pgqueue.prepared.transactions.resolved}</td><td>counter; tags {@code queue},
 * {@code decision}</td></tr>
 * </table>
 */
public class MicrometerQueueMetrics implements QueueMetrics {

	private final MeterRegistry registry;

	private final Map<String, Timer> pollCycles = new ConcurrentHashMap<>();

	private final Map<String, DistributionSummary> batchSizes = new ConcurrentHashMap<>();

	private final Map<String, ClaimMeters> claimMeters = new ConcurrentHashMap<>();

	/** Meters of each queue's kinds, looked up without building a key: this runs once per job. */
	private final Map<String, Map<String, KindMeters>> kindMeters = new ConcurrentHashMap<>();

	private final Map<String, QueueGauges> gauges = new ConcurrentHashMap<>();

	private final Map<String, AtomicLong> scheduleLags = new ConcurrentHashMap<>();

	private final AtomicLong oldestTransactionMillis = new AtomicLong();

	private final AtomicLong lockWaits = new AtomicLong();

	private final AtomicLong preparedCount = new AtomicLong();

	private final AtomicLong preparedOldestMillis = new AtomicLong();

	/** Registered on the first reading: only applications with two-phase queues read them. */
	private final AtomicBoolean preparedGauges = new AtomicBoolean();

	private final AtomicLong deadRows = new AtomicLong();

	private final AtomicLong autovacuumOff = new AtomicLong();

	/** Registered on the first reading, so that a 0 is never shown for a table not read yet. */
	private final AtomicBoolean vacuumGauges = new AtomicBoolean();

	/**
	 * @param registry where to publish
	 * @param queues queues whose meters are registered at once, before any work happens
	 */
	public MicrometerQueueMetrics(MeterRegistry registry, Collection<String> queues) {
		this.registry = registry;
		TimeGauge.builder("pgqueue.database.oldest.transaction.age", this.oldestTransactionMillis,
				TimeUnit.MILLISECONDS, AtomicLong::get)
			.description("How long the oldest snapshot in the jobs table's database has been held: nothing "
					+ "removed since can be vacuumed")
			.register(registry);
		Gauge.builder("pgqueue.database.lock.waits", this.lockWaits, AtomicLong::get)
			.description("Connections of this application (by application_name) that wait on a lock")
			.register(registry);
		queues.forEach((queue) -> {
			pollCycle(queue);
			batchSize(queue);
			claimMeters(queue);
			gauges(queue);
		});
	}

	@Override
	public void pollCycle(String queue, long nanos, int claimed) {
		pollCycle(queue).record(nanos, TimeUnit.NANOSECONDS);
		batchSize(queue).record(claimed);
		if (claimed > 0) {
			claimMeters(queue).claimed.increment(claimed);
		}
	}

	@Override
	public void unproductiveClaim(String queue) {
		claimMeters(queue).unproductive.increment();
	}

	@Override
	public void claimsPaused(String queue, String cause, Duration pause) {
		Timer.builder("pgqueue.claims.paused")
			.description("Claim failures that counted, each with the pause it caused (zero: claimed again at once); "
					+ "cause: connection, conflict or error")
			.tag("queue", queue)
			.tag("cause", cause)
			.register(this.registry)
			.record(pause);
	}

	@Override
	public void rateLimitRefused(String queue, String limit, int refused) {
		Counter.builder("pgqueue.rate.refused")
			.description("Jobs a claim wanted to start and a rate limit did not let start yet: they wait for the window; "
					+ "limit: queue, kind:<kind> or per-key")
			.tag("queue", queue)
			.tag("limit", limit)
			.register(this.registry)
			.increment(refused);
	}

	@Override
	public void rateLimitHeld(String queue, long nanos) {
		Timer.builder("pgqueue.rate.held")
			.description("How long the queue's claims were held by its rate limit, each time it held them")
			.tag("queue", queue)
			.register(this.registry)
			.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
	}

	@Override
	public void serviceFailed(String service) {
		Counter.builder("pgqueue.service.failures")
			.description("Iterations of a service's loop (a poller, a completer, the promoter…) that failed, whatever "
					+ "was thrown; the service goes on")
			.tag("service", service)
			.register(this.registry)
			.increment();
	}

	@Override
	public void scheduleFired(String schedule, int ticks, Duration lag) {
		Counter.builder("pgqueue.schedule.ticks")
			.description("Ticks of a recurring job fired: one job each")
			.tag("schedule", schedule)
			.register(this.registry)
			.increment(ticks);
		this.scheduleLags.computeIfAbsent(schedule, (name) -> {
			AtomicLong millis = new AtomicLong();
			TimeGauge.builder("pgqueue.schedule.lag", millis, TimeUnit.MILLISECONDS, AtomicLong::get)
				.description("How long after its instant the schedule's newest tick fired, on the database's clock")
				.tag("schedule", name)
				.register(this.registry);
			return millis;
		}).set(Math.max(0, lag.toMillis()));
	}

	@Override
	public void scheduleSkipped(String schedule, String reason, long ticks) {
		Counter.builder("pgqueue.schedule.ticks.skipped")
			.description("Ticks of a recurring job that did not fire; reason: missed (due while no instance ran it, "
					+ "as its missed policy says) or overlap (the previous tick's job was unfinished)")
			.tag("schedule", schedule)
			.tag("reason", reason)
			.register(this.registry)
			.increment(ticks);
	}

	@Override
	public void slaMissed(String queue, int jobs) {
		claimMeters(queue).slaMissed.increment(jobs);
	}

	@Override
	public void pollCycleAssessed(String queue, Duration p99, PollCycleAssessment assessment) {
		gauges(queue).pollCycleAssessment.set(assessment.level());
	}

	@Override
	public void jobFinished(String queue, String kind, JobOutcome outcome, long nanos) {
		kindMeters(queue, kind).finished(outcome, nanos);
	}

	@Override
	public void jobRescued(String queue, String kind) {
		kindMeters(queue, kind).rescued();
	}

	@Override
	public void jobTimedOut(String queue, String kind) {
		kindMeters(queue, kind).timedOut();
	}

	@Override
	public void abandonedHandlers(String queue, int running) {
		gauges(queue).abandonedHandlers.set(running);
	}

	@Override
	public void queueStats(Collection<QueueStats> stats) {
		for (QueueStats queueStats : stats) {
			QueueGauges queueGauges = gauges(queueStats.queue());
			queueGauges.depth.set(queueStats.available());
			queueGauges.scheduled.set(queueStats.scheduled());
			queueGauges.running.set(queueStats.running());
			queueGauges.oldestAgeMillis.set(queueStats.oldestAvailableAge().toMillis());
		}
	}

	@Override
	public void queuePaused(String queue, boolean paused) {
		gauges(queue).paused.set(paused ? 1 : 0);
	}

	@Override
	public void unpolledJobs(String queue, long waiting) {
		gauges(queue).unpolledJobs.set(waiting);
	}

	@Override
	public void oldestTransaction(OldestTransaction oldest) {
		this.oldestTransactionMillis.set(oldest.age().toMillis());
	}

	@Override
	public void lockWaits(long waiting) {
		this.lockWaits.set(waiting);
	}

	@Override
	public void vacuumHealth(VacuumHealth health) {
		this.deadRows.set(health.deadRows());
		this.autovacuumOff.set(health.autovacuumOff() ? 1 : 0);
		if (this.vacuumGauges.compareAndSet(false, true)) {
			Gauge.builder("pgqueue.table.dead.rows", this.deadRows, AtomicLong::get)
				.description("Dead rows in the jobs table, by the server's statistics; vacuum removes them")
				.register(this.registry);
			Gauge.builder("pgqueue.table.autovacuum.off", this.autovacuumOff, AtomicLong::get)
				.description("1 while autovacuum cannot run on the jobs table: off for the server (autovacuum or "
						+ "track_counts) or for the table (autovacuum_enabled)")
				.register(this.registry);
		}
	}

	@Override
	public void preparedTransactions(PreparedTransactions prepared) {
		this.preparedCount.set(prepared.count());
		this.preparedOldestMillis.set(prepared.oldestAge().toMillis());
		if (this.preparedGauges.compareAndSet(false, true)) {
			Gauge.builder("pgqueue.prepared.transactions", this.preparedCount, AtomicLong::get)
				.description("Prepared transactions of this schema's queues with two-phase commit, in doubt or not; "
						+ "each holds back vacuum while it lives")
				.register(this.registry);
			TimeGauge.builder("pgqueue.prepared.transactions.oldest.age", this.preparedOldestMillis,
					TimeUnit.MILLISECONDS, AtomicLong::get)
				.description("How long the oldest prepared transaction of this schema has been prepared")
				.register(this.registry);
		}
	}

	@Override
	public void inDoubtResolved(String queue, String decision) {
		Counter.builder("pgqueue.prepared.transactions.resolved")
			.description("Prepared transactions left by dead workers that the in-doubt resolver finished")
			.tag("queue", queue)
			.tag("decision", decision)
			.register(this.registry)
			.increment();
	}

	private Timer pollCycle(String queue) {
		return this.pollCycles.computeIfAbsent(queue, (q) -> Timer.builder("pgqueue.poll.cycle")
			.description("Time one claim statement takes; grows when pollers contend for the same rows")
			.tag("queue", q)
			.publishPercentileHistogram()
			.minimumExpectedValue(Duration.ofNanos(100_000))
			.maximumExpectedValue(Duration.ofSeconds(10))
			.register(this.registry));
	}

	private DistributionSummary batchSize(String queue) {
		return this.batchSizes.computeIfAbsent(queue, (q) -> DistributionSummary.builder("pgqueue.claim.batch.size")
			.description("Jobs claimed by one claim statement")
			.tag("queue", q)
			.register(this.registry));
	}

	private ClaimMeters claimMeters(String queue) {
		// get() first: computeIfAbsent locks the bin even when the key is there, and this runs per claim.
		ClaimMeters meters = this.claimMeters.get(queue);
		return (meters != null) ? meters
				: this.claimMeters.computeIfAbsent(queue, (q) -> new ClaimMeters(this.registry, q));
	}

	private KindMeters kindMeters(String queue, String kind) {
		// get() first: computeIfAbsent locks the bin even when the key is there, and this runs per job.
		Map<String, KindMeters> ofQueue = this.kindMeters.get(queue);
		if (ofQueue == null) {
			ofQueue = this.kindMeters.computeIfAbsent(queue, (q) -> new ConcurrentHashMap<>());
		}
		KindMeters meters = ofQueue.get(kind);
		return (meters != null) ? meters
				: ofQueue.computeIfAbsent(kind, (k) -> new KindMeters(this.registry, queue, kind));
	}

	private QueueGauges gauges(String queue) {
		return this.gauges.computeIfAbsent(queue, (q) -> new QueueGauges(this.registry, q));
	}

	/** The counters of what one queue's claims achieved. */
	private static final class ClaimMeters {

		private final Counter claimed;

		private final Counter unproductive;

		private final Counter slaMissed;

		ClaimMeters(MeterRegistry registry, String queue) {
			this.claimed = Counter.builder("pgqueue.jobs.claimed")
				.description("Jobs claimed; its rate is the queue's throughput")
				.tag("queue", queue)
				.register(registry);
			this.unproductive = Counter.builder("pgqueue.claims.unproductive")
				.description("Claims that came back short while due jobs of their kinds were held by other "
						+ "transactions")
				.tag("queue", queue)
				.register(registry);
			this.slaMissed = Counter.builder("pgqueue.jobs.sla.missed")
				.description("Jobs claimed later than their run-at plus the queue's SLA")
				.tag("queue", queue)
				.register(registry);
		}

	}

}
