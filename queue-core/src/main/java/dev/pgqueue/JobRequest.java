package dev.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;


import org.jspecify.annotations.Nullable;

/**
 * A job to enqueue: its kind and payload, and optionally the queue, when it may run (and how much
 * that may be spread), its priority, how many attempts it gets, the key of its bucket, and a unique
 * key that keeps a second such job from being enqueued.
 *
 * <pre>{@code
 * jobClient.enqueue(JobRequest.of("report.monthly", new ReportRequest(accountId))
 *     .queue("reports")
 *     .delay(Duration.ofMinutes(5))
 *     .priority(10)
 *     .maxAttempts(3));
 * }</pre>
 */
public final class JobRequest {

	/** Queue of a job whose kind names no other. */
	public static final String DEFAULT_QUEUE = "default";

	/** Longest kind or queue name accepted. */
	public static final int MAX_NAME_LENGTH = 200;

	/** Most tags one job may have. */
	public static final int MAX_TAGS = 20;

	/** Longest tag, in characters. */
	public static final int MAX_TAG_LENGTH = 100;

	private final String kind;

	private final @Nullable Object payload;

	private @Nullable String queue;

	private @Nullable Instant runAt;

	private @Nullable Duration delay;

	private int priority;

	private @Nullable Integer maxAttempts;

	private @Nullable Duration jitter;

	private @Nullable String bucketKey;

	private @Nullable String concurrencyKey;

	private List<String> tags = List.of();

	private @Nullable String uniqueKey;

	private @Nullable Duration uniquePeriod;

	private OnConflict onConflict = OnConflict.KEEP;

	private @Nullable Integer rateWeight;

	private @Nullable String shard;

	private @Nullable String shardKey;

	private JobRequest(String kind, @Nullable Object payload) {
		this.kind = requireName("kind", kind);
		this.payload = payload;
	}

	/**
	 * Starts a request for a job of the given kind. The payload is serialized to JSON with the
	 * application's Jackson mapper; {@code null} is stored as JSON {@code null}.
	 */
	public static JobRequest of(String kind, @Nullable Object payload) {
		return new JobRequest(kind, payload);
	}

	/**
	 * Sets the queue. Without one, the job goes to the queue of this application's listener for its
	 * kind, or to {@value #DEFAULT_QUEUE} when no listener here handles it.
	 */
	public JobRequest queue(String queue) {
		this.queue = requireName("queue", queue);
		return this;
	}

	/** Makes the job wait until the given instant (compared with the database clock). */
	public JobRequest runAt(Instant runAt) {
		Objects.requireNonNull(runAt, "runAt must not be null");
		requireStorable("Run-at of a '" + this.kind + "' job", runAt);
		this.runAt = runAt;
		this.delay = null;
		return this;
	}

	/** Makes the job wait this long after the enqueue, measured on the database clock. */
	public JobRequest delay(Duration delay) {
		Objects.requireNonNull(delay, "delay must not be null");
		if (delay.isNegative()) {
			throw new IllegalArgumentException("Delay of a '" + this.kind + "' job must not be negative, was " + delay);
		}
		requireStorable("Delay of a '" + this.kind + "' job", delay);
		this.delay = delay;
		this.runAt = null;
		return this;
	}

	/** Sets the priority (-32768 to 32767, default 0); among due jobs of a queue, higher runs first. */
	public JobRequest priority(int priority) {
		if (priority < Short.MIN_VALUE || priority > Short.MAX_VALUE) {
			throw new IllegalArgumentException(
					"Priority of a '" + this.kind + "' job must be between -32768 and 32767, was " + priority);
		}
		this.priority = priority;
		return this;
	}

	/** Sets how many attempts the job gets before it fails for good; defaults to its queue's setting. */
	public JobRequest maxAttempts(int maxAttempts) {
		if (maxAttempts < 1) {
			throw new IllegalArgumentException(
					"Max attempts of a '" + this.kind + "' job must be at least 1, was " + maxAttempts);
		}
		this.maxAttempts = maxAttempts;
		return this;
	}

