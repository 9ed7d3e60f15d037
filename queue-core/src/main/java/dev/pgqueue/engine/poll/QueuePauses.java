package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

import dev.pgqueue.engine.sql.AdminRepository;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;

/**
 * Which queues an operator paused, as this instance's pollers see it: the pause table, read again
 * when a claim asks and the last reading is a second old, or at once after a notification (or a
 * pause in this application) said it changed. So a pause reaches every poller within a second
 * without notifications, and within a notification's delivery with them; a queue that is never
 * paused costs one read of an empty table a second, off the claim statements.
 *
 * <p>A reading that fails keeps the last one and is tried again a second later: the claims that ask
 * fail the same way meanwhile.
 */
public final class QueuePauses {

	/** Longest a reading is used before the table is read again. */
	public static final Duration MAX_AGE = Duration.ofSeconds(1);

	private static final Logger logger = LoggerFactory.getLogger(QueuePauses.class);

	private final AdminRepository repository;

	private final long maxAgeNanos;

	private final ReentrantLock reading = new ReentrantLock();

	private volatile Set<String> paused = Set.of();

	private volatile long readAt;

	/** Set by a change announced since the last reading began. */
	private volatile boolean stale = true;

	public QueuePauses(AdminRepository repository) {
		this(repository, MAX_AGE);
	}

	/**
	 * @param maxAge longest a reading is used before the table is read again
	 */
	public QueuePauses(AdminRepository repository, Duration maxAge) {
		this.repository = repository;
		this.maxAgeNanos = maxAge.toNanos();
	}

	/** Whether the queue is paused, reading the table first if the last reading is too old. */
	public boolean isPaused(String queue) {
		return current().contains(queue);
	}

	/** The paused queues, reading the table first if the last reading is too old. */
	public Set<String> current() {
		if (this.stale || System.nanoTime() - this.readAt >= this.maxAgeNanos) {
			read();
		}
		return this.paused;
	}

	/** A pause or resume was announced: the next question reads the table. */
	public void changed() {
		this.stale = true;
	}

	/** The channel on which pauses and resumes are announced. */
	public String channel() {
		return this.repository.pausesChannel();
	}

	private void read() {
		// One thread reads; others meanwhile go on with the last reading.
		if (!this.reading.tryLock()) {
			return;
		}
		try {
			// Cleared before the read: a change announced while it runs makes the next question read again.
			this.stale = false;
			this.paused = this.repository.pausedQueues();
		}
		catch (DataAccessException ex) {
			logger.debug("pgqueue could not read the paused queues; keeping the last reading: {}", ex.toString());
		}
		finally {
			this.readAt = System.nanoTime();
			this.reading.unlock();
		}
	}

}
