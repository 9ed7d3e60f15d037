package dev.pgqueue.engine.limits;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToIntFunction;
import java.util.zip.CRC32C;

import dev.pgqueue.engine.job.ClaimStart;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.settings.ConcurrencyLimits;
import dev.pgqueue.engine.sql.LimitRepository;
import dev.pgqueue.engine.sql.LimitRepository.Candidate;
import dev.pgqueue.engine.sql.LimitRepository.Running;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionTemplate;

/**
 * Claims that respect a queue's concurrency limits across every instance: at most so many jobs of
 * a concurrency key, of a kind and of the queue running at once, and, on a queue ordered by key, a
 * key's jobs one after the other in enqueue order.
 *
 * <p>Row locks alone cannot say "one job of tenant 42 at a time": two claims take two different
 * rows. A limit is a <em>group</em> (a key, a kind or the queue) with a number of slots, and each
 * mode holds a group's slots where its jobs run:
 * <ul>
 * <li><b>Transactional</b>: a batch holds its jobs' row locks for its whole transaction, and it
 * holds a slot the same way, as a transaction-level advisory lock {@code (group, slot)} taken with
 * {@code pg_try_advisory_xact_lock}. A claim reads the next due jobs without locking them, tries
 * one slot of each group per job it wants (never waiting: a slot held elsewhere is skipped, like a
 * row under {@code SKIP LOCKED}), then locks the rows of the jobs it got slots for. Commit,
 * rollback or a dead connection releases every slot with the batch.</li>
 * <li><b>Leased</b>: a job runs after its claim committed, outside any transaction, so nothing can
 * hold a lock for it; its row says {@code running} instead. The claim counts the running jobs of
 * each group, under a transaction-level lock on the group that makes claims of the same group take
 * turns: the count is read by a statement that starts after the lock is granted, so it sees every
 * job the previous holder leased. Queue and kind groups are locked waiting, in a fixed order, so
 * claims never deadlock; key groups only if free, so a key being claimed elsewhere is skipped.</li>
 * </ul>
 *
 * <p>A key at its limit never holds the others up: a claim that found keys full reads on past
 * them (up to {@value #ROUNDS} reads), so it does not come back short while other keys' jobs
 * wait. On a queue ordered by key, a job is a candidate only when no job of its key enqueued before
 * it is unfinished (waiting, scheduled for a retry, or running), which by itself lets one job of a
 * key run at a time, in order, without any slot.
 *
 * <p>Groups are named by a 32-bit hash of the schema, queue and key: two keys whose hashes collide
 * share their slots, which can only make the limit stricter, never looser.
 */
public final class LimitedClaims implements JobClaims {

	/** Reads of the queue one claim makes at most, reading on past full keys. */
	static final int ROUNDS = 3;

	/** How many candidates one read considers per job wanted. */
	private static final int SCAN_FACTOR = 4;

	private static final int MIN_SCAN = 32;

	private final String schema;

	private final String queue;

	private final ConcurrencyLimits limits;

	private final int batches;

	private final ToIntFunction<String> kindLimits;

	private final LimitRepository repository;

	private final TransactionTemplate transactions;

	private final ThreadLocal<Boolean> stoppedAtShare = ThreadLocal.withInitial(() -> Boolean.FALSE);

	/**
	 * @param schema the schema, part of every group's name
	 * @param queue the queue
	 * @param limits the queue's limits
	 * @param batches transactional mode: how many batches this instance runs at once (the queue's
	 * concurrency), over which a group's slots are shared
	 * @param kindLimits most jobs of a kind running at once, 0 for none
	 * @param repository the SQL
	 * @param transactions the transactions of leased claims (a transactional claim runs in its
	 * batch's)
	 */
	public LimitedClaims(String schema, String queue, ConcurrencyLimits limits, int batches,
			ToIntFunction<String> kindLimits, LimitRepository repository, TransactionTemplate transactions) {
		this.schema = schema;
		this.queue = queue;
		this.limits = limits;
		this.batches = batches;
		this.kindLimits = kindLimits;
		this.repository = repository;
		this.transactions = transactions;
	}