	/**
	 * Spreads when the job falls due: it runs at a random instant in {@code [run-at, run-at + jitter)}
	 * (run-at being now, the delay's end or the instant given), drawn on the database. Overrides the
	 * queue's {@code run-at-jitter}; {@code Duration.ZERO} turns it off for this job. Spreading jobs
	 * that would all fall due at the same instant keeps pollers from scanning the same rows at once,
	 * at the price of up to {@code jitter} of extra latency.
	 */
	public JobRequest jitter(Duration jitter) {
		Objects.requireNonNull(jitter, "jitter must not be null");
		if (jitter.isNegative()) {
			throw new IllegalArgumentException("Jitter of a '" + this.kind + "' job must not be negative, was " + jitter);
		}
		requireStorable("Jitter of a '" + this.kind + "' job", jitter);
		this.jitter = jitter;
		return this;
	}

	/**
	 * Puts the job in the bucket this key maps to, so that jobs with the same key land in the same
	 * bucket (and, with bucket assignment, are claimed by the same instance). Without a key the
	 * bucket is random.
	 */
	public JobRequest bucketKey(String key) {
		this.bucketKey = requireName("bucket key", key);
		return this;
	}

	/**
	 * Limits this job together with the other jobs of its queue that have the same key, such as a
	 * tenant or an account: with {@code pgqueue.queues.<queue>.per-key-concurrency} at most that many
	 * of them run at once across every instance, and with {@code ordered-by-key} they start in
	 * enqueue order, one at a time. A queue without either setting ignores the key.
	 */
	public JobRequest concurrencyKey(String key) {
		this.concurrencyKey = requireName("concurrency key", key);
		return this;
	}

	/**
	 * Sends the job to this shard ({@code pgqueue.shards.<name>}) instead of the one its key or the
	 * round robin would choose. Refused when no such shard is configured, when the caller's
	 * transaction is on another shard, and when no shards are configured at all.
	 */
	public JobRequest shard(String name) {
		this.shard = requireName("shard", name);
		return this;
	}

	/**
	 * Chooses the job's shard by this key: every job with the same shard key lands on the same shard,
	 * so a tenant's jobs can stay together whatever their concurrency or bucket keys. Without it the
	 * concurrency key, else the bucket key, else the unique key, chooses. Without shards configured the
	 * key has no effect.
	 */
	public JobRequest shardKey(String key) {
		this.shardKey = requireName("shard key", key);
		return this;
	}

	/**
	 * Sets how many units of each rate limit the job uses when it starts (its queue's, its kind's and
	 * its key's): more than 1 for a job that costs an external API several calls, such as a batch of 40
	 * messages. Overrides its kind's weight ({@code pgqueue.kinds.<kind>.rate-weight},
	 * {@code @JobListener(rateWeight)}) for this job; a queue without rate limits ignores it. A weight
	 * above a limit this process knows for the queue is refused here; a weight above a limit configured
	 * only where the job runs uses that whole limit (see the rate limits reference).
	 */
	public JobRequest rateWeight(int weight) {
		if (weight < 1) {
			throw new IllegalArgumentException(
					"Rate weight of a '" + this.kind + "' job must be at least 1, was " + weight);
		}
		this.rateWeight = weight;
		return this;
	}

	/**
	 * Labels the job, so that operators can find and act on jobs by tag ({@code JobQuery.tag}, the
	 * endpoint's and the dashboard's tag filter): a customer, a release, an import. Replaces any tags
	 * given before; duplicates are dropped, the order kept. At most {@value #MAX_TAGS} tags of at most
	 * {@value #MAX_TAG_LENGTH} characters each, none blank. Tags are shown to whoever may read the job
	 * list: keep personal data out of them.
	 */
	public JobRequest tags(String... tags) {
		return tags(List.of(tags));
	}

