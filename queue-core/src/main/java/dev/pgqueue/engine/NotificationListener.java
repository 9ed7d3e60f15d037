package dev.pgqueue.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.time.Duration;
import java.util.function.Consumer;

import javax.sql.DataSource;

import dev.pgqueue.NotificationConnectionFactory;
import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.poll.PollerWakeUps;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.service.EngineThreads;
import dev.pgqueue.engine.service.FailureStreak;
import dev.pgqueue.engine.service.PooledConnections;
import dev.pgqueue.engine.service.ServiceHealth;
import dev.pgqueue.engine.settings.EngineSettings;
import dev.pgqueue.engine.sql.NotificationRepository;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;


/**
 * Wakes pollers when jobs become due, instead of leaving them to their poll interval.
 *
 * <p>Inserts (and promotions of scheduled jobs) send {@code NOTIFY} on the schema's channel with
 * the queue's name; PostgreSQL delivers it when the inserting transaction commits, so a poller is
 * never woken for a job it cannot see yet. This listener holds one session with {@code LISTEN} and
 * wakes the pollers of the named queue. Many notifications arriving while a poller is busy fold into
 * one extra poll. Polling on the interval remains the fallback: nothing is lost while the listener is
 * deaf but latency.
 *
 * <p>The session is its own, not the pool's ({@link NotificationConnections}), named
 * {@value NotificationConnections#APPLICATION_NAME}. A session held for hours meets what a pool's
 * short-lived connections do not: a failover or a network fault that leaves its socket half-open, so
 * that nothing arrives and nothing fails until the kernel gives up, which takes hours. Hence the
 * liveness check: after half the liveness timeout without a notification the listener asks the
 * server for an answer ({@code SELECT 1}) and waits at most the other half (the session's network
 * timeout); a session that does not answer is aborted and a new one opened, at once and then with
 * backoff. Whenever it listens again, every poller polls once: jobs committed while it was deaf
 * would otherwise wait for their interval.
 *
 * <p>Given the application's {@link QueuePauses}, it also listens on the channel of pauses and
 * resumes, so that a queue paused or resumed anywhere is seen by this application's pollers at once
 * rather than at their next reading of the pause table (at most a second later).
 *
 * <p>Needs a session-level connection: turn notifications off behind a connection pooler in
 * transaction mode (PgBouncer), where {@code LISTEN} does not work, unless a
 * {@link NotificationConnectionFactory} reaches the database another way.
 *
 * <p>Delivery lags when notifications come close together. pgjdbc's {@code getNotifications}
 * returns only once no further message arrives within 1 ms, so while notifications come less than a
 * millisecond apart they accumulate in the driver: measured at 1 000 notifying commits per second,
 * 7–14 ms p50 and 45–130 ms p99 from commit to receipt, against 1.1 ms at 300/s. Hence
 * {@link NotificationThrottle} spaces out each application's notifications of a queue, and jobs
 * enqueued in this application wake its pollers in-process ({@link PollerWakeUps}).
 */
public class NotificationListener implements EngineService {

	private static final Logger logger = LoggerFactory.getLogger(NotificationListener.class);

	private static final int RECEIVE_TIMEOUT_MILLIS = 500;

	private final NotificationConnectionFactory connections;

	private final @Nullable String controlChannel;

	private final ServiceHealth health = new ServiceHealth("notifications");

	private final @Nullable Consumer<String> controls;

	private final String channel;

	private final PollerWakeUps pollers;

	private final @Nullable QueuePauses pauses;

	/** Silence after which the session is checked. */
	private final long checkAfterNanos;

	/** How long a check may wait for the answer: the session's network timeout. */
	private final int answerMillis;

	/** How long one wait for notifications lasts, between looks at {@link #running} and the silence. */
	private final int receiveMillis;

	private volatile boolean running;

	private volatile @Nullable Thread thread;

	private volatile @Nullable Connection connection;

	/**
	 * A listener on its own connection made after {@code dataSource}'s ({@link NotificationConnections}),
	 * with the default liveness timeout, that wakes the pollers registered with it.
	 */
	public NotificationListener(DataSource dataSource, String channel) {
		this(NotificationConnections.of(dataSource), EngineSettings.DEFAULT_LIVENESS_TIMEOUT, channel,
				new PollerWakeUps(), null, null, null);
	}

	/**
	 * A listener that wakes the pollers of {@code pollers}; given {@code pauses}, also listens on their
	 * channel (an announced pause or resume makes the pollers read the pause table again at once, and
	 * wakes the queue's pollers), and given {@code controlChannel}, on it too, whose notifications
	 * (cancel requests of running jobs) go to {@code controls}.
	 *
	 * @param connections opens each session the listener holds
	 * @param livenessTimeout longest time the listener may be deaf without noticing (see the class)
	 */
	public NotificationListener(NotificationConnectionFactory connections, Duration livenessTimeout, String channel,
			PollerWakeUps pollers, @Nullable QueuePauses pauses, @Nullable String controlChannel,
			@Nullable Consumer<String> controls) {
		this.connections = connections;
		this.channel = channel;
		this.pollers = pollers;
		this.pauses = pauses;
		this.controlChannel = controlChannel;
		this.controls = controls;
		long half = Math.max(1, livenessTimeout.toMillis() / 2);
		this.checkAfterNanos = Duration.ofMillis(half).toNanos();
		this.answerMillis = (int) Math.min(Integer.MAX_VALUE, half);
		this.receiveMillis = (int) Math.min(RECEIVE_TIMEOUT_MILLIS, half);
	}

	@Override
	public String name() {
		return "notifications";
	}

