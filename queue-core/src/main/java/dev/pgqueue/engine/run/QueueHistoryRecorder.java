package dev.pgqueue.engine.run;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

import dev.pgqueue.JobOutcome;
import dev.pgqueue.engine.job.CountedMinute;
import org.jspecify.annotations.Nullable;

/**
 * What each queue did in each minute on this instance, counted in memory until the history flusher
 * takes it ({@link #drain}) and adds it to {@code pgqueue_queue_history}: attempts that ended by
 * outcome, how long they ran, and how long jobs waited from their run-at to their claim.
 *
 * <p>The {@link JobRunner} feeds it on the workers' threads: {@link #waited} as an attempt starts,
 * {@link #ran} once its outcome stands. Recording takes no lock and touches no database: a map
 * lookup, then adders and a compare-and-set on the queue's current minute. It allocates only the
 * first time a queue is seen and once per queue per minute, when a new minute opens (and the adders'
 * cells, once each, when workers contend). A wait is recorded as its attempt starts, so a job that
 * a transactional batch runs again after rolling back counts its wait again; the outcome and run
 * time are recorded only once the outcome stands.
 *
 * <p>The minute is this instance's wall clock at the moment of recording, truncated to the minute.
 * Instances whose clocks are synchronised (NTP keeps them within milliseconds) put the same event
 * in the same minute, so the rows their flushes add to line up; a clock that is off by some seconds
 * moves the events of those seconds into the neighbouring minute, never loses them. The wait itself
 * is measured on the database clock: the claim's time less the job's run-at, both written by
 * PostgreSQL.
 *
 * <p>Why a recorder handed to the runner rather than a decorator of {@code QueueMetrics}: a
 * decorator would have to forward each of that interface's many default methods, and one it forgot
 * would silently drop that metric; the history would depend on which metrics the user's
 * implementation happens to report; and a wait reported at claim time would need a new metrics
 * method that exists only for this. The runner already sees the claimed job and the attempt's
 * outcome, in every mode and on the calling thread of the test kit, so one collaborator there sees
 * everything.
 *
 * <p>Draining reads each counter and subtracts what it read, so an attempt recorded meanwhile stays
 * for the next drain; a minute that closed is drained until it is two minutes old, so that a
 * worker that picked it just before it closed still lands in a drain. Only the flusher drains, one
 * drain at a time.
 */
public final class QueueHistoryRecorder {

	/** Records nothing: history is off, or nothing would write it. */
	public static final QueueHistoryRecorder OFF = new QueueHistoryRecorder(false, System::currentTimeMillis);

	private static final long MILLIS_PER_MINUTE = 60_000;

	private final boolean enabled;

	private final LongSupplier clock;

	private final Map<String, QueueMinutes> queues = new ConcurrentHashMap<>();

	/** A recorder on this instance's wall clock. */
	public QueueHistoryRecorder() {
		this(true, System::currentTimeMillis);
	}

	/**
	 * @param clock the wall clock, in milliseconds since the epoch
	 */
	QueueHistoryRecorder(boolean enabled, LongSupplier clock) {
		this.enabled = enabled;
		this.clock = clock;
	}

	/** Whether this recorder counts anything. */
	public boolean enabled() {
		return this.enabled;
	}

	/**
	 * A job of the queue was claimed at {@code claimedAt} (database clock) and became due at
	 * {@code runAt}; nothing is recorded when the claim's time is unknown.
	 */
	public void waited(String queue, Instant runAt, @Nullable Instant claimedAt) {
		if (!this.enabled || claimedAt == null) {
			return;
		}
		long nanos = (claimedAt.getEpochSecond() - runAt.getEpochSecond()) * 1_000_000_000L
				+ (claimedAt.getNano() - runAt.getNano());
		current(queue).waited(Math.max(0, nanos));
	}

	/** An attempt of a job of the queue ran for {@code nanos} and ended with this outcome. */
	public void ran(String queue, JobOutcome outcome, long nanos) {
		if (!this.enabled) {
			return;
		}
		current(queue).ran(outcome, Math.max(0, nanos));
	}