	/** As {@link #tags(String...)}. */
	public JobRequest tags(Collection<String> tags) {
		Set<String> distinct = new LinkedHashSet<>();
		for (String tag : tags) {
			if (tag == null || tag.isBlank()) {
				throw new IllegalArgumentException("A tag of a '" + this.kind + "' job is blank; give each tag a "
						+ "name such as \"customer-42\", or leave it out");
			}
			if (tag.length() > MAX_TAG_LENGTH) {
				throw new IllegalArgumentException("Tag '" + tag.substring(0, 20) + "…' of a '" + this.kind
						+ "' job is " + tag.length() + " characters, over the " + MAX_TAG_LENGTH + " a tag may have; "
						+ "shorten it, and keep long data in the payload");
			}
			requireStorable("A tag of a '" + this.kind + "' job", tag);
			distinct.add(tag);
		}
		if (distinct.size() > MAX_TAGS) {
			throw new IllegalArgumentException("A '" + this.kind + "' job has " + distinct.size() + " tags, over the "
					+ MAX_TAGS + " a job may have; keep the few that operators search by");
		}
		this.tags = List.copyOf(distinct);
		return this;
	}

	/**
	 * Makes the job unique among the unfinished jobs of its kind: while a job of this kind with this
	 * key is available, scheduled or running, an enqueue with the key inserts nothing and returns that
	 * job's id (and changes it as {@link #onConflict(OnConflict)} says). The database enforces it with
	 * a unique index, across instances and transactions; once the job finishes (completed, failed or
	 * cancelled) the key is free again.
	 */
	public JobRequest uniqueKey(String key) {
		this.uniqueKey = requireName("unique key", key);
		this.uniquePeriod = null;
		return this;
	}

	/**
	 * Makes the job unique for its kind within a period, finished jobs included: the first enqueue
	 * with the key in a period inserts the job, every later one in the same period returns its id,
	 * whether it still waits, runs, or finished long ago (however soon finished jobs are pruned).
	 * Periods are aligned on the database's clock from the Unix epoch: a period of one day runs from
	 * midnight UTC to midnight UTC, one of an hour from the full hour. Only {@link OnConflict#KEEP}
	 * applies to such a key.
	 * @param period at least one second, in whole seconds
	 */
	public JobRequest uniqueKey(String key, Duration period) {
		Objects.requireNonNull(period, "period must not be null");
		if (period.compareTo(Duration.ofSeconds(1)) < 0 || period.getNano() != 0) {
			throw new IllegalArgumentException("Unique period of a '" + this.kind + "' job must be whole seconds, at "
					+ "least one; got " + period);
		}
		requireStorable("Unique period of a '" + this.kind + "' job", period);
		this.uniqueKey = requireName("unique key", key);
		this.uniquePeriod = period;
		return this;
	}

	/**
	 * What to do when a job of the same kind already holds this request's unique key; {@link OnConflict#KEEP}
	 * by default. Takes effect only with {@link #uniqueKey(String)}.
	 */
	public JobRequest onConflict(OnConflict onConflict) {
		this.onConflict = Objects.requireNonNull(onConflict, "onConflict must not be null");
		return this;
	}

	public String kind() {
		return this.kind;
	}

	public @Nullable Object payload() {
		return this.payload;
	}

	/** The queue given, or {@code null} to resolve it from the kind. */
	public @Nullable String queue() {
		return this.queue;
	}

	/** The run-at instant given, or {@code null}. */
	public @Nullable Instant runAt() {
		return this.runAt;
	}

	/** The delay given, or {@code null}. */
	public @Nullable Duration delay() {
		return this.delay;
	}

	public int priority() {
		return this.priority;
	}

	/** The max attempts given, or {@code null} for the queue's default. */
	public @Nullable Integer maxAttempts() {
		return this.maxAttempts;
	}

	/** The jitter given, or {@code null} for the queue's. */
	public @Nullable Duration jitter() {
		return this.jitter;
	}

	/** The bucket key given, or {@code null} for a random bucket. */
	public @Nullable String bucketKey() {
		return this.bucketKey;
	}

	/** The concurrency key given, or {@code null}. */
	public @Nullable String concurrencyKey() {
		return this.concurrencyKey;
	}

