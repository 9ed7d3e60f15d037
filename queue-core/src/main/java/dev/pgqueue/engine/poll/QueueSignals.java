package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.QueueAssignment;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.service.EngineThreads;
import dev.pgqueue.engine.service.ServiceHealth;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.metrics.QueueMetrics;
import org.jspecify.annotations.Nullable;


/**
 * The degradation signals of every queue this application polls: one {@link ClaimProgress} per
 * queue, shared by all the queue's claiming threads, read by the stats reader and the health check.
 *
 * <p>Short claims are checked on one daemon thread ({@code pgqueue-claim-check-1}), made when the
 * first check is due and ended after half a minute without any; none runs when metrics are off
 * ({@link QueueMetrics#NONE}), since nothing would publish what it finds. The signals are ready as
 * soon as they are made, since the pollers are given them before the engine starts anything;
 * {@link #stop()} ends the thread and turns later checks away until {@link #start()}.
 */
public final class QueueSignals implements EngineService {

	/** How long a queue counts as slipping after a job missed its SLA, by default: two default stats intervals. */

	private final JobRepository repository;

	private final QueueMetrics metrics;

	private final Duration slaWindow;

	/** Whether short claims are checked at all. */
	private final boolean checking;

	/** Runs the checks while running; guarded by this. */
	private @Nullable ThreadPoolExecutor checks;

	private volatile boolean stopped;

	private final Map<String, ClaimProgress> queues = new ConcurrentHashMap<>();

	/** How the checks fare: a failed one is logged and counted, and the next short claim is checked again. */
	private final ServiceHealth health = new ServiceHealth("claim check");

	public QueueSignals(JobRepository repository, QueueMetrics metrics) {
		this(repository, metrics, EngineSettings.DEFAULT_SLA_WINDOW);
	}

	/**
	 * @param slaWindow how long a queue counts as slipping after a job missed its SLA
	 */
	public QueueSignals(JobRepository repository, QueueMetrics metrics, Duration slaWindow) {
		this.repository = repository;
		this.metrics = metrics;
		this.slaWindow = slaWindow;
		this.checking = (metrics != QueueMetrics.NONE);
		this.checks = this.checking ? checkExecutor() : null;
	}

	private static ThreadPoolExecutor checkExecutor() {
		// At most one check per queue waits here at a time (see ClaimProgress), so the queue stays short.
		ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
				EngineThreads.platformFactory(null, "claim-check"));
		executor.allowCoreThreadTimeOut(true);
		return executor;
	}

	/**
	 * The signals of the queue, made on first use with the queue's SLA. A queue with bucket assignment
	 * gets no check of its short claims: its claims read only this instance's buckets, so the rows
	 * other instances hold in theirs are not work this instance stepped over.
	 */
	public ClaimProgress of(QueueSettings settings) {
		return this.queues.computeIfAbsent(settings.name(), (queue) -> new ClaimProgress(queue, settings.sla(),
				this.slaWindow, this.repository, this.metrics,
				(settings.assignment() == QueueAssignment.BUCKETS || !this.checking) ? null : this::check));
	}

	/** The signals of the queue, or {@code null} when it is not polled here. */
	public @Nullable ClaimProgress get(String queue) {
		return this.queues.get(queue);
	}

	/** The signals of every queue polled here. */
	public Collection<ClaimProgress> all() {
		return List.copyOf(this.queues.values());
	}

	/** Runs a check on the checks' thread; turned away once stopped. */
	private void check(Runnable check) {
		ThreadPoolExecutor executor;
		synchronized (this) {
			executor = this.checks;
		}
		if (executor == null) {
			throw new RejectedExecutionException("The checks of short claims are stopped");
		}
		executor.execute(() -> {
			try {
				check.run();
			}
			catch (Throwable ex) {
				// Thrown out of the task, it would cost the executor its thread and go unlogged.
				this.health.failed(ex, "the next short claim is checked again");
			}
		});
	}

	@Override
	public ServiceHealth health() {
		return this.health;
	}

	@Override
	public String name() {
		return "claim check";
	}

	/** Checks short claims again, after a {@link #stop()}. */
	@Override
	public synchronized void start() {
		if (!this.stopped) {
			return;
		}
		this.checks = this.checking ? checkExecutor() : null;
		this.stopped = false;
	}

	@Override
	public boolean isRunning() {
		return !this.stopped;
	}

	/** Ends the checks' thread; later checks are turned away. */
	@Override
	public synchronized void stop() {
		if (this.stopped) {
			return;
		}
		this.stopped = true;
		if (this.checks != null) {
			this.checks.shutdownNow();
			this.checks = null;
		}
	}

	/** {@link #stop()}, as the engine's assembly asks for it when the engine closes. */
	public void close() {
		stop();
	}

}
