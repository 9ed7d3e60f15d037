package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.LongSupplier;
import dev.pgqueue.engine.job.ClaimStart;
import dev.pgqueue.engine.job.ClaimedJob;
import org.jspecify.annotations.Nullable;

/**
 * Where one queue's claims start reading the claim index, so that they do not walk over the jobs
 * already claimed.
 *
 * <p>Why: a claimed job leaves its entry in the claim index behind, and only vacuum removes it, or a
 * later scan that finds its row dead to every transaction and marks it. While any transaction in
 * the database holds a snapshot older than the claim (a report in {@code REPEATABLE READ}, a
 * {@code pg_dump}, a session left idle in transaction), neither can happen: every claim since the
 * snapshot was taken leaves an entry that each following claim visits, with a heap fetch, before it
 * reaches a job it can take. Claims slow down in proportion to how long the snapshot has lived (about
 * a quarter of a microsecond per entry on a small machine, so 65 ms per claim after five minutes at
 * 800 jobs a second) until the queue falls behind.
 *
 * <p>What: the floor remembers, per priority level, the head: the key ({@code run_at}, {@code id}),
 * in the claim index's order, of the last job the furthest claim of that level took. Every entry
 * before it was read by that claim and was either taken by it (so held by this instance's batch) or
 * skipped because another transaction held it, so the next claim has nothing to find there but a
 * job another transaction let go, which the sweeps below find. Starting at the last job rather than
 * the first spares each claim the rows of this instance's other batches still running. A claim reads
 * each known level in two ranges, in priority order: the {@code run_at}s a margin behind the head's
 * (up to, not including, the head's), then from the head's key on. The margin covers jobs that become
 * available with a {@code run_at} a little behind the head: enqueues whose transaction commits up to
 * that long after it started, and scheduled jobs promoted late. So a claim visits the entries of jobs
 * claimed within the margin of other {@code run_at}s, and of the head's own {@code run_at} only those
 * from the head on: the jobs other claims hold, not every job claimed before. That matters for a
 * burst that shares one {@code run_at} (an {@code enqueueAll} in one transaction, a promotion of jobs
 * due at one instant): a floor of {@code run_at} alone would leave every claim of the burst walking
 * all the entries the burst's earlier claims left, and while the oldest transaction in the database
 * is older than those claims (a held snapshot, or only claims and batches descheduled on a busy
 * machine), none of them can be skipped without a heap fetch: the later claims of a burst of 200 000
 * then read tens of thousands of entries each.
 *
 * <p>A job can still become available behind a floor: a transactional batch rolled back (a worker
 * died), a job another transaction locked without claiming it (an administrative retry that gave up),
 * a leased job rescued or released at shutdown, a job enqueued with a {@code run_at} in the
 * past or committed later than the margin, a job of the head's {@code run_at} behind the head (back
 * from a rolled-back batch of the same burst, from a transaction that started in the same
 * microsecond, or scheduled for the same instant and promoted by another instance's promoter after
 * jobs with higher ids), or a level of priority this instance has not seen yet. So every
 * {@code sweepInterval} (the queue's poll interval, at least {@link #MIN_SWEEP_INTERVAL}) one claim
 * is a sweep: it reads the index from the start, as a claim without
 * a floor does, and takes whatever comes first in claim order. A sweep that finds a job behind a
 * floor is followed by another at once, until one finds none, so a thousand rescued jobs are not
 * taken one batch per interval.
 *
 * <p>A sweep costs what every claim used to cost, and the jobs it claims wait for it. While a
 * snapshot is held that grows with the hold (65 ms after five minutes at 800 jobs a second), so
 * sweeps space out to keep their share of the time small: the next comes after the sweep interval
 * or {@value #SWEEP_SPACING} times the last sweep's duration, whichever is longer, at most
 * {@link #MAX_SWEEP_INTERVAL}. A job behind a floor therefore waits at most that long.
 *
 * <p>Floors only move forward: a head moves to a claim's last job of its level only if that comes
 * after it, and a job found behind a floor is taken by the sweep rather than moving the floor back
 * over every entry in between. The claim order is unchanged for the jobs a floor covers;
 * a job behind a floor waits at most one sweep interval longer.
 *
 * <p>Shared by every thread that claims for the queue in this instance (a transactional queue's
 * batches, a leased queue's poll thread and workers). Each instance keeps its own floors.
 */