	private MinuteCounts current(String queue) {
		QueueMinutes minutes = this.queues.get(queue);
		if (minutes == null) {
			minutes = this.queues.computeIfAbsent(queue, QueueMinutes::new);
		}
		return minutes.at(Math.floorDiv(this.clock.getAsLong(), MILLIS_PER_MINUTE));
	}

	/**
	 * Takes what was counted since the last drain, one entry per queue and minute that has any.
	 * Called by one thread at a time (the history flusher).
	 */
	public List<CountedMinute> drain() {
		long now = Math.floorDiv(this.clock.getAsLong(), MILLIS_PER_MINUTE);
		List<CountedMinute> drained = new ArrayList<>();
		for (QueueMinutes minutes : this.queues.values()) {
			minutes.drainTo(drained, now);
		}
		return drained;
	}

	/** One queue's open minute, and the minutes that closed recently. */
	private static final class QueueMinutes {

		private final String queue;

		private final AtomicReference<MinuteCounts> current;

		private final ConcurrentLinkedQueue<MinuteCounts> closed = new ConcurrentLinkedQueue<>();

		QueueMinutes(String queue) {
			this.queue = queue;
			this.current = new AtomicReference<>(new MinuteCounts(Long.MIN_VALUE));
		}

		/** The counts of the minute; those of the open minute when the minute is older than it. */
		MinuteCounts at(long minute) {
			MinuteCounts counts = this.current.get();
			while (counts.minute < minute) {
				MinuteCounts next = new MinuteCounts(minute);
				if (this.current.compareAndSet(counts, next)) {
					this.closed.add(counts);
					return next;
				}
				counts = this.current.get();
			}
			return counts;
		}

		void drainTo(List<CountedMinute> drained, long now) {
			for (Iterator<MinuteCounts> it = this.closed.iterator(); it.hasNext();) {
				MinuteCounts counts = it.next();
				counts.drainTo(this.queue, drained);
				if (counts.minute < now - 1) {
					it.remove();
				}
			}
			this.current.get().drainTo(this.queue, drained);
		}

	}

	/** The counters of one queue's minute, updated by any worker, drained by the flusher. */
	private static final class MinuteCounts {

		final long minute;

		private final LongAdder completed = new LongAdder();

		private final LongAdder failed = new LongAdder();

		private final LongAdder retried = new LongAdder();

		private final LongAdder waits = new LongAdder();

		private final LongAdder waitNanosSum = new LongAdder();

		private final AtomicLong waitNanosMax = new AtomicLong();

		private final LongAdder runs = new LongAdder();

		private final LongAdder runNanosSum = new LongAdder();

		private final AtomicLong runNanosMax = new AtomicLong();

		MinuteCounts(long minute) {
			this.minute = minute;
		}

		void waited(long nanos) {
			this.waits.increment();
			this.waitNanosSum.add(nanos);
			raise(this.waitNanosMax, nanos);
		}

		void ran(JobOutcome outcome, long nanos) {
			switch (outcome) {
				case COMPLETED -> this.completed.increment();
				case FAILED -> this.failed.increment();
				case RETRIED -> this.retried.increment();
				default -> {
					// Released, snoozed and cancelled attempts count only in the run time.
				}
			}
			this.runs.increment();
			this.runNanosSum.add(nanos);
			raise(this.runNanosMax, nanos);
		}

		private static void raise(AtomicLong max, long value) {
			long seen = max.get();
			while (value > seen && !max.compareAndSet(seen, value)) {
				seen = max.get();
			}
		}

		void drainTo(String queue, List<CountedMinute> drained) {
			long runs = take(this.runs);
			long waits = take(this.waits);
			if (runs == 0 && waits == 0) {
				return;
			}
			drained.add(new CountedMinute(queue, this.minute, take(this.completed), take(this.failed),
					take(this.retried), waits, take(this.waitNanosSum), this.waitNanosMax.getAndSet(0), runs,
					take(this.runNanosSum), this.runNanosMax.getAndSet(0)));
		}

		/** Reads the adder and subtracts what it read, so that what is added meanwhile stays. */
		private static long take(LongAdder adder) {
			long value = adder.sum();
			if (value != 0) {
				adder.add(-value);
			}
			return value;
		}

	}

}
