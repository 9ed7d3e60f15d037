package dev.pgqueue.engine.limits;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.ToIntFunction;

import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.RateLimit;
import dev.pgqueue.engine.sql.LimitRepository;
import dev.pgqueue.engine.sql.LimitRepository.Candidate;
import dev.pgqueue.engine.sql.RateRepository;
import dev.pgqueue.engine.sql.RateRepository.Grant;
import dev.pgqueue.engine.sql.RateRepository.Unused;
import dev.pgqueue.engine.sql.RateRepository.Wanted;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses the jobs a claim may start under rate limits that depend on the job: per kind, per
 * concurrency key, or any limit when jobs weigh more than one unit. It reads the next due jobs without
 * locking them (as {@code limits.LimitedClaims} does), adds up what they would use of each limit they
 * fall under, reserves that from the limits' windows in one short transaction of its own, and keeps,
 * in claim order, the jobs whose every limit granted their weight. The claim then takes exactly those
 * jobs, and the units of any it could not take (another claimer took it first) go back.
 *
 * <p>A claim reserves once: every limit books its units at the one instant its jobs record as their
 * start, so no window counts a start at another instant than the job's. A key or kind whose limit fell
 * short is left out of the rest of the claim, and of later claims until its window frees a unit, so
 * that it never holds other keys up, and keeps its own jobs in order: a later, lighter job of a key
 * never overtakes an earlier one. The next claim comes at once when other jobs may wait behind those
 * left out. A queue limit that fell short ends the claim, so that no job overtakes the first in line.
 */
final class RatePlanner {

	private static final Logger logger = LoggerFactory.getLogger(RatePlanner.class);

	/** Queue, kind and limit of the overweight jobs warned of. */
	private static final Set<String> OVERWEIGHT_WARNED = ConcurrentHashMap.newKeySet();

	/** Keys remembered as at their limit, at most; past that, one is forgotten for each new one. */
	private static final int MAX_FULL_KEYS = 10_000;

	private final QueueSettings settings;

	private final @Nullable RateLimit queueLimit;

	private final Function<String, @Nullable RateLimit> kindLimits;

	private final ToIntFunction<String> weights;

	private final LimitRepository candidates;

	private final RateRepository windows;

	/** Keys at their limit, with the {@link System#nanoTime()} their window frees a unit. */
	private final Map<String, Long> fullKeys = new ConcurrentHashMap<>();

	/**
	 * Jobs chosen by this instance's claims in progress: the next claims read past them, so that the
	 * claims of one instance do not choose the same jobs and lose them to each other.
	 */
	private final Set<Long> claiming = ConcurrentHashMap.newKeySet();

	/** Kinds at their limit, likewise. */
	private final Map<String, Long> fullKinds = new ConcurrentHashMap<>();

	/**
	 * Since when ({@link System#nanoTime()}) each kind's limit has held its jobs back without a break:
	 * from its first refusal until a claim reads the kind's jobs and its limit refuses none of them.
	 */
	private final Map<String, Long> kindsHeldSince = new ConcurrentHashMap<>();

	RatePlanner(QueueSettings settings, Function<String, @Nullable RateLimit> kindLimits, ToIntFunction<String> weights,
			LimitRepository candidates, RateRepository windows) {
		this.settings = settings;
		this.queueLimit = settings.rateLimit();
		this.kindLimits = kindLimits;
		this.weights = weights;
		this.candidates = candidates;
		this.windows = windows;
	}

	/**
	 * Whether the queue's claims must be planned job by job: it has limits per kind or per key, or its
	 * limit counts weights above one.
	 */
	static boolean needed(QueueSettings settings, String[] kinds, Function<String, @Nullable RateLimit> kindLimits,
			ToIntFunction<String> weights) {
		if (settings.perKeyRateLimit() != null) {
			return true;
		}
		for (String kind : kinds) {
			if (kindLimits.apply(kind) != null || (settings.rateLimit() != null && weights.applyAsInt(kind) > 1)) {
				return true;
			}
		}
		return false;
	}

	/** The window name of a queue's limit; the same as the queue-wide {@link RateGate}'s. */
	static String queueWindow(String queue) {
		return "queue:" + queue;
	}

	static String kindWindow(String kind) {
		return "kind:" + kind;
	}