public final class ClaimFloor implements ClaimScope {

	/** How far behind the head of each level a floor stays. */
	public static final Duration DEFAULT_MARGIN = Duration.ofSeconds(2);

	/** Shortest time between two sweeps, whatever the poll interval. */
	public static final Duration MIN_SWEEP_INTERVAL = Duration.ofSeconds(1);

	/** The next sweep waits at least this many times as long as the last one took. */
	public static final int SWEEP_SPACING = 50;

	/** While claims come back full, how often one claim still reads the margins behind the heads. */
	public static final Duration MARGIN_RECHECK = Duration.ofMillis(100);

	/**
	 * A claim that read the margins, found no job in them and took at least this long makes the next
	 * claims read them only every {@link #MARGIN_RECHECK}, full or not: its margins held rows that
	 * this instance's open batches keep locked, which it walked past for nothing.
	 */
	public static final Duration MARGIN_COSTLY = Duration.ofMillis(2);

	/** Longest time between two sweeps, however long they take. */
	public static final Duration MAX_SWEEP_INTERVAL = Duration.ofSeconds(30);

	private final long sweepIntervalNanos;

	private final Duration margin;

	private final boolean enabled;

	private final LongSupplier nanoTime;

	/** Floor per priority level, highest priority first (claim order). */
	private final TreeMap<Integer, Floor> floors = new TreeMap<>((a, b) -> Integer.compare(b, a));

	private long lastSweep;

	private long nextSweepAfter;

	private boolean sweeping;

	private boolean sweepAgain = true;

	/** Whether the last claim from the floors came back full: the next reads from the heads only. */
	private boolean lastFull;

	/** When a claim last read the margins. */
	private long marginsReadAt;

	/** Whether the last claim that read the margins found nothing there and took long: read them less. */
	private boolean marginsCostly;

	/** The floors as they were when the running sweep started: what it finds behind them, only it finds. */
	private Map<Integer, Floor> sweepFloors = Map.of();

	/**
	 * @param sweepInterval time between two sweeps while they are cheap
	 * @param margin how far behind the head of each level its floor stays
	 */
	public ClaimFloor(Duration sweepInterval, Duration margin) {
		this(sweepInterval, margin, true, System::nanoTime);
	}

	ClaimFloor(Duration sweepInterval, Duration margin, boolean enabled, LongSupplier nanoTime) {
		this.sweepIntervalNanos = sweepInterval.toNanos();
		this.margin = margin;
		this.enabled = enabled;
		this.nanoTime = nanoTime;
		this.lastSweep = nanoTime.getAsLong();
		this.nextSweepAfter = this.sweepIntervalNanos;
	}

	/**
	 * No floor: every claim reads the claim index from its start, as pgqueue did before floors. For
	 * measuring what floors are worth, for queues without floors, and for runs on the calling thread
	 * ({@link CallingThreadRun}), which must find every due job.
	 */
	public static ClaimFloor none() {
		return new ClaimFloor(Duration.ZERO, Duration.ZERO, false, System::nanoTime);
	}

