package dev.pgqueue.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.service.EngineThreads;
import dev.pgqueue.engine.service.ServiceHealth;
import dev.pgqueue.engine.sql.JobRepository;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends at most one notification per queue per interval from this application, however fast it
 * enqueues, without leaving any committed job unannounced.
 *
 * <p>An enqueue of due jobs asks {@link #tryNotifyNow}: when the queue has not been notified for an
 * interval, its insert notifies in the same statement (delivered at commit, so no poller is woken
 * before it can see the job). Otherwise the insert does not notify, and once it commits the
 * enqueue calls {@link #notifyLater}: one notification is sent for the queue, on a connection of its
 * own, when the interval since the last one has passed. It is sent after that commit, so it covers
 * every job suppressed before it.
 *
 * <p>Why: a listener's driver hands over notifications only once none has arrived for about a
 * millisecond (see {@link NotificationListener}). At one notifying commit per millisecond or more,
 * notifications pile up in the driver and pickup waits tens of milliseconds. Spacing them at least
 * the interval apart keeps delivery immediate, costs a job enqueued in between at most the interval,
 * and spares PostgreSQL most of the work NOTIFY adds to a commit (every notifying commit holds one
 * server-wide lock while it completes).
 *
 * <p>The notifications sent later go out on one daemon thread, {@code pgqueue-notify}, made when the
 * first is arranged. The throttle is ready as soon as it is made, since enqueues may come before the
 * engine starts anything; {@link #stop()} sends what still waits and ends the thread, after which
 * every enqueue notifies in its own statement until {@link #start()}.
 */
class NotificationThrottle implements EngineService {

	/** Default shortest time between two notifications of a queue. */

	private final ServiceHealth health = new ServiceHealth("notify");

	private static final Logger logger = LoggerFactory.getLogger(NotificationThrottle.class);

	private final JobRepository repository;

	private final long intervalNanos;

	private final Map<String, QueueState> queues = new ConcurrentHashMap<>();

	private volatile ScheduledThreadPoolExecutor scheduler;

	private volatile boolean stopped;

	/**
	 * @param repository where notifications are sent
	 * @param interval shortest time between two notifications of a queue; zero notifies every
	 * enqueue in its own statement
	 */
	public NotificationThrottle(JobRepository repository, Duration interval) {
		this.repository = repository;
		this.intervalNanos = interval.toNanos();
		this.scheduler = EngineThreads.newScheduler(null, "notify", 0);
	}

	/**
	 * Whether an enqueue of due jobs into these queues, about to run, should notify them in its own
	 * statement. If so, the queues count as notified now; if not, the caller must call
	 * {@link #notifyLater} once its transaction has committed.
	 */
	public boolean tryNotifyNow(Collection<String> queueNames) {
		if (this.intervalNanos == 0 || this.stopped) {
			return true;
		}
		long now = System.nanoTime();
		List<QueueState> states = queueNames.stream()
			.map((queue) -> this.queues.computeIfAbsent(queue, (name) -> new QueueState()))
			.toList();
		if (states.stream().noneMatch((state) -> state.isDue(now, this.intervalNanos))) {
			return false;
		}
		// One statement notifies every queue it inserts into.
		states.forEach((state) -> state.notified(now));
		return true;
	}

	/**
	 * Arranges a notification for queues that received due jobs in a committed transaction that did
	 * not notify them: sent when the interval since the queue's last notification has passed, or
	 * folded into one already arranged.
	 */
	public void notifyLater(Collection<String> queueNames) {
		if (this.stopped) {
			send(List.copyOf(queueNames));
			return;
		}
		long now = System.nanoTime();
		for (String queue : queueNames) {
			QueueState state = this.queues.computeIfAbsent(queue, (name) -> new QueueState());
			synchronized (state) {
				if (state.pending) {
					continue;
				}
				state.pending = true;
				long delay = state.notified ? Math.max(0, state.lastNotifiedAt + this.intervalNanos - now) : 0;
				try {
					this.scheduler.schedule(() -> sendPending(queue, state), delay, TimeUnit.NANOSECONDS);
				}
				catch (RejectedExecutionException ex) {
					// Stopped meanwhile: send it now rather than lose it.
					state.pending = false;
					send(List.of(queue));
				}
			}
		}
	}

	private void sendPending(String queue, QueueState state) {
		synchronized (state) {
			if (!state.pending) {
				return;
			}
			// Cleared before sending: a commit from now on arranges a notification of its own, and
			// one that came before is covered by this one, which starts after it.
			state.pending = false;
			state.notified = true;
			state.lastNotifiedAt = System.nanoTime();
		}
		// On the scheduler's thread, outside any transaction: a transaction of its own, which need not
		// wait for its commit to reach disk.
		send(List.of(queue), true);
	}

	private void send(List<String> queueNames) {
		send(queueNames, false);
	}

	private void send(List<String> queueNames, boolean alone) {
		try {
			if (alone) {
				this.repository.notifyQueuesAlone(queueNames);
			}
			else {
				this.repository.notifyQueues(queueNames);
			}
		}
		catch (RuntimeException ex) {
			// Pollers still find the jobs at their poll interval.
			logger.warn("pgqueue could not notify queue(s) {} of new jobs; their pollers pick them up at the next "
					+ "poll instead: {}", queueNames, ex.toString());
		}
		catch (Error ex) {
			this.health.failed(ex, "the pollers of " + queueNames + " pick their jobs up at the next poll");
		}
	}

	@Override
	public String name() {
		return "notify";
	}

	@Override
	public ServiceHealth health() {
		return this.health;
	}

	/** Arranges notifications to send later again, after a {@link #stop()}. */
	@Override
	public synchronized void start() {
		if (!this.stopped) {
			return;
		}
		this.scheduler = EngineThreads.newScheduler(null, "notify", 0);
		this.stopped = false;
	}

	@Override
	public boolean isRunning() {
		return !this.stopped;
	}

	/** {@link #stop()}, as the engine's assembly asks for it when the engine closes. */
	public void close() {
		stop();
	}

	/** Sends the notifications still waiting for their interval, then stops. */
	@Override
	public synchronized void stop() {
		if (this.stopped) {
			return;
		}
		this.stopped = true;
		this.scheduler.shutdownNow();
		List<String> pending = new ArrayList<>();
		this.queues.forEach((queue, state) -> {
			synchronized (state) {
				if (state.pending) {
					state.pending = false;
					pending.add(queue);
				}
			}
		});
		if (!pending.isEmpty()) {
			send(pending);
		}
	}

	/** One queue's notifications from this application; guarded by its own monitor. */
	private static final class QueueState {

		boolean notified;

		long lastNotifiedAt;

		boolean pending;

		synchronized boolean isDue(long now, long intervalNanos) {
			return !this.notified || now - this.lastNotifiedAt >= intervalNanos;
		}

		synchronized void notified(long now) {
			this.notified = true;
			this.lastNotifiedAt = now;
		}

	}

}
