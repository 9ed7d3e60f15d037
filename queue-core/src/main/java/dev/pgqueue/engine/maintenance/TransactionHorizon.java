package dev.pgqueue.engine.maintenance;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.function.Supplier;

import dev.pgqueue.engine.sql.MaintenanceRepository.HorizonReading;
import dev.pgqueue.metrics.OldestTransaction;
import dev.pgqueue.engine.poll.ClaimFloor;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches what holds back cleanup in the jobs table's database: the oldest snapshot a session
 * holds, a prepared transaction, a replication slot. While one lives, the rows pgqueue claimed or
 * finished since it began cannot be removed by vacuum, and the table and its indexes grow; claims
 * are kept from slowing down by {@link ClaimFloor}, but the holder is the operator's to end.
 *
 * <p>PostgreSQL shows when another user's transaction started only to roles with
 * {@code pg_read_all_stats}; the snapshot's transaction id is visible to all. So the watcher keeps
 * the next transaction id of each reading with its time: the first reading whose next id had passed
 * the holder's snapshot tells, to within one stats interval, how long ago the snapshot was taken
 * (at least).
 *
 * <p>Warns, at most every {@link #WARNING_PERIOD}, when the holder has lived past
 * {@link #WARN_AFTER}, naming it and what to do.
 */
public final class TransactionHorizon {

	private static final Logger logger = LoggerFactory.getLogger(TransactionHorizon.class);

	/** Age at which a holder is logged as a warning. */
	public static final Duration WARN_AFTER = Duration.ofMinutes(1);

	static final Duration WARNING_PERIOD = Duration.ofMinutes(5);

	/** Readings kept to date a snapshot by its transaction id: a day at the default stats interval. */
	private static final int MAX_SAMPLES = 6_000;

	private final Supplier<Instant> clock;

	private final Deque<Sample> samples = new ArrayDeque<>();

	private volatile OldestTransaction last = OldestTransaction.NONE;

	private @Nullable Instant lastWarning;

	public TransactionHorizon() {
		this(Instant::now);
	}

	TransactionHorizon(Supplier<Instant> clock) {
		this.clock = clock;
	}

	/** Takes a fresh reading; returns what it says, and warns if the holder is old. */
	public synchronized OldestTransaction read(HorizonReading reading) {
		Instant now = this.clock.get();
		this.samples.addLast(new Sample(reading.nextXid(), now));
		if (this.samples.size() > MAX_SAMPLES) {
			this.samples.removeFirst();
		}
		OldestTransaction oldest = oldest(reading, now);
		this.last = oldest;
		if (oldest.age().compareTo(WARN_AFTER) >= 0
				&& (this.lastWarning == null || Duration.between(this.lastWarning, now).compareTo(WARNING_PERIOD) >= 0)) {
			this.lastWarning = now;
			logger.warn("A transaction has held its snapshot in this database ({}): nothing deleted or updated since "
					+ "then, in pgqueue's table or any other, can be vacuumed, so tables and indexes grow. pgqueue's "
					+ "claims start past the rows they already took and keep their pace meanwhile. End that transaction "
					+ "(pg_terminate_backend, or commit it), and bound such sessions with "
					+ "idle_in_transaction_session_timeout; see the README's 'Long transactions'.", oldest.describe());
		}
		return oldest;
	}

	/** The last reading's result. */
	public OldestTransaction last() {
		return this.last;
	}

	private OldestTransaction oldest(HorizonReading reading, Instant now) {
		if (!reading.held()) {
			return OldestTransaction.NONE;
		}
		if (reading.age() != null) {
			return new OldestTransaction(reading.age(), false, reading.transactionsSince(), reading.pid(),
					reading.holder(), reading.state());
		}
		return new OldestTransaction(estimatedAge(reading, now), true, reading.transactionsSince(), reading.pid(),
				reading.holder(), reading.state());
	}

	/**
	 * At least how long ago the holder's snapshot was taken: since the first reading whose next
	 * transaction id was already past the snapshot's. Zero when no transaction id was assigned since
	 * (the snapshot then holds nothing back).
	 */
	private Duration estimatedAge(HorizonReading reading, Instant now) {
		long snapshotXid = reading.nextXid() - reading.transactionsSince();
		Iterator<Sample> oldestFirst = this.samples.iterator();
		while (oldestFirst.hasNext()) {
			Sample sample = oldestFirst.next();
			if (sample.nextXid() > snapshotXid) {
				return Duration.between(sample.at(), now);
			}
		}
		return Duration.ZERO;
	}

	private record Sample(long nextXid, Instant at) {
	}

}
