package dev.pgqueue.engine.limits;

import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.ToIntFunction;

import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.sql.LimitRepository;
import dev.pgqueue.engine.sql.RateRepository;
import dev.pgqueue.engine.sql.RateRepository.Grant;
import dev.pgqueue.metrics.QueueMetrics;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A queue's rate limit as its claims meet it: before each claim, the claimer reserves as many starts
 * as it wants to claim jobs; it claims at most the starts granted, and gives back those it did not
 * use. The database holds the window ({@link RateRepository}), so the limit holds across every
 * instance.
 *
 * <p>A job that cannot start yet is never claimed, so it stays first in line, and is never written.
 * When a grant falls short, the database also says when the next start frees; the poller sleeps
 * until then (or its poll interval, if that comes first) rather than backing off by a guess, so a
 * backlog starts at the limit's pace. The grant's instant, read from the database's clock, is the
 * start instant recorded for the jobs that use it.
 *
 * <p>While claims find a backlog and the window is less than half used (the limit far from holding
 * anything back), a reservation also takes what the next {@value #CLAIMS_AHEAD} claims will want and
 * keeps it for this instance, for at most a fiftieth of the period (the window's resolution): one
 * reservation then serves up to {@value #CLAIMS_AHEAD} + 1 claims. Starts kept longer go back to the
 * window. Near the limit nothing is kept, so no instance holds starts another could use.
 *
 * <p>One per queue and poller; claims of several batches may use it at once.
 */
public final class RateGate {

	private static final Logger logger = LoggerFactory.getLogger(RateGate.class);

	/** The gate of a queue without a rate limit: grants everything, costs nothing. */
	public static final RateGate NONE = new RateGate(null, null, "", null, null);

	/** How soon a claim comes again after one that left jobs of keys at their limit out. */
	private static final long CLAIM_AGAIN_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	/** How many further claims one reservation may cover while the window is less than half used. */
	private static final int CLAIMS_AHEAD = 3;

	private final @Nullable RateLimit limit;

	private final @Nullable RateRepository repository;

	private final String name;

	private final @Nullable QueueMetrics metrics;

	private final String queue;

	/** Chooses the jobs of each claim, for limits per kind or per key, or weights; {@code null} without. */
	private final @Nullable RatePlanner planner;

	/** {@link System#nanoTime()} until which claims are held, or 0 when they are not. */
	private volatile long heldUntil;

	/** When the current hold began, for the time-held meter; 0 while not held. */
	private volatile long heldSince;

	/** Whether the last claim took all it was granted: the queue has a backlog, worth reserving ahead for. */
	private volatile boolean backlog;

	/** Starts reserved for this instance's next claim, granted at {@link #creditGrant}; guarded by this. */
	private int credit;

	private @Nullable Grant creditGrant;

	/** The units the jobs of claims under the queue's own limit use, by their own weights. */
	private final QueueUnits units;

	/** {@link System#nanoTime()} of the reservation that left {@link #credit}. */
	private long creditAt;

	/**
	 * How long starts reserved ahead may wait for the claim that uses them: one fiftieth of the
	 * period, the window's resolution, so that a job starts at most that much later than its recorded
	 * start.
	 */
	private final long creditMaxAge;

	private RateGate(@Nullable RateLimit limit, @Nullable RateRepository repository, String queue,
			@Nullable QueueMetrics metrics, @Nullable RatePlanner planner) {
		this.limit = limit;
		this.planner = planner;
		this.repository = repository;
		this.queue = queue;
		this.name = "queue:" + queue;
		this.metrics = metrics;
		this.creditMaxAge = (limit != null) ? limit.period().toNanos() / 50 : 0;
		this.units = new QueueUnits(queue, limit);
	}

	/** The gate of a queue's rate limit, or {@link #NONE} for a queue without one. */
	public static RateGate of(String queue, @Nullable RateLimit limit, RateRepository repository, QueueMetrics metrics) {
		return (limit != null) ? new RateGate(limit, repository, queue, metrics, null) : NONE;
	}

	/**
	 * The gate of a queue's rate limits: its own, its kinds' and its keys' ({@link #NONE} when it has
	 * none). Where a limit depends on the job (per kind, per key, or weights above one), each claim's
	 * jobs are chosen before it (see {@link RatePlanner}); otherwise a claim reserves a number of starts.
	 * @param kinds the kinds the queue's poller claims
	 * @param kindLimits each kind's limit, or {@code null}
	 * @param weights the units of the limits one job of each kind uses
	 * @param candidates reads the jobs to choose from
	 */
	public static RateGate of(QueueSettings settings, String[] kinds, Function<String, @Nullable RateLimit> kindLimits,
			ToIntFunction<String> weights, LimitRepository candidates, RateRepository repository, QueueMetrics metrics) {
		if (RatePlanner.needed(settings, kinds, kindLimits, weights)) {
			return new RateGate(settings.rateLimit(), repository, settings.name(), metrics,
					new RatePlanner(settings, kindLimits, weights, candidates, repository));
		}
		return of(settings.name(), settings.rateLimit(), repository, metrics);
	}

	/** Whether the queue has a rate limit, of its own or of its kinds or keys. */
	public boolean isLimited() {
		return this.limit != null || this.planner != null;
	}

	/** Whether each claim's jobs are chosen by limits per kind or per key, or by weights. */
	public boolean choosesJobs() {
		return this.planner != null;
	}

	/**
	 * Reserves what a claim of up to {@code wanted} jobs of the given kinds may start. Under limits that
	 * depend on the job, this chooses the jobs: the claim must take no others
	 * ({@link dev.pgqueue.engine.job.ClaimStart#granted}).
	 */
	public RatePermit reserve(int wanted, String[] kinds) {
		RatePlanner chooser = this.planner;
		if (chooser == null || wanted <= 0) {
			return reserve(wanted);
		}
		RatePlanner.Plan plan = chooser.plan(wanted, kinds, (label, jobs) -> {
			if (this.metrics != null) {
				this.metrics.rateLimitRefused(this.queue, label, jobs);
			}
		});
		long now = System.nanoTime();
		if (plan.heldNanos() > 0) {
			hold(now, now + plan.heldNanos());
		}
		else if (!plan.chosen().isEmpty()) {
			endHold();
		}
		if (plan.claimAgain()) {
			// Other keys' jobs wait behind those at their limit: claim again at once, not after the interval.
			this.heldUntil = now + CLAIM_AGAIN_NANOS;
		}
		return new RatePermit(plan.chosen().size(), plan.chosen().size(), null, plan);
	}

	/** The limit, or {@code null}. */
	public @Nullable RateLimit limit() {
		return this.limit;
	}

	/**
	 * Reserves up to {@code wanted} starts; the claim that follows takes at most the number granted.
	 * Without a limit, grants all at once without asking the database.
	 */
	public RatePermit reserve(int wanted) {
		RateLimit rate = this.limit;
		RateRepository windows = this.repository;
		if (rate == null || windows == null || wanted <= 0) {
			return new RatePermit(wanted, wanted, null, null);
		}
		synchronized (this) {
			long now = System.nanoTime();
			Grant saved = this.creditGrant;
			double perJob = this.units.perJob();
			int units = this.units.toReserve(wanted, perJob);
			if (this.credit > 0 && saved != null) {
				if (this.credit >= units && now - this.creditAt < this.creditMaxAge) {
					this.credit -= units;
					return new RatePermit(wanted, units, saved, null);
				}
				// Too old (its instant would date the jobs too early) or too small: back to the window.
				int stale = this.credit;
				this.credit = 0;
				this.creditGrant = null;
				windows.giveBack(this.name, saved, stale);
			}
			// While claims find a backlog and the window is less than half used, one reservation serves
			// this claim and the next ones.
			Grant grant = windows.reserve(this.name, rate.starts(), rate.periodMicros(), units,
					this.backlog ? units * CLAIMS_AHEAD : 0);
			int take = Math.min(grant.granted(), units);
			if (grant.granted() > take) {
				this.credit = grant.granted() - take;
				this.creditGrant = grant;
				this.creditAt = now;
			}
			Long freeIn = grant.freeInMicros();
			if (take < units && freeIn != null) {
				hold(now, now + TimeUnit.MICROSECONDS.toNanos(Math.max(0, freeIn)));
				if (this.metrics != null) {
					this.metrics.rateLimitRefused(this.queue, "queue", Math.max(1, wanted - take));
				}
			}
			else {
				endHold();
			}
			if (this.units.tooFewForNext(take)) {
				// Too few for the heavy job first in line: claim nothing (it must not be overtaken), and
				// give the units back.
				if (take > 0) {
					windows.giveBack(this.name, grant, take);
				}
				return new RatePermit(0, 0, grant, null);
			}
			return new RatePermit(QueueUnits.jobsCarried(take, wanted, perJob), take, grant, null);
		}
	}

	/**
	 * The claim under {@code permit} took these jobs: gives back what the others would have used.
	 */
	public void used(RatePermit permit, List<ClaimedJob> jobs) {
		RatePlanner.Plan plan = permit.plan();
		RatePlanner chooser = this.planner;
		if (plan != null && chooser != null) {
			chooser.finished(plan);
			if (jobs.size() < plan.chosen().size()) {
				// Another claimer took some of the chosen jobs first: more may wait, so claim again at once.
				this.heldUntil = System.nanoTime() + CLAIM_AGAIN_NANOS;
				Set<Long> taken = new HashSet<>();
				jobs.forEach((job) -> taken.add(job.id()));
				chooser.giveBackUntaken(plan, taken);
			}
			return;
		}
		used(permit, this.units.of(jobs));
	}

	/**
	 * Of the jobs a claim under a queue-wide {@code permit} took, those whose weights fit the units
	 * granted, in claim order, and stops at the first that does not: it and the jobs after it must not
	 * start now, and the next reservation asks for enough to carry it. Under a permit whose jobs were
	 * chosen (or without a limit), all of them.
	 * @param left told of the jobs left out, which the caller gives back untouched
	 */
	public List<ClaimedJob> fit(RatePermit permit, List<ClaimedJob> jobs, Consumer<List<ClaimedJob>> left) {
		if (permit.plan() != null || permit.grant() == null || this.limit == null) {
			return jobs;
		}
		List<ClaimedJob> kept = this.units.fit(permit.units(), jobs);
		if (kept.size() < jobs.size()) {
			// Whether the window has room for the first left out is for the next reservation to say: claim
			// again soon.
			this.heldUntil = Math.max(this.heldUntil, System.nanoTime() + CLAIM_AGAIN_NANOS);
			left.accept(List.copyOf(jobs.subList(kept.size(), jobs.size())));
		}
		return kept;
	}

	/**
	 * The claim under {@code permit} failed: its chosen jobs may be chosen again; its units stay used (its
	 * listeners may have called out), and free with their window.
	 */
	public void failed(RatePermit permit) {
		RatePlanner.Plan plan = permit.plan();
		RatePlanner chooser = this.planner;
		if (plan != null && chooser != null) {
			chooser.finished(plan);
		}
	}

	/**
	 * As {@link #used(RatePermit, List)}, for a caller that must go on whatever happens: a give-back that
	 * fails is logged, and its starts free with their window.
	 */
	public void usedQuietly(RatePermit permit, List<ClaimedJob> jobs) {
		try {
			used(permit, jobs);
		}
		catch (RuntimeException ex) {
			logger.debug("Queue '{}': could not give back the unused starts of its rate limits; they free with their "
					+ "window: {}", this.queue, ex.toString());
		}
	}

	/**
	 * The limits of the given kinds that have one, in the order given; empty when the queue's claims do
	 * not choose their jobs.
	 */
	public Map<String, RateLimit> kindLimits(String[] kinds) {
		RatePlanner chooser = this.planner;
		Map<String, RateLimit> limits = new LinkedHashMap<>();
		if (chooser != null) {
			for (String kind : kinds) {
				RateLimit kindLimit = chooser.kindLimit(kind);
				if (kindLimit != null) {
					limits.put(kind, kindLimit);
				}
			}
		}
		return limits;
	}

	/** The units of a kind's limit granted in its last period, by every instance, read from the database. */
	public int usedOfKind(String kind) {
		RateRepository windows = this.repository;
		return (windows != null && this.planner != null) ? windows.used(RatePlanner.kindWindow(kind)) : 0;
	}

	/** How long a kind's limit has held its jobs back without a break, here; zero when it does not. */
	public Duration kindHeldStretch(String kind) {
		RatePlanner chooser = this.planner;
		return (chooser != null) ? chooser.kindHeldStretch(kind) : Duration.ZERO;
	}

	/** Keys held back now by the queue's limit per key, as this instance last saw them. */
	public int keysHeld() {
		RatePlanner chooser = this.planner;
		return (chooser != null) ? chooser.keysHeld() : 0;
	}

	/**
	 * The claim under {@code permit} took jobs that use {@code used} units: gives back the rest. A claim
	 * that took fewer than it was granted found no more jobs due, so claims are no longer held.
	 */
	private void used(RatePermit permit, int used) {
		Grant grant = permit.grant();
		RateRepository windows = this.repository;
		if (grant == null || windows == null) {
			return;
		}
		int unused = permit.units() - used;
		this.backlog = unused <= 0;
		if (unused > 0) {
			windows.giveBack(this.name, grant, unused);
			if (!this.units.waiting()) {
				endHold();
			}
		}
	}

	/**
	 * How long claims are held still: until the next start frees, after a grant that fell short while
	 * jobs waited; zero when they are not held.
	 */
	public Duration heldFor() {
		long until = this.heldUntil;
		if (until == 0) {
			return Duration.ZERO;
		}
		long left = until - System.nanoTime();
		return (left > 0) ? Duration.ofNanos(left) : Duration.ZERO;
	}

	/**
	 * The starts granted in the last period, by every instance, read from the database; 0 without a
	 * limit.
	 */
	public int used() {
		RateRepository windows = this.repository;
		return (windows != null && this.limit != null) ? windows.used(this.name) : 0;
	}

	/**
	 * How long the queue's claims have been held by the limit without a break: since the first grant
	 * that fell short, until a claim gets all it asks for or finds no more jobs due; zero when not held.
	 */
	public Duration heldStretch() {
		long since = this.heldSince;
		return (since == 0) ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - since);
	}

	/** Holds claims until {@code until}; a hold that begins now starts the time-held meter's stretch. */
	private void hold(long now, long until) {
		this.heldUntil = until;
		if (this.heldSince == 0) {
			this.heldSince = now;
		}
	}

	private void endHold() {
		long since = this.heldSince;
		this.heldUntil = 0;
		if (since != 0) {
			this.heldSince = 0;
			if (this.metrics != null) {
				this.metrics.rateLimitHeld(this.queue, System.nanoTime() - since);
			}
		}
	}

}
