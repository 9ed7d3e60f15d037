package dev.pgqueue.engine.maintenance;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.sql.PollingRepository;
import org.jspecify.annotations.Nullable;

/**
 * Tells every instance, producers included, which queues are polled anywhere and which kinds have
 * been handled where, so that a job nobody will run can be reported when it is enqueued (without a
 * query on the enqueue's path) and while it waits.
 *
 * <p>Every interval, on a thread of its own, it:
 * <ol>
 * <li>heartbeats a row per queue this instance polls ({@code pgqueue_pollers}); a queue is polled
 * while some instance's row for it is younger than {@value #MISSED_HEARTBEATS} intervals, so a queue
 * whose last poller stopped or died counts as polled for that long, which covers a quick restart;
 * <li>records the kinds this instance handles in each of them ({@code pgqueue_handled_kinds}),
 * rewriting a row only when it was last seen over {@link #KIND_REFRESH} ago. Kinds are remembered
 * after their instances stop, for {@link #KIND_RETENTION}: while a worker restarts, its queue has no
 * live poller, and its kinds must not look like kinds nobody handles;
 * <li>prunes the rows of instances gone for {@link #POLLER_RETENTION} and the kinds unseen for
 * {@link #KIND_RETENTION};
 * <li>reads both back into a {@link PolledQueues} view, to which it adds this instance's own queues
 * and kinds (so that a heartbeat that failed never makes this instance's queues look unpolled here).
 * </ol>
 * An instance that polls nothing (one that only enqueues) only reads. Before the first read, and
 * after a failed one, the view stays what it was ({@code null} at first: nothing is reported).
 */
public final class PollingHeartbeat extends PeriodicService {

	/** How often each instance heartbeats and reads, unless the engine is built with another interval. */
	public static final Duration INTERVAL = Duration.ofSeconds(10);

	/** Heartbeats a poller may miss before its queue no longer counts as polled by it. */
	public static final int MISSED_HEARTBEATS = 3;

	/** How long the row of an instance that stopped heartbeating is kept. */
	static final Duration POLLER_RETENTION = Duration.ofHours(1);

	/** How long a kind is remembered as handled in a queue after it was last seen so. */
	public static final Duration KIND_RETENTION = Duration.ofDays(30);

	/** How old a kind's last sighting must be before a heartbeat writes it again. */
	static final Duration KIND_REFRESH = Duration.ofHours(1);

	private final PollingRepository repository;

	private final Supplier<Map<String, String[]>> polledHere;

	private final String instance;

	private final Duration expiry;

	private volatile @Nullable PolledQueues view;

	/**
	 * @param polledHere the queues this instance polls and the kinds it handles in each; empty when
	 * it polls none
	 * @param interval time between two heartbeats
	 */
	public PollingHeartbeat(PollingRepository repository, Supplier<Map<String, String[]>> polledHere,
			Duration interval) {
		super("polling heartbeat", interval);
		this.repository = repository;
		this.polledHere = polledHere;
		this.instance = ManagementFactory.getRuntimeMXBean().getName() + "/"
				+ UUID.randomUUID().toString().substring(0, 8);
		this.expiry = interval.multipliedBy(MISSED_HEARTBEATS);
	}

	@Override
	protected void runOnce() {
		refresh();
	}

	/** Heartbeats this instance's queues and kinds, prunes, and reads a fresh view, which it returns. */
	public PolledQueues refresh() {
		Map<String, String[]> here = this.polledHere.get();
		if (!here.isEmpty()) {
			this.repository.heartbeat(this.instance, here.keySet());
			this.repository.recordHandledKinds(here, KIND_REFRESH);
		}
		this.repository.prune(POLLER_RETENTION, KIND_RETENTION);
		PolledQueues read = new PolledQueues(this.repository.polledQueues(this.expiry),
				this.repository.queuesByHandledKind());
		PolledQueues fresh = read.with(here);
		this.view = fresh;
		return fresh;
	}

	/** The last view read, or {@code null} before the first read. */
	public @Nullable PolledQueues view() {
		return this.view;
	}

	/** This instance's name in the pollers table. */
	public String instance() {
		return this.instance;
	}

	/** How long after its last heartbeat a poller's queue no longer counts as polled by it. */
	public Duration expiry() {
		return this.expiry;
	}

}