	/** The job's tags, in the order given; empty for none. */
	public List<String> tags() {
		return this.tags;
	}

	/** The unique key given, or {@code null}. */
	public @Nullable String uniqueKey() {
		return this.uniqueKey;
	}

	/** The period the unique key is held for, or {@code null} while the job is unfinished only. */
	public @Nullable Duration uniquePeriod() {
		return this.uniquePeriod;
	}

	/** What an enqueue does when the unique key is taken. */
	public OnConflict onConflict() {
		return this.onConflict;
	}

	/** The shard named, or {@code null} to let its key or the round robin choose. */
	public @Nullable String shard() {
		return this.shard;
	}

	/** The shard key given, or {@code null}. */
	public @Nullable String shardKey() {
		return this.shardKey;
	}

	/** The units of each rate limit the job uses, or {@code null} for its kind's weight. */
	public @Nullable Integer rateWeight() {
		return this.rateWeight;
	}

	private static String requireName(String what, @Nullable String value) {
		if (value == null || value.isBlank()) {
			throw new IllegalArgumentException("Job " + what + " must not be blank");
		}
		if (value.length() > MAX_NAME_LENGTH) {
			throw new IllegalArgumentException("Job " + what + " '" + value.substring(0, 40) + "…' is longer than "
					+ MAX_NAME_LENGTH + " characters");
		}
		requireStorable("Job " + what, value);
		return value;
	}

	/**
	 * Refuses what PostgreSQL's UTF-8 text cannot hold as it is: U+0000, which would fail the statement
	 * and abort the caller's transaction, and half of a surrogate pair without its other half, which the
	 * driver would store as {@code ?} (a kind no listener handles, a key no other job shares).
	 */
	static void requireStorable(String what, String value) {
		if (value.indexOf(0) >= 0) {
			throw new IllegalArgumentException(what + " holds the character U+0000 (NUL), which PostgreSQL cannot "
					+ "store in text; remove it");
		}
		int lone = loneSurrogate(value);
		if (lone >= 0) {
			throw new IllegalArgumentException(what + " holds half of a surrogate pair at index " + lone + " (U+"
					+ Integer.toHexString(value.charAt(lone)).toUpperCase(Locale.ROOT) + ") without its other half, "
					+ "which is no character and which PostgreSQL would store as '?'; pass whole characters");
		}
	}

	/** The index of the first half of a surrogate pair that lacks its other half, or -1. */
	static int loneSurrogate(String value) {
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (Character.isHighSurrogate(c)) {
				if (i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
					i++;
					continue;
				}
				return i;
			}
			if (Character.isLowSurrogate(c)) {
				return i;
			}
		}
		return -1;
	}

	/** Earliest instant a job's times may take: PostgreSQL stores more, Java's calendars agree from here. */
	static final Instant EARLIEST = Instant.parse("0001-01-01T00:00:00Z");

	/** Latest instant a job's times may take. */
	static final Instant LATEST = Instant.parse("9999-12-31T23:59:59Z");

	/** Longest duration a job's settings may take: a hundred years. */
	static final Duration LONGEST = Duration.ofDays(36_525);

	/** Refuses an instant outside the years 1 to 9999, which the database's timestamps could not all hold. */
	static void requireStorable(String what, Instant value) {
		if (value.isBefore(EARLIEST) || value.isAfter(LATEST)) {
			throw new IllegalArgumentException(what + " is " + value + ", outside the years 1 to 9999 that pgqueue "
					+ "stores; pass an instant within them");
		}
	}

	/** Refuses a duration longer than {@link #LONGEST}, which would overflow the database's intervals or times. */
	static void requireStorable(String what, Duration value) {
		if (value.compareTo(LONGEST) > 0) {
			throw new IllegalArgumentException(what + " is " + value + ", longer than the hundred years pgqueue "
					+ "takes; pass a shorter one");
		}
	}

	@Override
	public String toString() {
		return "JobRequest[kind=" + this.kind + ", queue=" + this.queue + "]";
	}

}
