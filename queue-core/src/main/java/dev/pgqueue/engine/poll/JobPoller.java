package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import dev.pgqueue.engine.limits.RateGate;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.service.EngineThreads;
import dev.pgqueue.engine.service.ServiceHealth;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.settings.WorkerSettings;
import dev.pgqueue.metrics.QueueMetrics;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.core.task.SimpleAsyncTaskExecutor;

/**
 * The lifecycle of one queue's polling: one thread runs the poll loop, the queue's
 * {@link ClaimStrategy} decides what a claim is and runs what it claims on the {@link Workers}.
 *
 * <p>The loop never claims more than the strategy has room for (free worker slots, and in leased
 * mode jobs claimed ahead), claims again at once while claims come back full, and otherwise waits
 * a jittered poll interval, or less when woken ({@link #wakeUp()}) by a notification or an enqueue
 * in this application. A failing claim pauses claims as {@link ClaimFailures} decides: a lost
 * connection is claimed again at once on a fresh one, repeated failures space out.
 *
 * <p>Stopping is soft, then hard: claiming stops, running jobs get the shutdown timeout to finish,
 * then the strategy puts unfinished jobs back without using an attempt and their threads are
 * interrupted.
 */
public class JobPoller implements EngineService {

	/** How long the loop waits for room before looking again anyway. */
	private static final Duration ROOM_RECHECK = Duration.ofMillis(50);

	/** Longest a poller of a paused queue waits before it asks again whether the queue is paused. */
	private static final Duration PAUSED_RECHECK = QueuePauses.MAX_AGE;

	/** How long handlers get to react to interruption once the shutdown timeout has passed. */
	private static final Duration AFTER_INTERRUPT = Duration.ofSeconds(5);

	private static final Logger logger = LoggerFactory.getLogger(JobPoller.class);

	private final QueueSettings settings;

	/** The queue's rate limit, which says how long claims are held when a grant fell short. */
	private final RateGate rate;

	private final String[] kinds;

	private final String owner;

	private final ClaimStrategy strategy;

	private final ClaimScope scope;

	private final WorkerSettings lifecycle;

	private final @Nullable Executor sharedExecutor;

	private final PollSignals signals;

	private volatile boolean running;

	private final ServiceHealth health;

	private final QueueMetrics metrics;

	private volatile @Nullable Workers workers;

	private Thread pollThread;

	private Executor executor;

	/** The services of the scope and the strategy, in the order they started. */
	private List<EngineService> services = List.of();

	/**
	 * @param context the queue, its kinds and owner, the part of the queue its claims read (whose
	 * services start and stop with the poller), and the thread and shutdown settings of all queues
	 * @param strategy how the queue's mode claims and runs jobs
	 * @param sharedExecutor runs the workers of every queue, or {@code null} for a pool of this
	 * queue's own, made at start and shut down at stop
	 * @param queuePaused whether an operator paused the queue ({@link QueuePauses}); asked before
	 * every claim
	 */
	public JobPoller(RunContext context, ClaimStrategy strategy, @Nullable Executor sharedExecutor,
			BooleanSupplier queuePaused) {
		this.settings = context.settings();
		this.rate = context.rate();
		this.kinds = context.kinds();
		this.owner = context.owner();
		this.strategy = strategy;
		this.scope = context.scope();
		this.lifecycle = context.workers();
		this.sharedExecutor = sharedExecutor;
		this.signals = new PollSignals(queuePaused, new ClaimFailures(context.queue(), context.metrics(), context.connections()));
		this.health = new ServiceHealth(this.settings.name() + " poller");
		this.metrics = context.metrics();
		this.health.countIn(this.metrics::serviceFailed);
	}

	@Override
	public String name() {
		return this.settings.name() + " poller";
	}

	public QueueSettings settings() {
		return this.settings;
	}

	/** Kinds this poller claims. */
	public List<String> kinds() {
		return List.of(this.kinds);
	}

	/** Identifies this poller in lease columns and logs. */
	public String owner() {
		return this.owner;
	}

	/** Worker slots in use. */
	public int busySlots() {
		Workers current = this.workers;
		return (current != null) ? current.busy() : 0;
	}

	/** Leased mode: jobs claimed ahead that wait for a free worker. */
	public int claimedAheadJobs() {
		return this.strategy.claimedAhead();
	}

	/** Which part of the queue this poller's claims read. */
	public ClaimScope scope() {
		return this.scope;
	}

	/** Asks the poller to poll now rather than at the end of its interval (for example on a notification). */
	public void wakeUp() {
		this.signals.wakeUp();
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		this.signals.start();
		this.executor = (this.sharedExecutor != null) ? this.sharedExecutor : newExecutor();
		ThreadPoolExecutor ownPool = (this.executor != this.sharedExecutor
				&& this.executor instanceof ThreadPoolExecutor pool) ? pool : null;
		this.workers = new Workers(this.settings.concurrency(), this.executor, ownPool, this.signals);
		List<EngineService> services = new ArrayList<>(this.scope.prepare(this.signals));
		services.addAll(this.strategy.prepare(this.workers, this.signals));
		this.services = List.copyOf(services);
		this.services.forEach((service) -> service.health().countIn(this.metrics::serviceFailed));
		EngineService.startAll(this.services);
		this.pollThread = this.lifecycle.threads().newThread(this.settings.name(), "poller", this::pollLoop);
		this.pollThread.start();
		logger.info("Polling queue '{}' in {} mode, {} assignment: {} kinds, concurrency {}, batch size {}",
				this.settings.name(), this.settings.mode().name().toLowerCase(Locale.ROOT),
				this.settings.assignment().name().toLowerCase(Locale.ROOT), this.kinds.length, this.settings.concurrency(),
				this.settings.batchSize());
	}