	/**
	 * The prefix of the window names of a queue's keys: {@code key:<length of the queue's name>:<queue>:},
	 * then the key. The length makes the name unambiguous whatever either holds: queue {@code a:b} with
	 * key {@code c} ({@code key:3:a:b:c}) and queue {@code a} with key {@code b:c} ({@code key:1:a:b:c})
	 * never share a window.
	 */
	static String keyWindowPrefix(String queue) {
		return RateRepository.KEY_WINDOW_PREFIX + queue.length() + ":" + queue + ":";
	}

	/**
	 * Chooses up to {@code wanted} jobs of the given kinds whose limits granted their starts.
	 * @param refused told of the units each limit refused: the limit's label and how many jobs waited
	 */
	Plan plan(int wanted, String[] kinds, Refusals refused) {
		long now = System.nanoTime();
		forgetFreed(this.fullKeys, now);
		forgetFreed(this.fullKinds, now);
		Set<String> shortKeys = new HashSet<>(this.fullKeys.keySet());
		Set<String> shortKinds = new HashSet<>(this.fullKinds.keySet());
		String[] readable = Arrays.stream(kinds).filter((kind) -> !shortKinds.contains(kind)).toArray(String[]::new);
		if (readable.length == 0) {
			return Plan.none(earliest(this.fullKinds.values(), now));
		}
		// One more than wanted says whether jobs wait beyond this claim.
		int scan = wanted + 1;
		List<Candidate> read = this.candidates.candidates(this.settings.name(), perKeyHint(), readable, null,
				shortKeys, List.copyOf(this.claiming), this.settings.limits().orderedByKey(), scan);
		List<Candidate> tentative = read.subList(0, Math.min(wanted, read.size()));
		if (tentative.isEmpty()) {
			// Nothing to start but jobs of keys at their limit, perhaps: claim again when the first of them frees.
			return Plan.none(earliest(this.fullKeys.values(), now));
		}
		Map<String, Wanted> demand = new LinkedHashMap<>();
		Map<Long, Candidate> byId = new HashMap<>();
		for (Candidate candidate : tentative) {
			byId.put(candidate.id(), candidate);
			for (Limit limit : limitsOf(candidate)) {
				demand.merge(limit.window(), new Wanted(limit.window(), limit.rate().starts(), limit.rate().periodMicros(),
						weightOf(candidate, limit)), (a, b) -> new Wanted(a.name(), a.starts(), a.periodMicros(),
								a.units() + b.units()));
			}
		}
		// One reservation per claim: every limit books at the one instant the claim's jobs record as their start.
		Map<String, Grant> grants = this.windows.reserveAll(new ArrayList<>(demand.values()));
		Map<String, Integer> left = new HashMap<>();
		grants.forEach((window, grant) -> left.put(window, grant.granted()));
		List<Long> chosen = new ArrayList<>();
		long earliestFree = Long.MAX_VALUE;
		boolean queueShort = false;
		for (Candidate candidate : tentative) {
			if (queueShort || shortKinds.contains(candidate.kind())
					|| (candidate.key() != null && shortKeys.contains(candidate.key()))) {
				continue;
			}
			List<Limit> limits = limitsOf(candidate);
			Limit lacking = null;
			for (Limit limit : limits) {
				if (left.getOrDefault(limit.window(), 0) < weightOf(candidate, limit)) {
					lacking = limit;
					break;
				}
			}
			if (lacking == null) {
				for (Limit limit : limits) {
					left.merge(limit.window(), -weightOf(candidate, limit), Integer::sum);
				}
				chosen.add(candidate.id());
				continue;
			}
			long freeAt = freeAt(grants.get(lacking.window()), now);
			earliestFree = Math.min(earliestFree, freeAt);
			refused.refused(lacking.label(), 1);
			switch (lacking.type()) {
				case QUEUE -> queueShort = true;
				case KIND -> {
					shortKinds.add(candidate.kind());
					remember(this.fullKinds, candidate.kind(), freeAt);
				}
				case KEY -> {
					shortKeys.add(candidate.key());
					remember(this.fullKeys, candidate.key(), freeAt);
				}
			}
		}
		noteKindsHeld(readable, shortKinds, now);
		List<Unused> unused = new ArrayList<>();
		left.forEach((window, units) -> {
			if (units > 0) {
				unused.add(new Unused(window, grants.get(window), units));
			}
		});
		this.windows.giveBackAll(unused);
		this.claiming.addAll(chosen);
		Instant startedAt = grants.values().stream().map(Grant::grantedAt).max(Instant::compareTo).orElse(null);
		// Jobs of keys or kinds found at their limit were left out: others may be waiting behind them, which
		// the next claim, knowing those keys, reads at once. Only the queue's own limit makes claims wait.
		boolean skipped = earliestFree != Long.MAX_VALUE;
		boolean othersWaiting = skipped && !queueShort && read.size() > tentative.size();
		long heldNanos = (chosen.isEmpty() && skipped && !othersWaiting) ? Math.max(0, earliestFree - now) : 0;
		return new Plan(chosen, byId, grants, startedAt, heldNanos, othersWaiting);
	}

