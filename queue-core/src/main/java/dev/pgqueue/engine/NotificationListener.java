package dev.pgqueue.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.Consumer;

import javax.sql.DataSource;

import dev.pgqueue.engine.poll.JobPoller;
import dev.pgqueue.engine.poll.PollerWakeUps;
import dev.pgqueue.engine.poll.QueuePauses;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.service.EngineThreads;
import dev.pgqueue.engine.service.FailureStreak;
import dev.pgqueue.engine.service.PooledConnections;
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
 * never woken for a job it cannot see yet. This listener holds one connection from the data source
 * with {@code LISTEN} and wakes the pollers of the named queue. Many notifications arriving while a
 * poller is busy fold into one extra poll. Polling on the interval remains the fallback: if the
 * connection drops, the listener reconnects with backoff and nothing is lost but latency.
 *
 * <p>Given the application's {@link QueuePauses}, it also listens on the channel of pauses and
 * resumes, so that a queue paused or resumed anywhere is seen by this application's pollers at once
 * rather than at their next reading of the pause table (at most a second later).
 *
 * <p>Needs a session-level connection: turn notifications off behind a connection pooler in
 * transaction mode (PgBouncer), where {@code LISTEN} does not work.
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

	private final DataSource dataSource;

	private final @Nullable String controlChannel;

	private final @Nullable Consumer<String> controls;

	private final String channel;

	private final PollerWakeUps pollers;

	private final @Nullable QueuePauses pauses;

	private volatile boolean running;

	private volatile @Nullable Thread thread;

	private volatile @Nullable Connection connection;

	/** A listener that wakes the pollers registered with it. */
	public NotificationListener(DataSource dataSource, String channel) {
		this(dataSource, channel, new PollerWakeUps());
	}

	/** A listener that wakes the pollers of {@code pollers}. */
	public NotificationListener(DataSource dataSource, String channel, PollerWakeUps pollers) {
		this(dataSource, channel, pollers, null);
	}

	/**
	 * A listener that wakes the pollers of {@code pollers}, and also listens on the channel of
	 * {@code pauses}: an announced pause or resume makes the pollers read the pause table again at
	 * once, and wakes the queue's pollers (a resumed queue claims without waiting for its interval).
	 */
	public NotificationListener(DataSource dataSource, String channel, PollerWakeUps pollers,
			@Nullable QueuePauses pauses) {
		this(dataSource, channel, pollers, pauses, null, null);
	}

	/**
	 * As {@link #NotificationListener(DataSource, String, PollerWakeUps, QueuePauses)}, also listening
	 * on {@code controlChannel}, whose notifications (cancel requests of running jobs) go to
	 * {@code controls}.
	 */
	public NotificationListener(DataSource dataSource, String channel, PollerWakeUps pollers,
			@Nullable QueuePauses pauses, @Nullable String controlChannel, @Nullable Consumer<String> controls) {
		this.dataSource = dataSource;
		this.channel = channel;
		this.pollers = pollers;
		this.pauses = pauses;
		this.controlChannel = controlChannel;
		this.controls = controls;
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


	private void listenLoop() {
		FailureStreak failures = new FailureStreak(PooledConnections.of(this.dataSource));
		while (this.running) {
			long started = System.nanoTime();
			try (Connection con = this.dataSource.getConnection()) {
				this.connection = con;
				if (!con.getAutoCommit()) {
					con.setAutoCommit(true);
				}
				NotificationRepository.listen(con, this.channel);
				if (this.pauses != null) {
					NotificationRepository.listen(con, this.pauses.channel());
				}
				if (this.controlChannel != null) {
					NotificationRepository.listen(con, this.controlChannel);
				}
				PGConnection pg = con.unwrap(PGConnection.class);
				if (failures.succeeded() != null) {
					logger.info("pgqueue notifications: listening again on channel '{}'", this.channel);
				}
				// Jobs committed, and pauses changed, while we were not listening would otherwise wait for
				// the poll interval.
				if (this.pauses != null) {
					this.pauses.changed();
				}
				this.pollers.wakeAll();
				while (this.running) {
					PGNotification[] notifications = pg.getNotifications(RECEIVE_TIMEOUT_MILLIS);
					if (notifications != null) {
						for (PGNotification notification : notifications) {
							if (this.controls != null && notification.getName().equals(this.controlChannel)) {
								this.controls.accept(notification.getParameter());
								continue;
							}
							if (this.pauses != null && !this.channel.equals(notification.getName())) {
								this.pauses.changed();
							}
							this.pollers.wake(notification.getParameter());
						}
					}
				}
			}
			catch (SQLException | RuntimeException ex) {
				if (!this.running) {
					return;
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

	/** How long a notification may wait before the listener looks; for documentation and tests. */
	public static Duration receiveTimeout() {
		return Duration.ofMillis(RECEIVE_TIMEOUT_MILLIS);
	}

}
