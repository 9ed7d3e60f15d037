package dev.pgqueue.engine.schedules;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

import dev.pgqueue.OnConflict;
import dev.pgqueue.Overlap;
import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.engine.job.NewJob;
import dev.pgqueue.engine.job.Uniqueness;
import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.sql.ScheduleRepository;
import dev.pgqueue.engine.sql.ScheduleRepository.Advance;
import dev.pgqueue.engine.sql.ScheduleRepository.Due;
import dev.pgqueue.engine.sql.UniqueJobRepository;
import dev.pgqueue.engine.sql.UniqueJobRepository.Enqueued;
import dev.pgqueue.metrics.QueueMetrics;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.support.CronExpression;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Fires the ticks of recurring jobs: every interval, one transaction locks the due schedules
 * ({@code FOR UPDATE SKIP LOCKED}, so the instances' passes share them out and never fire one twice),
 * enqueues each fired tick's job and moves each schedule to its next tick, then commits. A crash
 * before the commit undoes the jobs with the move; the next pass of any instance fires those ticks.
 * Every instance that processes jobs runs a ticker; there is no leader to elect or lose.
 *
 * <p>Each tick's job is enqueued with the tick's key held for the tick's period
 * ({@code pgqueue.schedule:<name>} from the tick to the next, in {@code pgqueue_unique_periods}), a
 * second guard beside the row lock: a tick fired twice by any path finds its key taken.
 *
 * <p>The job runs at the tick's instant ({@code Job.runAt()} is the tick), which is already past when
 * it is enqueued, so it is due at once.
 */
public final class ScheduleTicker extends PeriodicService {

	private static final Logger logger = LoggerFactory.getLogger(ScheduleTicker.class);

	/** Schedules one pass locks at most; a pass that takes them all is followed by another at once. */
	static final int SCHEDULES_PER_PASS = 1_000;

	/** Ticks of one schedule that {@code missed: all} fires in one pass at most. */
	public static final int TICKS_PER_PASS = 100;

	/** The prefix of the unique key each tick's job holds: {@code pgqueue.schedule:<name>}. */
	public static final String TICK_KEY_PREFIX = "pgqueue.schedule:";

	private final ScheduleRepository schedules;

	/** Where the ticks' jobs are born, as every new job is. */
	private final ScheduleJobs births;

	private final TransactionTemplate transactions;

	private final QueueCatalog queues;

	private final QueueMetrics metrics;

	private final Duration grace;

	/**
	 * @param interval time between passes
	 * @param grace how late a tick may fire and still be on time rather than missed
	 */
	public ScheduleTicker(ScheduleRepository schedules, ScheduleJobs births, TransactionTemplate transactions,
			QueueCatalog queues, QueueMetrics metrics, Duration interval, Duration grace) {
		super("schedule ticker", interval);
		this.schedules = schedules;
		this.births = births;
		this.transactions = transactions;
		this.queues = queues;
		this.metrics = metrics;
		this.grace = grace;
	}

	/** Passes one run makes at most while each says more is due (10 000 schedules, or ticks). */
	static final int MAX_PASSES_PER_RUN = 100;

	@Override
	protected void runOnce() {
		// A bound was reached: the rest is due now, not after the interval; bounded in turn, so that rows
		// that never move on (an expression that cannot be read) cannot keep the thread in a loop.
		for (int i = 0; i < MAX_PASSES_PER_RUN && pass().more(); i++) {
		}
	}

	/**
	 * One pass in one transaction; says how many ticks it fired and whether more are due. However many
	 * schedules are due, a pass is a handful of statements: the lock, a read of the previous ticks'
	 * jobs for those that skip overlaps, one insert of every fired tick's job, and one update that
	 * moves every schedule on.
	 */
	public Pass pass() {
		Pass pass = this.transactions.execute((status) -> {
			List<Due> due = this.schedules.lockDue(SCHEDULES_PER_PASS);
			List<Planned> planned = new ArrayList<>(due.size());
			for (Due schedule : due) {
				Planned plan = plan(schedule);
				if (plan != null) {
					planned.add(plan);
				}
			}
			Set<UUID> unfinished = this.schedules.unfinished(planned.stream()
				.filter((plan) -> !plan.ticks().isEmpty() && plan.schedule().overlap() == Overlap.SKIP)
				.map((plan) -> plan.schedule().lastJob())
				.filter(Objects::nonNull)
				.toList());
			List<NewJob> jobs = new ArrayList<>();
			for (Iterator<Planned> each = planned.iterator(); each.hasNext();) {
				Planned plan = each.next();
				UUID previous = plan.schedule().lastJob();
				if (previous != null && plan.schedule().overlap() == Overlap.SKIP && unfinished.contains(previous)) {
					plan.skipForOverlap();
				}
				try {
					jobs.addAll(plan.jobs());
				}
				catch (IllegalArgumentException ex) {
					// Refused as an enqueue would be (a payload over the limit): the others go on, this one waits.
					logger.warn("Schedule '{}' is not fired: {}", plan.schedule().name(), ex.getMessage());
					each.remove();
				}
			}
			List<Enqueued> enqueued = this.births.insert(jobs);
			int fired = 0;
			boolean more = due.size() == SCHEDULES_PER_PASS;
			List<Advance> moves = new ArrayList<>(planned.size());
			List<Runnable> report = new ArrayList<>(planned.size());
			int next = 0;
			for (Planned plan : planned) {
				int count = plan.jobs().size();
				fired += plan.settle(enqueued.subList(next, next + count));
				next += count;
				more |= plan.tickPlan().more();
				moves.add(plan.advance());
				report.add(plan::report);
			}
			this.schedules.advance(moves);
			// Metrics once the pass committed: a pass rolled back fired nothing.
			return new Pass(fired, more, report);
		});
		if (pass == null) {
			return new Pass(0, false, List.of());
		}
		pass.report().forEach(Runnable::run);
		return pass;
	}

	/** Which of a due schedule's ticks fire; {@code null} if its expression cannot be read here. */
	private @Nullable Planned plan(Due due) {
		ScheduleDetails schedule = due.schedule();
		CronTicks ticks;
		try {
			ticks = new CronTicks(CronExpression.parse(schedule.cron()), schedule.zone());
		}
		catch (IllegalArgumentException ex) {
			// Saved by something that checked less (a newer version, a hand-written row): the others go on.
			logger.warn("Schedule '{}' is not fired: its cron expression \"{}\" cannot be read here ({}). Save it "
					+ "again with a valid expression, or delete it.", schedule.name(), schedule.cron(), ex.getMessage());
			return null;
		}
		TickPlan plan = TickPlan.of(ticks, schedule.nextTick(), due.now(), schedule.missed(), this.grace,
				TICKS_PER_PASS);
		return new Planned(schedule, ticks, plan, due.now());
	}

	/** One due schedule through a pass: its plan, its jobs, then what became of them. */
	private final class Planned {

		private final ScheduleDetails schedule;

		private final CronTicks cron;

		private final TickPlan tickPlan;

		private final Instant now;

		private List<Instant> ticks;

		private List<NewJob> jobs = List.of();

		private long overlapping;

		private int inserted;

		private @Nullable Instant lastTick;

		private @Nullable UUID lastJob;

		Planned(ScheduleDetails schedule, CronTicks cron, TickPlan tickPlan, Instant now) {
			this.schedule = schedule;
			this.cron = cron;
			this.tickPlan = tickPlan;
			this.now = now;
			this.ticks = tickPlan.fired();
		}

		ScheduleDetails schedule() {
			return this.schedule;
		}

		TickPlan tickPlan() {
			return this.tickPlan;
		}

		List<Instant> ticks() {
			return this.ticks;
		}

		void skipForOverlap() {
			this.overlapping = this.ticks.size();
			this.ticks = List.of();
		}

		List<NewJob> jobs() {
			if (this.jobs.isEmpty() && !this.ticks.isEmpty()) {
				List<NewJob> made = new ArrayList<>(this.ticks.size());
				for (Instant tick : this.ticks) {
					made.add(job(this.schedule, tick, this.cron.next(tick)));
				}
				this.jobs = made;
			}
			return this.jobs;
		}

		/** Takes what became of this schedule's jobs; returns how many were inserted. */
		int settle(List<Enqueued> enqueued) {
			for (int i = 0; i < enqueued.size(); i++) {
				if (enqueued.get(i).outcome() == UniqueJobRepository.Outcome.INSERTED) {
					this.inserted++;
				}
				else {
					logger.warn("Schedule '{}': the tick of {} had fired already (its key is held by job {}); not fired "
							+ "again", this.schedule.name(), this.ticks.get(i), enqueued.get(i).publicId());
				}
			}
			if (!enqueued.isEmpty()) {
				this.lastTick = this.ticks.get(this.ticks.size() - 1);
				this.lastJob = enqueued.get(enqueued.size() - 1).publicId();
			}
			return this.inserted;
		}

		Advance advance() {
			return new Advance(this.schedule.name(), this.tickPlan.nextTick(), this.lastTick, this.lastJob);
		}

		void report() {
			String name = this.schedule.name();
			if (this.inserted > 0) {
				metrics.scheduleFired(name, this.inserted, Duration.between(this.lastTick, this.now));
			}
			long missed = this.tickPlan.missed();
			if (missed > 0) {
				metrics.scheduleSkipped(name, "missed", missed);
				logger.info("Schedule '{}': skipped {} missed {} ({} policy)", name, missed,
						(missed == 1) ? "tick" : "ticks", this.schedule.missed().name().toLowerCase(Locale.ROOT));
			}
			if (this.overlapping > 0) {
				metrics.scheduleSkipped(name, "overlap", this.overlapping);
				logger.info("Schedule '{}': skipped {} {}, the job of its previous tick ({}) being unfinished "
						+ "(overlap: skip)", name, this.overlapping, (this.overlapping == 1) ? "tick" : "ticks",
						this.schedule.lastJob());
			}
		}

	}

	/** The job of one tick, holding the tick's key until the next tick. */
	private NewJob job(ScheduleDetails schedule, Instant tick, @Nullable Instant following) {
		long period = (following != null) ? Math.max(1, Duration.between(tick, following).getSeconds())
				: Duration.ofDays(1).getSeconds();
		return this.births.of(schedule, tick, new Uniqueness(TICK_KEY_PREFIX + schedule.name(), period, tick, OnConflict.KEEP));
	}

	/** How long after its instant a tick may fire and still be on time. */
	public Duration grace() {
		return this.grace;
	}

	/**
	 * What one pass did.
	 * @param fired ticks fired
	 * @param more whether due ticks or schedules remain for another pass at once
	 */
	public record Pass(int fired, boolean more, List<Runnable> report) {

	}


}