	/** Whether a queue with these limits and kinds needs limited claims at all. */
	public static boolean needed(ConcurrencyLimits limits, String[] kinds, ToIntFunction<String> kindLimits) {
		return !limits.isNone() || Arrays.stream(kinds).anyMatch((kind) -> kindLimits.applyAsInt(kind) > 0);
	}

	@Override
	public boolean limited() {
		return true;
	}

	@Override
	public List<ClaimedJob> lock(String[] kinds, int limit, ClaimStart start) {
		Choice choice = new Choice(limit);
		Map<Integer, Set<Integer>> held = new HashMap<>();
		List<ClaimedJob> claimed = new ArrayList<>();
		String[] readable = kinds;
		for (int round = 0; round < ROUNDS && !choice.isFull() && readable.length > 0; round++) {
			int scan = scanSize(limit - choice.size());
			List<Candidate> candidates = onlyChosen(this.repository.candidates(this.queue, 0, readable, buckets(start),
					choice.fullKeys, choice.excludedIds(), this.limits.orderedByKey(), scan), start);
			List<Candidate> wanted = choice.tentative(candidates, this::groupsOf, this::batchShare);
			Map<Group, Integer> granted = trySlots(wanted, choice, held);
			List<Candidate> taken = choice.take(wanted, this::groupsOf, granted);
			if (!taken.isEmpty()) {
				List<ClaimedJob> locked = this.repository.lockChosen(LimitRepository.ids(taken));
				claimed.addAll(locked);
				// A job another batch locked since it was read is given up; its slots stay held by this
				// batch and serve the next read.
				choice.lost(taken, locked, this::groupsOf);
			}
			readable = choice.readableKinds(readable);
			if ((candidates.size() < scan && !choice.lostAny) || choice.queueFull) {
				break;
			}
		}
		this.stoppedAtShare.set(choice.shareUsedUp && !claimed.isEmpty());
		return claimed;
	}

	@Override
	public boolean stoppedAtShare() {
		return this.stoppedAtShare.get();
	}

	@Override
	public List<ClaimedJob> lease(String[] kinds, int limit, String owner, Duration lease, ClaimStart start) {
		List<ClaimedJob> claimed = this.transactions.execute((status) -> leaseInTransaction(kinds, limit, owner,
				lease, start));
		return (claimed != null) ? claimed : List.of();
	}

	private List<ClaimedJob> leaseInTransaction(String[] kinds, int limit, String owner, Duration lease,
			ClaimStart start) {
		Choice choice = new Choice(limit);
		int perKeyHint = this.limits.orderedByKey() ? 0 : this.limits.perKey();
		Set<Group> locked = new HashSet<>();
		String[] readable = kinds;
		for (int round = 0; round < ROUNDS && !choice.isFull() && readable.length > 0; round++) {
			int scan = scanSize(limit - choice.size());
			List<Candidate> candidates = onlyChosen(this.repository.candidates(this.queue, perKeyHint, readable,
					buckets(start), choice.fullKeys, choice.excludedIds(), this.limits.orderedByKey(), scan), start);
			if (candidates.isEmpty()) {
				break;
			}
			if (round == 0) {
				lockQueueAndKinds(kinds, locked);
			}
			lockKeys(candidates, limit - choice.size(), locked, choice);
			Map<Group, Integer> running = running();
			// Only jobs whose key group this claim holds (or that have none) may be leased.
			List<Candidate> lockable = candidates.stream().filter((candidate) -> {
				Group group = keyGroup(candidate.key());
				return group == null || locked.contains(group);
			}).toList();
			List<Candidate> wanted = choice.tentative(lockable, this::groupsOf,
					(group) -> group.limit() - running.getOrDefault(group, 0));
			Map<Group, Integer> granted = new HashMap<>();
			wanted.forEach((candidate) -> groupsOf(candidate).forEach((group) -> granted.merge(group, 1, Integer::sum)));
			choice.take(wanted, this::groupsOf, granted);
			readable = choice.readableKinds(readable);
			if (candidates.size() < scan || choice.queueFull) {
				break;
			}
		}
		return choice.ids.isEmpty() ? List.of() : this.repository.leaseChosen(choice.ids, owner, lease, start.startedAt());
	}