	@Override
	public void stop() {
		CompletableFuture<Void> stopped = new CompletableFuture<>();
		stop(() -> stopped.complete(null));
		stopped.join();
	}

	/** Stops as {@link #stop()} does, on a thread of its own; calls {@code callback} once stopped. */
	public synchronized void stop(Runnable callback) {
		if (!this.running) {
			callback.run();
			return;
		}
		this.running = false;
		this.signals.stop();
		Thread poller = this.pollThread;
		Executor ownExecutor = (this.executor != this.sharedExecutor) ? this.executor : null;
		List<EngineService> services = this.services;
		this.lifecycle.threads().newThread(this.settings.name(), "stop", () -> {
			try {
				drain(poller);
			}
			finally {
				EngineService.stopAll(services);
				if (ownExecutor instanceof ExecutorService pool) {
					pool.shutdown();
				}
				callback.run();
			}
		}).start();
	}

	@Override
	public ServiceHealth health() {
		return this.health;
	}

	/** The services of the poller's scope and strategy while it runs (a completer, a lease keeper…). */
	public List<EngineService> services() {
		return this.services;
	}

	/** The queue's rate limit as this poller's claims meet it ({@link RateGate#NONE} without one). */
	public RateGate rate() {
		return this.rate;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}


	private void pollLoop() {
		try {
			loop();
		}
		catch (Throwable ex) {
			this.health.stopped(ex);
		}
	}

	private void loop() {
		while (this.running) {
			long started = System.nanoTime();
			try {
				long paused = this.signals.pauseRemainingNanos();
				if (paused > 0) {
					this.signals.awaitWakeUp(Duration.ofNanos(paused));
					continue;
				}
				int room = awaitClaimRoom();
				if (room == 0) {
					continue;
				}
				if (this.signals.queuePaused()) {
					// Jobs claimed before the pause run on; a resume wakes the poller where notifications are on.
					this.signals.awaitWakeUp(shorter(this.settings.pollInterval(), PAUSED_RECHECK));
					continue;
				}
				started = System.nanoTime();
				boolean full = this.strategy.claim(room);
				if (!full) {
					Duration interval = Backoff.jittered(this.settings.pollInterval());
					Duration held = this.rate.heldFor();
					// Held by a rate limit, the poller claims again as soon as a start frees.
					this.signals.awaitWakeUp(held.isZero() ? interval : shorter(interval, held));
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (RuntimeException ex) {
				// Pauses the loop (checked at its top) for as long as the queue's failures call for.
				this.signals.claimFailed(ex, started, "claiming");
			}
			catch (Error ex) {
				this.health.failed(ex, "it claims again after a pause");
				this.signals.claimFailed(ex, started, "claiming");
			}
		}
	}

	/**
	 * Waits until the strategy has room for a claim; zero when stopping. A claim is made as soon as
	 * there is room for one job: waiting for more would leave freed workers idle, and claims batch up
	 * by themselves under load, since slots that free up while one claim runs are all filled by the
	 * next.
	 */
	private int awaitClaimRoom() throws InterruptedException {
		while (this.running) {
			this.strategy.beforeClaim();
			int room = this.strategy.claimRoom();
			if (room > 0) {
				return room;
			}
			Duration interval = this.settings.pollInterval();
			this.signals.awaitWorkersChanged((interval.compareTo(ROOM_RECHECK) < 0) ? interval : ROOM_RECHECK);
		}
		return 0;
	}

	private static Duration shorter(Duration a, Duration b) {
		return (a.compareTo(b) < 0) ? a : b;
	}

	private void drain(Thread poller) {
		Duration timeout = this.lifecycle.shutdownTimeout();
		long deadline = System.nanoTime() + timeout.toNanos();
		Workers current = this.workers;
		try {
			poller.join(Math.max(1, timeout.toMillis()));
			this.strategy.stopClaiming();
			if (current.awaitIdle(deadline)) {
				logger.info("Queue '{}' stopped; every running job finished", this.settings.name());
				warnOfAbandoned(current);
				return;
			}
			this.strategy.abandonRunning();
			if (!current.awaitIdle(System.nanoTime() + AFTER_INTERRUPT.toNanos())) {
				logger.warn("Queue '{}': {} handlers ignored interruption and are still running; their jobs are back "
						+ "in the queue and their late outcomes will be discarded", this.settings.name(), current.busy());
			}
			warnOfAbandoned(current);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			this.strategy.abandonRunning();
		}
	}

	private void warnOfAbandoned(Workers current) {
		int abandoned = current.abandoned();
		if (abandoned > 0) {
			logger.warn("Queue '{}': {} listeners that ran past their time limit and ignored the interruption still run "
					+ "on threads their workers left; their jobs' outcomes are recorded, and the threads end when the "
					+ "listeners return", this.settings.name(), abandoned);
		}
	}

	private Executor newExecutor() {
		if (this.lifecycle.virtualThreads()) {
			SimpleAsyncTaskExecutor executor = new SimpleAsyncTaskExecutor(
					EngineThreads.name(this.settings.name(), "worker") + "-");
			executor.setVirtualThreads(true);
			// Slots bound what is handed over, so a virtual thread per task never exceeds the concurrency.
			return executor;
		}
		// Slots bound what is handed over, so the pool never queues more than it can run. Fixed size,
		// except while leased workers are abandoned to listeners past their time limit (Workers).
		return new ThreadPoolExecutor(this.settings.concurrency(), this.settings.concurrency(), 0L,
				TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), EngineThreads.platformFactory(this.settings.name(), "worker"));
	}

}
