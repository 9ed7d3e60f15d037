package dev.pgqueue.engine.limits;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

import dev.pgqueue.engine.job.ClaimStart;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.settings.KeyFairness;
import dev.pgqueue.engine.sql.LimitRepository;
import dev.pgqueue.engine.sql.LimitRepository.KeyedJob;
import org.jspecify.annotations.Nullable;

/**
 * Claims that share a queue's workers fairly across concurrency keys (tenants): each claim takes the
 * next keys with due jobs in turn, round robin, and of each key as many jobs as its weight gives it,
 * so that a key with 100 000 waiting jobs takes no more turns than one with ten. Within a key, jobs
 * come in the queue's order (priority, then due time); the jobs without a key take turns as one key.
 *
 * <p>The keys with due jobs form a ring, read from the database by skipping from one key to the next
 * in an index of due jobs by key (one index probe per key), again after every full round and at least
 * every {@link #REFRESH}, so that a new tenant's jobs get their first turn within one round. One
 * statement claims a turn: for each key, a lateral read of its next jobs from that index, locked as
 * they are returned and skipping rows others hold, up to the key's take. A key that gave fewer than its
 * take has no more due jobs free, and leaves the ring until the next read. A claim that comes back
 * short while keys of the ring may still give jobs says so ({@link #stoppedAtShare}), so that its
 * poller claims again at once instead of waiting for the poll interval as after a drained queue.
 * A large claim (a transactional batch grown for short jobs) visits about {@value #KEYS_PER_CLAIM}
 * keys and takes more of each, as every key visited costs an index read. Concurrent claims of one
 * instance take consecutive turns, so its batches spread over the keys; each instance keeps a ring of
 * its own.
 */
public final class FairClaims implements JobClaims {

	/** Longest a ring is used before it is read again. */
	static final Duration REFRESH = Duration.ofSeconds(1);

	/** Most keys a ring holds; past that, the keys after the last of them wait for the next read. */
	static final int MAX_KEYS = 10_000;

	/**
	 * Keys one claim visits, at least, before each key's take grows: a claim larger than this (a
	 * transactional batch grown for short jobs) takes several jobs of each key it visits rather than
	 * one of each of hundreds, since every key visited costs an index read of its own.
	 */
	static final int KEYS_PER_CLAIM = 32;

	/** Turns one claim takes at most, when the first came back short while some keys had more. */
	private static final int PASSES = 3;

	private final String queue;

	private final KeyFairness fairness;

	private final LimitRepository repository;

	/** The keys with due jobs, in key order; {@code null} stands for the jobs without a key. Guarded by this. */
	private List<@Nullable String> ring = List.of();

	/** The ring's position of the next turn; guarded by this. */
	private int cursor;

	/** {@link System#nanoTime()} of the ring's read; guarded by this. */
	private long readAt;

	/** Whether the ring went round since it was read; guarded by this. */
	private boolean wrapped = true;

	/** Members that gave fewer jobs than their take since the ring was read; guarded by this. */
	private final Set<@Nullable String> dry = new HashSet<>();

	/**
	 * {@link System#nanoTime()} before which the jobs without a key are not looked for: the last look
	 * found fewer than it asked for, and a look reads past the keyed jobs of the queue. Guarded by this.
	 */
	private long keylessDryUntil;

	/** What is left of the turn of {@link #creditOf}, the member at the cursor; guarded by this. */
	private int credit;

	private @Nullable String creditOf;

	/** Whether this thread's last claim came back short while keys had jobs left to give. */
	private final ThreadLocal<Boolean> stoppedShort = ThreadLocal.withInitial(() -> Boolean.FALSE);

	/** The last key that had a turn, where the next read of the ring resumes; guarded by this. */
	private @Nullable String lastKey;

	public FairClaims(String queue, KeyFairness fairness, LimitRepository repository) {
		this.queue = queue;
		this.fairness = fairness;
		this.repository = repository;
	}

	@Override
	public List<ClaimedJob> lock(String[] kinds, int limit, ClaimStart start) {
		return claim(limit, (turn) -> this.repository.lockFair(this.queue, kinds, turn.keys(), turn.takes(),
				turn.keyless(), start.buckets()));
	}

	@Override
	public List<ClaimedJob> lease(String[] kinds, int limit, String owner, Duration lease, ClaimStart start) {
		return claim(limit, (turn) -> this.repository.leaseFair(this.queue, kinds, turn.keys(), turn.takes(),
				turn.keyless(), start.buckets(), owner, lease, start.startedAt()));
	}

	@Override
	public boolean stoppedAtShare() {
		return this.stoppedShort.get();
	}

	private List<ClaimedJob> claim(int limit, Function<Turn, List<KeyedJob>> statement) {
		List<ClaimedJob> claimed = new ArrayList<>();
		boolean more = false;
		for (int pass = 0; pass < PASSES && claimed.size() < limit; pass++) {
			Turn turn = nextTurn(limit - claimed.size());
			if (turn.isEmpty()) {
				more = false;
				break;
			}
			List<KeyedJob> jobs = statement.apply(turn);
			jobs.forEach((keyed) -> claimed.add(keyed.job()));
			// Keys whose free jobs other batches hold give nothing; keys the turn did not reach may.
			more = settle(turn, jobs) || hasKeysLeft();
			if (!more) {
				break;
			}
		}
		// Short after its passes while keys still had jobs to give: the queue is not drained, and its
		// poller should claim again at once rather than after the poll interval.
		this.stoppedShort.set(claimed.size() < limit && !claimed.isEmpty() && more);
		return claimed;
	}

	private synchronized boolean hasKeysLeft() {
		return weightLeft() > 0;
	}