	/**
	 * Transactional mode: how many of a group's slots one batch may take. A batch runs its jobs one
	 * after the other while it holds all their slots, so a second job of a key would only wait in
	 * it while keeping another batch from running that key; a kind's or the queue's slots are
	 * shared out over the instance's batches.
	 */
	private int batchShare(Group group) {
		if (group.type() == Group.Type.KEY) {
			return 1;
		}
		return Math.max(1, (group.limit() + this.batches - 1) / this.batches);
	}

	/** Waits for the queue's group and its limited kinds' groups, in the order of their keys. */
	private void lockQueueAndKinds(String[] kinds, Set<Group> locked) {
		TreeSet<Integer> keys = new TreeSet<>();
		if (this.limits.maxRunning() > 0) {
			Group group = queueGroup();
			keys.add(group.key());
			locked.add(group);
		}
		for (String kind : kinds) {
			Group group = kindGroup(kind);
			if (group != null) {
				keys.add(group.key());
				locked.add(group);
			}
		}
		if (!keys.isEmpty()) {
			this.repository.lockGroups(keys.stream().mapToInt(Integer::intValue).toArray());
		}
	}

	/**
	 * Takes the groups of the first candidates' keys where they are free, as many as the jobs still
	 * wanted could use; a key being claimed elsewhere is full.
	 */
	private void lockKeys(List<Candidate> candidates, int jobsWanted, Set<Group> locked, Choice choice) {
		if (this.limits.perKey() == 0 || this.limits.orderedByKey()) {
			return;
		}
		Map<Integer, Group> wanted = new LinkedHashMap<>();
		int usable = 0;
		for (Candidate candidate : candidates) {
			if (usable >= jobsWanted) {
				break;
			}
			Group group = keyGroup(candidate.key());
			if (group == null) {
				usable++;
			}
			else if (locked.contains(group)) {
				usable++;
			}
			else if (!choice.fullKeys.contains(candidate.key()) && wanted.putIfAbsent(group.key(), group) == null) {
				usable += this.limits.perKey();
			}
		}
		if (wanted.isEmpty()) {
			return;
		}
		int[] keys = wanted.keySet().stream().mapToInt(Integer::intValue).toArray();
		int[] ones = new int[keys.length];
		List<int[]> slotZero = new ArrayList<>(keys.length);
		for (int i = 0; i < keys.length; i++) {
			ones[i] = 1;
			slotZero.add(new int[] { 0 });
		}
		Set<Integer> taken = new HashSet<>();
		this.repository.trySlots(keys, ones, slotZero).forEach((pair) -> taken.add(pair[0]));
		wanted.forEach((key, group) -> {
			if (taken.contains(key)) {
				locked.add(group);
			}
			else {
				choice.fullKeys.add(group.name());
			}
		});
	}

	/** The queue's running jobs (leased mode), per group. */
	private Map<Group, Integer> running() {
		Map<Group, Integer> running = new HashMap<>();
		for (Running row : this.repository.running(this.queue)) {
			for (Group group : groupsOf(row.kind(), row.key())) {
				running.merge(group, row.count(), Integer::sum);
			}
		}
		return running;
	}