	/** Where the next claim starts. */
	synchronized ClaimStart next() {
		if (!this.enabled) {
			return ClaimStart.SWEEP;
		}
		long now = this.nanoTime.getAsLong();
		boolean due = this.sweepAgain || this.floors.isEmpty() || now - this.lastSweep >= this.nextSweepAfter;
		if (due && !this.sweeping) {
			// One sweep at a time: the instance's other claims go on from the floors meanwhile.
			this.sweeping = true;
			this.sweepAgain = false;
			this.lastSweep = now;
			this.sweepFloors = Map.copyOf(this.floors);
			return ClaimStart.SWEEP;
		}
		if (this.floors.isEmpty()) {
			return ClaimStart.SWEEP;
		}
		// While claims come back full, the margins hold what earlier claims of this instance took (locked
		// by its open batches, or dead): read them again only every MARGIN_RECHECK, so that a claim does
		// not walk past every job in flight. The same when claims come back short but reading the
		// margins was slow and found nothing: many workers whose batches hold most of a thin backlog.
		// Late commits behind a head wait that much longer.
		boolean margins = !(this.lastFull || this.marginsCostly) || now - this.marginsReadAt >= MARGIN_RECHECK.toNanos();
		if (margins) {
			this.marginsReadAt = now;
		}
		List<Integer> priorities = new ArrayList<>();
		List<Instant> fromRunAts = new ArrayList<>();
		List<Long> fromIds = new ArrayList<>();
		List<@Nullable Instant> untilRunAts = new ArrayList<>();
		for (Map.Entry<Integer, Floor> level : this.floors.entrySet()) {
			Floor floor = level.getValue();
			if (margins && floor.marginAt().isBefore(floor.head().runAt())) {
				priorities.add(level.getKey());
				fromRunAts.add(floor.marginAt());
				fromIds.add(Long.MIN_VALUE);
				untilRunAts.add(floor.head().runAt());
			}
			priorities.add(level.getKey());
			fromRunAts.add(floor.head().runAt());
			fromIds.add(floor.head().id());
			untilRunAts.add(null);
		}
		return ClaimStart.fromFloors(priorities.stream().mapToInt(Integer::intValue).toArray(),
				fromRunAts.toArray(new Instant[0]), fromIds.stream().mapToLong(Long::longValue).toArray(),
				untilRunAts.toArray(new Instant[0]));
	}

	/**
	 * Runs one claim from where the next claim starts, and moves the floors by what it returned.
	 * @param claim the claim statement, given where to start
	 * @return the jobs claimed
	 */
	@Override
	public List<ClaimedJob> claim(Function<ClaimStart, List<ClaimedJob>> claim) {
		return claim(Integer.MAX_VALUE, claim);
	}

	@Override
	public List<ClaimedJob> claim(int limit, Function<ClaimStart, List<ClaimedJob>> claim) {
		ClaimStart start = next();
		List<ClaimedJob> jobs = null;
		long began = this.nanoTime.getAsLong();
		try {
			jobs = claim.apply(start);
			return jobs;
		}
		finally {
			claimed(start, jobs, this.nanoTime.getAsLong() - began);
			if (!start.isSweep()) {
				noteFull(jobs != null && jobs.size() >= limit);
			}
		}
	}

	private synchronized void noteFull(boolean full) {
		this.lastFull = full;
	}