	/**
	 * Starts or ends the held stretch of each kind this claim could read: a kind refused starts one (if
	 * none runs); a kind read and not refused, or not found among the next due jobs, ends it.
	 */
	private void noteKindsHeld(String[] readable, Set<String> shortKinds, long now) {
		for (String kind : readable) {
			if (this.kindLimits.apply(kind) == null) {
				continue;
			}
			if (shortKinds.contains(kind)) {
				this.kindsHeldSince.putIfAbsent(kind, now);
			}
			else {
				this.kindsHeldSince.remove(kind);
			}
		}
	}

	/** A kind's limit, or {@code null}. */
	@Nullable RateLimit kindLimit(String kind) {
		return this.kindLimits.apply(kind);
	}

	/** How long a kind's limit has held its jobs back without a break; zero when it does not. */
	Duration kindHeldStretch(String kind) {
		Long since = this.kindsHeldSince.get(kind);
		return (since == null) ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - since);
	}

	private static long earliest(Iterable<Long> instants, long now) {
		long earliest = Long.MAX_VALUE;
		for (long instant : instants) {
			earliest = Math.min(earliest, instant);
		}
		return (earliest == Long.MAX_VALUE) ? 0 : Math.max(0, earliest - now);
	}

	/** The claim under {@code plan} ended, whether it took its jobs or failed: later claims may read them. */
	void finished(Plan plan) {
		if (!plan.chosen().isEmpty()) {
			this.claiming.removeAll(plan.chosen());
		}
	}

	/**
	 * Gives back the units of the chosen jobs that the claim did not take.
	 * @param taken ids of the jobs the claim took
	 */
	void giveBackUntaken(Plan plan, Set<Long> taken) {
		Map<String, Integer> units = new HashMap<>();
		for (Long id : plan.chosen()) {
			if (taken.contains(id)) {
				continue;
			}
			Candidate candidate = plan.candidates().get(id);
			if (candidate == null) {
				continue;
			}
			for (Limit limit : limitsOf(candidate)) {
				units.merge(limit.window(), weightOf(candidate, limit), Integer::sum);
			}
		}
		List<Unused> unused = new ArrayList<>();
		units.forEach((window, count) -> {
			Grant grant = plan.grants().get(window);
			if (grant != null) {
				unused.add(new Unused(window, grant, count));
			}
		});
		this.windows.giveBackAll(unused);
	}

	/** Keys that the planner holds back now, until their windows free a unit. */
	int keysHeld() {
		forgetFreed(this.fullKeys, System.nanoTime());
		return this.fullKeys.size();
	}

	private int perKeyHint() {
		// Leased claims skip keys that already run as many jobs as their concurrency limit allows.
		return this.settings.limits().orderedByKey() ? 0 : this.settings.limits().perKey();
	}

	/**
	 * The units of a limit a job uses: its own weight if it was enqueued with one, else its kind's; a
	 * weight above the limit (which start-up and the enqueue refuse where they know the limit) uses the
	 * whole limit, so that the job starts alone in a period rather than never.
	 */
	private int weightOf(Candidate candidate, Limit limit) {
		Integer own = candidate.rateWeight();
		int weight = (own != null) ? own : this.weights.applyAsInt(candidate.kind());
		if (weight > limit.rate().starts()) {
			// A candidate carries the row's internal id alone, which no admin call takes: the warning
			// names the kind and weight instead.
			warnOverweight(this.settings.name(), candidate.kind(), null, weight, limit.label(), limit.rate().starts());
			return limit.rate().starts();
		}
		return weight;
	}

	/**
	 * Warns, once per queue, kind and limit, of a job heavier than a limit it falls under: it is counted
	 * as the whole limit.
	 * @param job the job's public id where known, as {@link dev.pgqueue.JobAdmin} finds it
	 */
	static void warnOverweight(String queue, String kind, @Nullable UUID job, int weight, String limit, int starts) {
		if (OVERWEIGHT_WARNED.add(queue + "\u0000" + kind + "\u0000" + limit)
				&& OVERWEIGHT_WARNED.size() < MAX_FULL_KEYS) {
			logger.warn("Queue '{}': {} of kind '{}' has a rate weight of {}, above its {} limit of {} starts a "
					+ "period; it is counted as {} (the whole period) so that it can start. Enqueue jobs of that kind "
					+ "with a weight of at most {}, split them, or raise the limit.", queue,
					(job != null) ? "job " + job : "a job", kind, weight, limit, starts, starts, starts);
		}
	}

	private List<Limit> limitsOf(Candidate candidate) {
		List<Limit> limits = new ArrayList<>(3);
		if (this.queueLimit != null) {
			limits.add(new Limit(Limit.Type.QUEUE, queueWindow(this.settings.name()), this.queueLimit, "queue"));
		}
		RateLimit kind = this.kindLimits.apply(candidate.kind());
		if (kind != null) {
			limits.add(new Limit(Limit.Type.KIND, kindWindow(candidate.kind()), kind, "kind:" + candidate.kind()));
		}
		RateLimit perKey = this.settings.perKeyRateLimit();
		if (perKey != null && candidate.key() != null) {
			limits.add(new Limit(Limit.Type.KEY, keyWindowPrefix(this.settings.name()) + candidate.key(), perKey,
					"per-key"));
		}
		return limits;
	}

	private static long freeAt(@Nullable Grant grant, long now) {
		Long freeIn = (grant != null) ? grant.freeInMicros() : null;
		// A grant that fell short without saying when a unit frees (the weight is above what the window
		// can ever grant at once is refused at start-up) is tried again after a fiftieth of a second.
		return now + ((freeIn != null) ? TimeUnit.MICROSECONDS.toNanos(Math.max(0, freeIn)) : 20_000_000L);
	}

	private static void remember(Map<String, Long> full, String name, long until) {
		if (full.size() >= MAX_FULL_KEYS) {
			Iterator<String> oldest = full.keySet().iterator();
			if (oldest.hasNext()) {
				full.remove(oldest.next());
			}
		}
		full.put(name, until);
	}

	private static void forgetFreed(Map<String, Long> full, long now) {
		if (!full.isEmpty()) {
			full.values().removeIf((until) -> until - now <= 0);
		}
	}

	/** One limit a job falls under: its window, its rate, and the label its refusals are counted under. */
	private record Limit(Type type, String window, RateLimit rate, String label) {

		enum Type {
			QUEUE, KIND, KEY
		}

	}

	/** Told of the jobs a limit did not let start. */
	interface Refusals {

		void refused(String limit, int jobs);

	}

	/**
	 * The jobs a claim may take and the grants behind them.
	 * @param chosen the jobs' ids, in claim order
	 * @param candidates the jobs read, by id
	 * @param grants the grant of each limit's window
	 * @param startedAt the latest instant of the grants: the start the chosen jobs record; {@code null}
	 * when nothing was granted
	 * @param heldNanos when nothing was chosen because limits fell short, how long until the first of them
	 * frees a unit; otherwise 0
	 * @param claimAgain whether jobs of other keys or kinds may wait behind those left out at their limit:
	 * the next claim should come at once, not after the poll interval
	 */
	public record Plan(List<Long> chosen, Map<Long, Candidate> candidates, Map<String, Grant> grants,
			@Nullable Instant startedAt, long heldNanos, boolean claimAgain) {

		static Plan none(long heldNanos) {
			return new Plan(List.of(), Map.of(), Map.of(), null, heldNanos, false);
		}

	}

}