	/** Wakes this poller when its queue is notified. */
	public void register(JobPoller poller) {
		this.pollers.register(poller);
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		Thread listener = EngineThreads.PLATFORM.newThread(null, "notifications", this::listenLoop);
		this.thread = listener;
		listener.start();
	}

	@Override
	public synchronized void stop() {
		this.running = false;
		Thread listener = this.thread;
		if (listener != null) {
			listener.interrupt();
			try {
				listener.join(RECEIVE_TIMEOUT_MILLIS * 4L);
				Connection con = this.connection;
				if (listener.isAlive() && con != null) {
					// Waiting for the answer to a check on a deaf session: no need to wait it out.
					abort(con);
					listener.join(RECEIVE_TIMEOUT_MILLIS * 4L);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		this.thread = null;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public ServiceHealth health() {
		return this.health;
	}

	private void listenLoop() {
		try {
			listenUntilStopped();
		}
		catch (Throwable ex) {
			this.health.stopped(ex);
		}
	}

	private void listenUntilStopped() {
		FailureStreak failures = new FailureStreak(PooledConnections.NONE);
		while (this.running) {
			long started = System.nanoTime();
			try (Connection con = this.connections.connect()) {
				this.connection = con;
				PGConnection pg = prepare(con);
				if (failures.succeeded() != null) {
					logger.info("pgqueue notifications: listening again on channel '{}'", this.channel);
				}
				// Jobs committed, and pauses changed, while we were not listening would otherwise wait for
				// the poll interval.
				if (this.pauses != null) {
					this.pauses.changed();
				}
				this.pollers.wakeAll();
				listen(con, pg);
				release(con);
			}
			catch (SQLException | RuntimeException | Error ex) {
				if (!this.running) {
					return;
				}
				if (ex instanceof Error) {
					this.health.failed(ex, "it listens again on a new session");
				}
				// A lost connection is replaced at once; repeated failures space out.
				FailureStreak.Pause pause = failures.failed(ex, started);
				logger.warn("pgqueue notifications on channel '{}' failed ({} {} in a row); pollers fall back to their "
						+ "poll interval until it listens again, in {} ms: {}", this.channel, pause.inARow(),
						pause.cause().tag(), pause.delay().toMillis(), ex.toString());
				try {
					Thread.sleep(pause.delay().toMillis());
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					return;
				}
			}
			finally {
				this.connection = null;
			}
		}
	}

	/** Names the session, bounds its statements' waits, and listens on every channel. */
	private PGConnection prepare(Connection con) throws SQLException {
		if (!con.getAutoCommit()) {
			con.setAutoCommit(true);
		}
		// Bounds every statement's wait for an answer: a LISTEN on a deaf new session fails as a check does.
		con.setNetworkTimeout(Runnable::run, this.answerMillis);
		NotificationRepository.nameSession(con, NotificationConnections.APPLICATION_NAME);
		NotificationRepository.listen(con, this.channel);
		if (this.pauses != null) {
			NotificationRepository.listen(con, this.pauses.channel());
		}
		if (this.controlChannel != null) {
			NotificationRepository.listen(con, this.controlChannel);
		}
		return con.unwrap(PGConnection.class);
	}

	/**
	 * Hands the notifications over until stopped; throws when the session fails or does not answer a
	 * check after a silence.
	 */
	private void listen(Connection con, PGConnection pg) throws SQLException {
		long heardAt = System.nanoTime();
		while (this.running) {
			PGNotification[] notifications = pg.getNotifications(this.receiveMillis);
			if (notifications != null && notifications.length > 0) {
				heardAt = System.nanoTime();
				dispatch(notifications);
			}
			else if (System.nanoTime() - heardAt >= this.checkAfterNanos) {
				check(con);
				heardAt = System.nanoTime();
			}
		}
	}

	private void dispatch(PGNotification[] notifications) {
		for (PGNotification notification : notifications) {
			try {
				dispatch(notification);
			}
			catch (Throwable ex) {
				// One notification whose handling failed costs neither the session nor the next ones.
				this.health.failed(ex, "it goes on with the next notification");
			}
		}
	}

	private void dispatch(PGNotification notification) {
		if (this.controls != null && notification.getName().equals(this.controlChannel)) {
			this.controls.accept(notification.getParameter());
			return;
		}
		if (this.pauses != null && !this.channel.equals(notification.getName())) {
			this.pauses.changed();
		}
		this.pollers.wake(notification.getParameter());
	}

	/**
	 * A silence is either quiet queues or a deaf session (a half-open socket after a failover): only an
	 * answer tells them apart.
	 */
	private void check(Connection con) throws SQLException {
		try {
			NotificationRepository.ping(con);
		}
		catch (SQLException ex) {
			if (!this.running) {
				return;
			}
			abort(con);
			throw new SQLNonTransientConnectionException("the listening session did not answer a check within "
					+ this.answerMillis + " ms, after " + this.answerMillis + " ms without a notification; opening a new "
					+ "one (pgqueue.notifications.liveness-timeout)", "08006", ex);
		}
	}

	/** Leaves a session that may have been borrowed from a pool as it was lent. */
	private static void release(Connection con) {
		try {
			if (!con.isClosed()) {
				NotificationRepository.release(con);
			}
		}
		catch (SQLException ex) {
			logger.debug("pgqueue notifications: could not release the listening session: {}", ex.toString());
		}
	}

	private static void abort(Connection con) {
		try {
			con.abort(Runnable::run);
		}
		catch (SQLException | RuntimeException ex) {
			logger.debug("pgqueue notifications: could not abort the listening session: {}", ex.toString());
		}
	}

	/** How long a notification may wait before the listener looks; for documentation and tests. */
	public static Duration receiveTimeout() {
		return Duration.ofMillis(RECEIVE_TIMEOUT_MILLIS);
	}

}