	/**
	 * The next keys in turn, with the jobs each may take, for a claim of {@code wanted} jobs: deficit
	 * round robin, each key taking its weight's worth before the turn passes on, even across claims
	 * smaller than its weight. When the ring's keys weigh less than the claim wants, each takes its weight
	 * times the same factor, so that one claim can serve every key.
	 */
	private synchronized Turn nextTurn(int wanted) {
		long now = System.nanoTime();
		long age = now - this.readAt;
		// After every round: a read costs one index probe per key, and a round starts a job of every key.
		if (this.wrapped || this.ring.isEmpty() || age > REFRESH.toNanos()) {
			readRing(now);
		}
		int total = weightLeft();
		if (total == 0 && this.readAt != now) {
			// Every key gave what it had: read the ring again, for keys that got jobs since.
			readRing(now);
			total = weightLeft();
		}
		if (total == 0) {
			return Turn.NONE;
		}
		int size = this.ring.size();
		int scale = Math.max((total < wanted) ? (wanted + total - 1) / total : 1,
				(wanted + KEYS_PER_CLAIM - 1) / KEYS_PER_CLAIM);
		Map<@Nullable String, Integer> takes = new java.util.LinkedHashMap<>();
		int left = wanted;
		for (int visited = 0; left > 0 && visited < size;) {
			@Nullable String member = this.ring.get(this.cursor);
			if (this.dry.contains(member)) {
				advance(size);
				visited++;
				continue;
			}
			int credit = (this.credit > 0 && Objects.equals(this.creditOf, member)) ? this.credit
					: weightOf(member) * scale;
			int take = Math.min(credit, left);
			takes.merge(member, take, Integer::sum);
			left -= take;
			credit -= take;
			if (credit > 0) {
				// The claim is full; the member's turn goes on in the next one.
				this.credit = credit;
				this.creditOf = member;
				break;
			}
			this.credit = 0;
			this.creditOf = null;
			if (member != null) {
				this.lastKey = member;
			}
			advance(size);
			visited++;
		}
		List<String> keys = new ArrayList<>();
		List<Integer> keyTakes = new ArrayList<>();
		int keyless = 0;
		for (Map.Entry<@Nullable String, Integer> entry : takes.entrySet()) {
			if (entry.getKey() == null) {
				keyless = entry.getValue();
			}
			else {
				keys.add(entry.getKey());
				keyTakes.add(entry.getValue());
			}
		}
		return new Turn(keys.toArray(String[]::new), keyTakes.stream().mapToInt(Integer::intValue).toArray(), keyless);
	}

	/** The weights of the ring's keys that may still have due jobs. */
	private int weightLeft() {
		int total = 0;
		for (@Nullable String member : this.ring) {
			if (!this.dry.contains(member)) {
				total += weightOf(member);
			}
		}
		return total;
	}

	private void advance(int size) {
		this.cursor++;
		if (this.cursor >= size) {
			this.cursor = 0;
			this.wrapped = true;
		}
	}

	/**
	 * Takes out of the ring the keys that gave fewer jobs than their take: they have no more due jobs
	 * free. Returns whether another pass may find more (some key gave all it was asked).
	 */
	private synchronized boolean settle(Turn turn, List<KeyedJob> jobs) {
		Map<String, Integer> got = new HashMap<>();
		int keylessGot = 0;
		for (KeyedJob job : jobs) {
			String key = job.key();
			if (key == null) {
				keylessGot++;
			}
			else {
				got.merge(key, 1, Integer::sum);
			}
		}
		boolean more = false;
		for (int i = 0; i < turn.keys().length; i++) {
			if (got.getOrDefault(turn.keys()[i], 0) < turn.takes()[i]) {
				this.dry.add(turn.keys()[i]);
			}
			else {
				more = true;
			}
		}
		if (turn.keyless() > 0) {
			if (keylessGot < turn.keyless()) {
				// Finding none may have read past every keyed job of the queue: not again for a while.
				this.dry.add(null);
				this.keylessDryUntil = System.nanoTime() + REFRESH.toNanos();
			}
			else {
				more = true;
			}
		}
		return more;
	}

	/** Reads the ring again, resuming the round after the last key that had a turn. */
	private void readRing(long now) {
		List<@Nullable String> keys = new ArrayList<>(this.repository.fairKeys(this.queue, "", MAX_KEYS));
		int keyed = keys.size();
		if (now - this.keylessDryUntil >= 0) {
			keys.add(null);
		}
		if (keys.isEmpty()) {
			this.ring = keys;
			this.cursor = 0;
			this.readAt = now;
			this.wrapped = false;
			this.dry.clear();
			return;
		}
		// Resume after the last key that had a turn: where it is, or where it would be (the database's
		// order of keys may differ from Java's, which can only shift the round by a few keys).
		String last = this.lastKey;
		int resume = 0;
		if (last != null) {
			int at = keys.subList(0, keyed).indexOf(last);
			if (at >= 0) {
				resume = at + 1;
			}
			else {
				while (resume < keyed && Objects.requireNonNull(keys.get(resume)).compareTo(last) <= 0) {
					resume++;
				}
			}
		}
		this.ring = keys;
		this.cursor = resume % keys.size();
		this.readAt = now;
		this.wrapped = false;
		this.dry.clear();
	}

	private int weightOf(@Nullable String member) {
		return (member == null) ? 1 : this.fairness.weightOf(member);
	}

	/**
	 * One turn: the keys and how many jobs each may take, and how many jobs without a key.
	 */
	private record Turn(String[] keys, int[] takes, int keyless) {

		static final Turn NONE = new Turn(new String[0], new int[0], 0);

		boolean isEmpty() {
			return this.keys.length == 0 && this.keyless == 0;
		}

	}

}