	/**
	 * Tries, without waiting, one slot of each of a job's groups per wanted job; slots taken in an
	 * earlier read of the same claim and not used yet count first. Returns the slots granted per group.
	 */
	private Map<Group, Integer> trySlots(List<Candidate> wanted, Choice choice, Map<Integer, Set<Integer>> held) {
		Map<Group, Integer> demand = new LinkedHashMap<>();
		wanted.forEach((candidate) -> groupsOf(candidate).forEach((group) -> demand.merge(group, 1, Integer::sum)));
		Map<Group, Integer> granted = new HashMap<>();
		List<Group> groups = new ArrayList<>();
		List<Integer> counts = new ArrayList<>();
		List<int[]> slots = new ArrayList<>();
		demand.forEach((group, count) -> {
			Set<Integer> mine = held.computeIfAbsent(group.key(), (key) -> new HashSet<>());
			int spare = mine.size() - choice.used.getOrDefault(group, 0);
			int missing = count - Math.max(spare, 0);
			granted.put(group, Math.min(count, Math.max(spare, 0)));
			if (missing > 0) {
				int[] free = java.util.stream.IntStream.range(0, group.limit()).filter((slot) -> !mine.contains(slot))
					.toArray();
				if (free.length > 0) {
					groups.add(group);
					counts.add(missing);
					slots.add(free);
				}
			}
		});
		if (!groups.isEmpty()) {
			Map<Integer, Group> byKey = new HashMap<>();
			groups.forEach((group) -> byKey.put(group.key(), group));
			List<int[]> taken = this.repository.trySlots(groups.stream().mapToInt((group) -> group.key()).toArray(),
					counts.stream().mapToInt(Integer::intValue).toArray(), slots);
			for (int[] pair : taken) {
				held.get(pair[0]).add(pair[1]);
				granted.merge(byKey.get(pair[0]), 1, Integer::sum);
			}
		}
		return granted;
	}

	private List<Group> groupsOf(Candidate candidate) {
		return groupsOf(candidate.kind(), candidate.key());
	}

	private List<Group> groupsOf(String kind, @Nullable String key) {
		List<Group> groups = new ArrayList<>(3);
		if (this.limits.maxRunning() > 0) {
			groups.add(queueGroup());
		}
		Group kindGroup = kindGroup(kind);
		if (kindGroup != null) {
			groups.add(kindGroup);
		}
		Group keyGroup = keyGroup(key);
		if (keyGroup != null) {
			groups.add(keyGroup);
		}
		return groups;
	}

	private Group queueGroup() {
		return new Group(Group.Type.QUEUE, this.queue, hash("queue", this.queue), this.limits.maxRunning());
	}

	private @Nullable Group kindGroup(String kind) {
		int limit = this.kindLimits.applyAsInt(kind);
		return (limit > 0) ? new Group(Group.Type.KIND, kind, hash("kind", kind), limit) : null;
	}

	/** A key's group, or {@code null} without a per-key limit (ordered keys need none: see above). */
	private @Nullable Group keyGroup(@Nullable String key) {
		return (key != null && this.limits.perKey() > 0 && !this.limits.orderedByKey())
				? new Group(Group.Type.KEY, key, hash("key", key), this.limits.perKey()) : null;
	}

	private int hash(String type, String name) {
		CRC32C crc = new CRC32C();
		crc.update((this.schema + '\u0000' + this.queue + '\u0000' + type + '\u0000' + name)
			.getBytes(StandardCharsets.UTF_8));
		return (int) crc.getValue();
	}

	/** The candidates a rate limit chose, when it chose the claim's jobs; otherwise all of them. */
	private static List<Candidate> onlyChosen(List<Candidate> candidates, ClaimStart start) {
		List<Long> chosen = start.chosen();
		if (chosen == null) {
			return candidates;
		}
		Set<Long> ids = new HashSet<>(chosen);
		return candidates.stream().filter((candidate) -> ids.contains(candidate.id())).toList();
	}

	private static int scanSize(int wanted) {
		return Math.max(MIN_SCAN, wanted * SCAN_FACTOR);
	}

	private static int @Nullable [] buckets(ClaimStart start) {
		return start.isBuckets() ? start.buckets() : null;
	}

}
