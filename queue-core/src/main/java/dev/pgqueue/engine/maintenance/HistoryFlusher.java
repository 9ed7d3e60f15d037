package dev.pgqueue.engine.maintenance;

import java.time.Duration;
import java.util.List;
import java.util.TreeMap;

import dev.pgqueue.engine.job.CountedMinute;
import dev.pgqueue.engine.run.QueueHistoryRecorder;
import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.service.ServiceHealth;
import dev.pgqueue.engine.sql.HistoryRepository;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Adds what this instance counted ({@link QueueHistoryRecorder}) to the queues' per-minute history,
 * each flush interval and once more when it stops: one upsert for every queue and minute counted
 * since the last flush, which adds to what other instances wrote in the same rows.
 *
 * <p>A flush that fails (the database is away, the statement timed out) keeps what it took, and the
 * next flush writes it with what came since; it logs a warning naming the cause and never touches
 * job processing, which only ever writes to memory. What is kept is bounded: past
 * {@value #MAX_PENDING} queue-minutes the oldest are dropped, with a warning.
 */
public final class HistoryFlusher extends PeriodicService {

	/** Most queue-minutes kept while flushes fail: a week of one queue, a day of seven. */
	static final int MAX_PENDING = 10_000;

	private static final Logger logger = LoggerFactory.getLogger(HistoryFlusher.class);

	private final QueueHistoryRecorder recorder;

	private final HistoryRepository repository;

	/** What was taken from the recorder and not written yet, by minute then queue. */
	private final TreeMap<MinuteOfQueue, CountedMinute> pending = new TreeMap<>();

	public HistoryFlusher(QueueHistoryRecorder recorder, HistoryRepository repository, Duration interval) {
		super("history flusher", interval);
		this.recorder = recorder;
		this.repository = repository;
	}

	@Override
	protected void runOnce() {
		flush();
	}

	/**
	 * Writes what was counted since the last successful flush. Returns how many queue-minutes were
	 * written; 0 when there was nothing, or when the write failed (what it held is kept).
	 */
	public synchronized int flush() {
		for (CountedMinute counted : this.recorder.drain()) {
			this.pending.merge(new MinuteOfQueue(counted.minute(), counted.queue()), counted, CountedMinute::plus);
		}
		if (this.pending.isEmpty()) {
			return 0;
		}
		try {
			this.repository.addMinutes(List.copyOf(this.pending.values()));
		}
		catch (RuntimeException ex) {
			int dropped = dropOldest();
			logger.warn("pgqueue could not write the queues' history ({} queue-minutes kept for the next flush{}): {}",
					this.pending.size(), (dropped > 0) ? ", " + dropped + " oldest dropped" : "", ServiceHealth.describe(ex));
			return 0;
		}
		int written = this.pending.size();
		this.pending.clear();
		return written;
	}

	private int dropOldest() {
		int dropped = 0;
		while (this.pending.size() > MAX_PENDING) {
			this.pending.pollFirstEntry();
			dropped++;
		}
		return dropped;
	}

	/** Queue-minutes taken from the recorder and not written yet. */
	public synchronized int pending() {
		return this.pending.size();
	}

	/** Stops the timer, then writes what was counted until now. */
	@Override
	public void stop() {
		boolean wasRunning = isRunning();
		super.stop();
		if (wasRunning) {
			try {
				flush();
			}
			catch (RuntimeException ex) {
				logger.warn("pgqueue could not write the queues' history at shutdown: {}", ServiceHealth.describe(ex));
			}
		}
	}

	private record MinuteOfQueue(long minute, String queue) implements Comparable<MinuteOfQueue> {

		@Override
		public int compareTo(MinuteOfQueue other) {
			int byMinute = Long.compare(this.minute, other.minute);
			return (byMinute != 0) ? byMinute : this.queue.compareTo(other.queue);
		}

	}

}
