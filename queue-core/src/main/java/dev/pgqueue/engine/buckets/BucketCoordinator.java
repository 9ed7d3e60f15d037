package dev.pgqueue.engine.buckets;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.engine.poll.PollSignals;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.service.FailureStreak;
import dev.pgqueue.engine.service.PooledConnections;
import dev.pgqueue.engine.service.ServiceHealth;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.engine.sql.CoordinationRepository;
import dev.pgqueue.engine.sql.CoordinationRepository.BucketOwner;
import dev.pgqueue.engine.sql.CoordinationRepository.Group;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One instance's membership in the coordinator of a queue with bucket assignment; the coordinator
 * itself is nothing but three tables in PostgreSQL and the members that take turns leading it.
 *
 * <p>Every heartbeat interval, on a thread of its own ({@code pgqueue-<queue>-buckets}, while the
 * queue's poller runs), the member:
 * <ol>
 * <li>heartbeats (joining the group the first time);
 * <li>takes or keeps the leadership: a member leads while it renews its lease, another takes over
 * (with a new generation) once the lease has expired. While it leads, it spreads the buckets over
 * the live members ({@link BucketPlan}) in one transaction fenced by its generation; a member that
 * missed three heartbeats is dead and its buckets go to the others at once;
 * <li>reads the buckets it owns in the current generation and claims from those
 * ({@link BucketScope}); a bucket the leader asked it to give up leaves its claims first and is then
 * handed to its new owner.
 * </ol>
 * A bucket therefore moves from a dead member after its membership expired (three heartbeats) plus
 * up to two heartbeats, and from a live member (one joined) within three heartbeats.
 *
 * <p>None of this is what keeps a job from running twice: claims keep {@code FOR UPDATE SKIP LOCKED}
 * and the states and leases of each mode, so that a claim racing a hand-over skips or finds nothing.
 * The coordinator removes the contention; the row locks keep the guarantees.
 */
public final class BucketCoordinator implements EngineService {

	/** Heartbeats a member may miss before it counts as dead. */
	public static final int MISSED_HEARTBEATS = 3;

	/** Most stray jobs (outside the bucket range) one leader's turn moves into range. */
	private final ServiceHealth health;

	private static final int FOLD_LIMIT = 10_000;

	private static final Logger logger = LoggerFactory.getLogger(BucketCoordinator.class);

	private final CoordinationRepository repository;

	private final Group group;

	private final String member;

	private final int buckets;

	private final Duration heartbeat;

	private final Duration expiry;

	private final WorkerSettings lifecycle;

	private volatile CountDownLatch stopped = new CountDownLatch(1);

	private volatile @Nullable Thread thread;

	/** The scope this member assigns its buckets to, and the signals of its poller; set before a start. */
	private @Nullable BucketScope scope;

	private @Nullable PollSignals signals;

	private volatile long leading;

	private final FailureStreak failures;

	/**
	 * @param repository the coordination tables
	 * @param queue the queue
	 * @param kinds the kinds this instance claims (instances with other kinds form another group)
	 * @param member this instance's name in the group (unique per poller)
	 * @param buckets the queue's bucket count
	 * @param heartbeat the heartbeat interval
	 * @param lifecycle where the coordinator's thread comes from
	 * @param connections the pool whose idle connections are replaced after a lost one
	 */
	public BucketCoordinator(CoordinationRepository repository, String queue, String[] kinds, String member,
			int buckets, Duration heartbeat, WorkerSettings lifecycle, PooledConnections connections) {
		this.repository = repository;
		this.failures = new FailureStreak(connections);
		this.group = new Group(queue, kindsHash(kinds));
		this.member = member;
		this.buckets = buckets;
		this.heartbeat = heartbeat;
		this.expiry = heartbeat.multipliedBy(MISSED_HEARTBEATS);
		this.lifecycle = lifecycle;
		this.health = new ServiceHealth(queue + " buckets");
	}

	/** The group: the queue and a digest of the kinds its members claim. */
	public Group group() {
		return this.group;
	}

	/** This member's name. */
	public String member() {
		return this.member;
	}

	/** The generation this member leads, or 0 when it does not lead. */
	public long leadingGeneration() {
		return this.leading;
	}

	@Override
	public String name() {
		return this.group.queue() + " buckets";
	}

	/**
	 * Which scope the next {@link #start()} assigns buckets to, and which poller it wakes when this
	 * member gains some.
	 */
	synchronized void serve(BucketScope scope, PollSignals signals) {
		this.scope = scope;
		this.signals = signals;
	}

	/** Joins the group and heartbeats on a thread of its own, until {@link #stop()}. */
	@Override
	public synchronized void start() {
		if (this.thread != null) {
			return;
		}
		BucketScope scope = this.scope;
		PollSignals signals = this.signals;
		if (scope == null || signals == null) {
			throw new IllegalStateException("The bucket coordinator of queue '" + this.group.queue()
					+ "' serves no scope yet");
		}
		this.stopped = new CountDownLatch(1);
		this.thread = this.lifecycle.threads().newThread(this.group.queue(), "buckets", () -> run(scope, signals));
		this.thread.start();
	}

	/**
	 * Stops heartbeating and leaves the group, so that the member's buckets move at once; its scope
	 * then reads no bucket.
	 */
	@Override
	public synchronized void stop() {
		Thread running = this.thread;
		if (running == null) {
			clearScope();
			return;
		}
		this.stopped.countDown();
		try {
			running.join(Math.max(1000, this.heartbeat.toMillis() * 2));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		try {
			this.repository.leave(this.group, this.member);
		}
		catch (RuntimeException ex) {
			logger.warn("Queue '{}': could not leave the bucket group; its buckets move once its membership expires "
					+ "({} ms): {}", this.group.queue(), this.expiry.toMillis(), ex.toString());
		}
		this.leading = 0;
		this.thread = null;
		clearScope();
	}

	private void clearScope() {
		BucketScope served = this.scope;
		if (served != null) {
			served.clear();
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.thread != null;
	}

	private void run(BucketScope scope, PollSignals signals) {
		try {
			Duration next;
			do {
				next = this.heartbeat;
				long started = System.nanoTime();
				try {
					if (turn(scope)) {
						signals.wakeUp();
					}
					FailureStreak.Ended ended = this.failures.succeeded();
					if (ended != null) {
						logger.info("Queue '{}': coordination works again after {} failed heartbeats", this.group.queue(),
								ended.failures());
					}
				}
				catch (RuntimeException ex) {
					// A lost connection is tried again at once, on a fresh one, rather than a heartbeat later.
					FailureStreak.Pause pause = this.failures.failed(ex, started);
					if (pause.delay().compareTo(next) < 0) {
						next = pause.delay();
					}
					logger.warn("Queue '{}': bucket heartbeat failed ({} {} in a row), next try in {} ms; claims stop "
							+ "once the membership could have expired: {}", this.group.queue(), pause.inARow(),
							pause.cause().tag(), next.toMillis(), ex.toString());
				}
				catch (Error ex) {
					this.health.failed(ex, "it heartbeats again in " + next.toMillis() + " ms");
				}
			}
			while (!this.stopped.await(next.toNanos(), TimeUnit.NANOSECONDS));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (Throwable ex) {
			this.health.stopped(ex);
		}
	}

	@Override
	public ServiceHealth health() {
		return this.health;
	}

	/**
	 * One heartbeat: be alive, lead if it is this member's turn, then claim from what this member owns
	 * and hand over what it was asked to. Returns whether this member gained buckets.
	 */
	boolean turn(BucketScope scope) {
		// The membership can expire no sooner than this heartbeat's start plus the expiry.
		long validUntil = System.nanoTime() + this.expiry.toNanos();
		this.repository.heartbeat(this.group, this.member);
		Long generation = this.repository.leadAndRebalance(this.group, this.member, this.expiry,
				(led, live, current) -> BucketPlan.plan(this.buckets, live, current, led));
		if (generation != null) {
			led(generation);
		}
		else {
			this.leading = 0;
		}
		List<BucketOwner> owned = this.repository.owned(this.group, this.member);
		List<Integer> keep = new ArrayList<>();
		List<Integer> handOver = new ArrayList<>();
		for (BucketOwner row : owned) {
			if (row.bucket() >= this.buckets) {
				continue;
			}
			((row.nextOwner() == null) ? keep : handOver).add(row.bucket());
		}
		boolean gained = scope.assign(keep.stream().mapToInt(Integer::intValue).toArray(), validUntil);
		// assign returned: no claim that read the buckets being handed over is still running.
		int handed = this.repository.handOver(this.group, this.member, handOver);
		if (handed > 0) {
			logger.debug("Queue '{}': handed over {} buckets", this.group.queue(), handed);
		}
		return gained;
	}

	/** This member leads in {@code generation} and has just rebalanced: tidy up what a new leader finds. */
	private void led(long generation) {
		if (this.leading != generation) {
			logger.info("Queue '{}': this instance leads the bucket coordinator (generation {})", this.group.queue(),
					generation);
			this.repository.dropBucketsFrom(this.group, this.buckets);
		}
		this.leading = generation;
		int folded = this.repository.foldStrayJobs(this.group.queue(), this.buckets, FOLD_LIMIT);
		if (folded > 0) {
			logger.info("Queue '{}': moved {} jobs whose bucket was outside 0–{} into range", this.group.queue(), folded,
					this.buckets - 1);
		}
	}

	/** A short digest of the sorted kinds: instances that claim the same kinds share a group. */
	static String kindsHash(String[] kinds) {
		String[] sorted = kinds.clone();
		Arrays.sort(sorted);
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256")
				.digest(String.join("\n", sorted).getBytes(StandardCharsets.UTF_8));
			return HexFormat.of().formatHex(digest, 0, 6);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
		}
	}

}
