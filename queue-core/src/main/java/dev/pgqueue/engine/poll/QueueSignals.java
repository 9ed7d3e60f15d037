package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.QueueAssignment;
import dev.pgqueue.engine.service.EngineThreads;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.metrics.QueueMetrics;
import org.jspecify.annotations.Nullable;


/**
 * The degradation signals of every queue this application polls: one {@link ClaimProgress} per
 * queue, shared by all the queue's claiming threads, read by the stats reader and the health check.
 *
 * <p>Short claims are checked on one daemon thread, started when the first check is due and ended
 * after half a minute without any; none runs when metrics are off ({@link QueueMetrics#NONE}), since
 * nothing would publish what it finds. Close it to stop that thread.
 */
public final class QueueSignals implements AutoCloseable {

	/** How long a queue counts as slipping after a job missed its SLA, by default: two default stats intervals. */

	private final JobRepository repository;

	private final QueueMetrics metrics;

	private final Duration slaWindow;

	private final @Nullable ThreadPoolExecutor checks;

	private final Map<String, ClaimProgress> queues = new ConcurrentHashMap<>();

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
		this.checks = (metrics != QueueMetrics.NONE) ? checkExecutor() : null;
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
				(settings.assignment() == QueueAssignment.BUCKETS) ? null : this.checks));
	}

	/** The signals of the queue, or {@code null} when it is not polled here. */
	public @Nullable ClaimProgress get(String queue) {
		return this.queues.get(queue);
	}

	/** The signals of every queue polled here. */
	public Collection<ClaimProgress> all() {
		return List.copyOf(this.queues.values());
	}

	@Override
	public void close() {
		if (this.checks != null) {
			this.checks.shutdownNow();
		}
	}

}