	/**
	 * What a claim that started at {@code start} returned, in any order ({@code null} when it failed),
	 * and how long it took.
	 */
	synchronized void claimed(ClaimStart start, @Nullable List<ClaimedJob> jobs, long tookNanos) {
		if (!this.enabled) {
			return;
		}
		if (jobs != null && !start.isSweep() && readsMargins(start)) {
			this.marginsCostly = tookNanos >= MARGIN_COSTLY.toNanos() && !foundInMargins(start, jobs);
		}
		boolean behind = false;
		if (jobs != null && !jobs.isEmpty()) {
			// The last job of each level at or after its head is where that level's next claim begins:
			// every entry before it in the claim index was read by this claim and was either taken by it
			// (held by this instance now) or held by another transaction (dead soon, or back behind the
			// floor, where a sweep finds it).
			Map<Integer, Key> heads = new HashMap<>();
			// A sweep's jobs are behind a floor if they were when it started: other claims may have
			// moved the heads past its jobs while it ran.
			Map<Integer, Floor> startedFrom = (start.isSweep() && this.sweeping) ? this.sweepFloors : Map.of();
			for (ClaimedJob claimed : jobs) {
				int priority = claimed.job().priority();
				Key key = new Key(claimed.job().runAt(), claimed.id());
				Floor startFloor = startedFrom.get(priority);
				if (startFloor != null && startFloor.isBehind(key)) {
					behind = true;
				}
				Floor floor = this.floors.get(priority);
				if (floor == null || key.compareTo(floor.head()) >= 0) {
					heads.merge(priority, key, (a, b) -> (a.compareTo(b) >= 0) ? a : b);
				}
			}
			for (Map.Entry<Integer, Key> head : heads.entrySet()) {
				Floor floor = this.floors.get(head.getKey());
				Instant marginAt = head.getValue().runAt().minus(this.margin);
				if (floor == null) {
					this.floors.put(head.getKey(), new Floor(marginAt, head.getValue()));
				}
				else if (head.getValue().compareTo(floor.head()) > 0) {
					this.floors.put(head.getKey(), new Floor(
							marginAt.isAfter(floor.marginAt()) ? marginAt : floor.marginAt(), head.getValue()));
				}
			}
		}
		if (start.isSweep() && this.sweeping) {
			this.sweeping = false;
			this.nextSweepAfter = Math.max(this.sweepIntervalNanos,
					Math.min(MAX_SWEEP_INTERVAL.toNanos(), tookNanos * SWEEP_SPACING));
			// A failed sweep, or one that found jobs behind a floor, is followed by another at once.
			this.sweepAgain = (jobs == null) || behind;
		}
	}

	private static boolean readsMargins(ClaimStart start) {
		for (Instant until : start.untilRunAts()) {
			if (until != null) {
				return true;
			}
		}
		return false;
	}

	/** Whether a claim took a job from a margin: before its level's head's {@code run_at} as it started. */
	private static boolean foundInMargins(ClaimStart start, List<ClaimedJob> jobs) {
		Map<Integer, Instant> headRunAts = new HashMap<>();
		for (int i = 0; i < start.priorities().length; i++) {
			Instant until = start.untilRunAts()[i];
			if (until != null) {
				headRunAts.put(start.priorities()[i], until);
			}
		}
		for (ClaimedJob claimed : jobs) {
			Instant headRunAt = headRunAts.get(claimed.job().priority());
			if (headRunAt != null && claimed.job().runAt().isBefore(headRunAt)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Floors per priority level, highest first: where the margin begins; empty before the first claim
	 * found a job.
	 */
	synchronized Map<Integer, Instant> floors() {
		Map<Integer, Instant> floors = new HashMap<>();
		this.floors.forEach((priority, floor) -> floors.put(priority, floor.marginAt()));
		return Map.copyOf(floors);
	}

	/** Heads per priority level: the last job the furthest claim of each level took. */
	synchronized Map<Integer, Key> heads() {
		Map<Integer, Key> heads = new HashMap<>();
		this.floors.forEach((priority, floor) -> heads.put(priority, floor.head()));
		return Map.copyOf(heads);
	}

	/** A position in a level of the claim index: its order within a priority level. */
	record Key(Instant runAt, long id) implements Comparable<Key> {

		@Override
		public int compareTo(Key other) {
			int byRunAt = this.runAt.compareTo(other.runAt);
			return (byRunAt != 0) ? byRunAt : Long.compare(this.id, other.id);
		}

	}

	/**
	 * One level's floor: claims read the {@code run_at}s from {@code marginAt} up to the head's, then
	 * from the head on.
	 */
	private record Floor(Instant marginAt, Key head) {

		/** Whether a job at this key is in neither range (only a sweep finds it). */
		boolean isBehind(Key key) {
			if (key.runAt().isBefore(this.marginAt)) {
				return true;
			}
			return key.compareTo(this.head) < 0 && !key.runAt().isBefore(this.head.runAt());
		}

	}

}
