package dev.pgqueue.engine.shards;

import java.sql.Connection;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.service.EngineThreads;
import dev.pgqueue.engine.service.FailureCause;
import dev.pgqueue.engine.service.ServiceHealth;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which shards answer now. Every shard is asked for a valid connection every interval, each on a thread
 * of its own so that a hung server delays no other shard's probe; a shard is down when its last answer
 * is older than the timeout (a probe that hangs counts as no answer) or when its last probe failed.
 * Before the watch starts, and after it stops, it knows nothing and every shard counts as up.
 */
public final class ShardWatch implements ShardHealth, EngineService, AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(ShardWatch.class);

	private final ServiceHealth health = new ServiceHealth("shard-watch");

	private final Map<String, DataSource> shards;

	private final Duration interval;

	private final Duration timeout;

	private final LongSupplier nanoTime;

	private final Map<String, State> states = new ConcurrentHashMap<>();

	private final Map<String, Connection> held = new ConcurrentHashMap<>();

	/** Shards held down by their owner, with why, whatever their probes say. */
	private final Map<String, String> holds = new ConcurrentHashMap<>();

	private @Nullable ScheduledExecutorService ticker;

	/** Whether probes run, so that silence means something. */
	private volatile boolean watching;

	private @Nullable ExecutorService probes;

	/**
	 * @param shards each shard's DataSource, in declared order
	 * @param interval time between two probes of a shard
	 * @param timeout how long a shard may go without an answer before it counts as down
	 */
	public ShardWatch(Map<String, DataSource> shards, Duration interval, Duration timeout) {
		this(shards, interval, timeout, System::nanoTime);
	}

	ShardWatch(Map<String, DataSource> shards, Duration interval, Duration timeout, LongSupplier nanoTime) {
		this.shards = new LinkedHashMap<>(shards);
		this.interval = interval;
		this.timeout = timeout;
		this.nanoTime = nanoTime;
		long now = nanoTime.getAsLong();
		shards.keySet().forEach((shard) -> this.states.put(shard, new State(now, now, null)));
	}

	@Override
	public String name() {
		return "shard-watch";
	}

	@Override
	public ServiceHealth health() {
		return this.health;
	}

	/** Starts probing; {@link #stop()} stops. */
	@Override
	public synchronized void start() {
		if (this.ticker != null) {
			return;
		}
		long now = this.nanoTime.getAsLong();
		this.shards.keySet().forEach((shard) -> this.states.put(shard, new State(now, now, null)));
		this.watching = true;
		this.probes = Executors.newCachedThreadPool(EngineThreads.platformFactory(null, "shard-probe"));
		this.ticker = EngineThreads.newScheduler(null, "shard-watch", 0);
		Map<String, AtomicBoolean> probing = new LinkedHashMap<>();
		this.shards.keySet().forEach((shard) -> probing.put(shard, new AtomicBoolean()));
		ExecutorService pool = this.probes;
		this.ticker.scheduleWithFixedDelay(() -> {
			try {
				probing.forEach((shard, busy) -> probeUnlessBusy(pool, shard, busy));
			}
			catch (Throwable ex) {
				// Thrown out of the ticker's task, it would end every later probe without a word.
				this.health.failed(ex, "it probes again in " + this.interval.toMillis() + " ms");
			}
		}, 0, this.interval.toNanos(), TimeUnit.NANOSECONDS);
	}

	/** A probe still hanging on a shard is not joined by another: its age already says enough. */
	private void probeUnlessBusy(ExecutorService pool, String shard, AtomicBoolean busy) {
		if (!busy.compareAndSet(false, true)) {
			return;
		}
		try {
			pool.execute(() -> {
				try {
					probe(shard);
				}
				finally {
					busy.set(false);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// Stopping.
			busy.set(false);
		}
	}

	/**
	 * Asks one shard whether its connection is valid and records the answer. The watch holds one
	 * connection per shard, so that a pool busy with workers cannot make a shard look down; after a
	 * failure it takes a new one.
	 */
	void probe(String shard) {
		long started = this.nanoTime.getAsLong();
		Throwable failure = null;
		Connection connection = this.held.get(shard);
		try {
			if (connection == null) {
				connection = this.shards.get(shard).getConnection();
				this.held.put(shard, connection);
			}
			if (!connection.isValid((int) Math.max(1, this.timeout.toSeconds()))) {
				failure = new Unanswered("its connection did not answer within " + this.timeout.toMillis() + " ms");
			}
		}
		catch (Exception | Error ex) {
			failure = ex;
		}
		if (failure != null && connection != null) {
			this.held.remove(shard);
			closeQuietly(connection);
		}
		record(shard, started, failure);
	}

	private static void closeQuietly(Connection connection) {
		try {
			connection.close();
		}
		catch (Exception ex) {
			// A connection that failed its probe may fail to close too; the pool forgets it either way.
		}
	}

	void record(String shard, long started, @Nullable Throwable failure) {
		State before = this.states.get(shard);
		long now = this.nanoTime.getAsLong();
		State after = (failure == null) ? new State(now, now, null) : new State(before.answered(), now, failure);
		this.states.put(shard, after);
		if (failure != null && before.failure() == null) {
			logger.warn("pgqueue's shard '{}' does not answer ({}): keyed jobs of its slots are refused and unkeyed "
					+ "jobs go to the other shards until it does", shard, String.valueOf(failure.getMessage()));
		}
		else if (failure == null && before.failure() != null) {
			logger.info("pgqueue's shard '{}' answers again", shard);
		}
	}

	/** The shards that answer now, in declared order. */
	public Set<String> up() {
		Set<String> up = new LinkedHashSet<>();
		for (String shard : this.shards.keySet()) {
			if (whyDown(shard) == null) {
				up.add(shard);
			}
		}
		return up;
	}

	/**
	 * Counts a shard as down, for this reason, until {@link #release released}, whatever its probes say:
	 * for a shard that answers but cannot take jobs yet, such as one whose tables are not migrated.
	 */
	public void holdDown(String shard, String reason) {
		requireShard(shard);
		this.holds.put(shard, reason);
	}

	/** Ends a {@link #holdDown hold}: the shard's probes alone say whether it is up. */
	public void release(String shard) {
		requireShard(shard);
		this.holds.remove(shard);
	}

	/** Why a shard counts as down, or {@code null} while it answers. */
	@Override
	public @Nullable String whyDown(String shard) {
		State state = requireShard(shard);
		String hold = this.holds.get(shard);
		if (hold != null) {
			return hold;
		}
		if (!this.watching) {
			return null;
		}
		if (state.failure() != null) {
			return "its last probe failed: " + describe(state.failure());
		}
		long silent = this.nanoTime.getAsLong() - state.answered();
		if (silent > this.timeout.toNanos()) {
			return "it has not answered for " + TimeUnit.NANOSECONDS.toMillis(silent) + " ms";
		}
		return null;
	}

	private State requireShard(String shard) {
		State state = this.states.get(shard);
		if (state == null) {
			throw new IllegalArgumentException("No shard '" + shard + "'; the shards are " + this.shards.keySet());
		}
		return state;
	}

	@Override
	public synchronized boolean isRunning() {
		return this.ticker != null;
	}

	@Override
	public void close() {
		stop();
	}

	/** Stops probing and lets go of the connections it held; every shard counts as up again. */
	@Override
	public synchronized void stop() {
		this.watching = false;
		if (this.ticker != null) {
			this.ticker.shutdownNow();
			this.ticker = null;
		}
		if (this.probes != null) {
			this.probes.shutdownNow();
			this.probes = null;
		}
		this.held.values().forEach(ShardWatch::closeQuietly);
		this.held.clear();
	}

	/**
	 * @param answered when the shard last answered
	 * @param probed when its last probe came back
	 * @param failure why its last probe failed, or {@code null} when it answered
	 */
	private record State(long answered, long probed, @Nullable Throwable failure) {
	}

	/**
	 * A failure as operators see it where others may read it too (the endpoint, the dashboard, info,
	 * health): its kind, its class and SQLState, never the driver's message, which names the server's
	 * host and the user; the log's warning has that.
	 */
	public static String describe(Throwable failure) {
		if (failure instanceof Unanswered) {
			return failure.getMessage();
		}
		String sqlState = null;
		for (Throwable cause = failure; cause != null && sqlState == null; cause = cause.getCause()) {
			if (cause instanceof java.sql.SQLException sql) {
				sqlState = sql.getSQLState();
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		String kind = switch (FailureCause.of(failure)) {
			case CONNECTION -> "no connection";
			case CONFLICT -> "a conflict";
			case ERROR -> "an error";
		};
		return kind + " (" + failure.getClass().getSimpleName() + ((sqlState != null) ? ", SQLState " + sqlState : "")
				+ "; the application's log has the driver's message)";
	}

	/** A probe's connection that did not answer in time: the watch's own words, safe to show. */
	private static final class Unanswered extends IllegalStateException {

		Unanswered(String message) {
			super(message);
		}

	}

}
