package dev.pgqueue.metrics;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The transaction (or prepared transaction, or replication slot) in the jobs table's database that
 * holds back cleanup the longest: nothing deleted or updated after its snapshot was taken can be
 * removed while it lives, in pgqueue's table as in every other.
 *
 * @param age how long it has held its snapshot; zero when nothing holds one
 * @param ageEstimated whether {@code age} is a lower bound estimated from transaction ids, because
 * this role may not see when that session's transaction started (another user's session, without
 * {@code pg_read_all_stats})
 * @param transactionsSince transaction ids assigned since its snapshot: the work it holds back
 * @param pid its backend's process id, or {@code null} (a prepared transaction, a replication slot)
 * @param holder its application name, or which prepared transaction or replication slot it is
 * @param state its session's state ({@code idle in transaction}, {@code active}…), or {@code null}
 * when this role may not see it
 */
public record OldestTransaction(Duration age, boolean ageEstimated, long transactionsSince, @Nullable Integer pid,
		@Nullable String holder, @Nullable String state) {

	/** Nothing holds a snapshot. */
	public static final OldestTransaction NONE = new OldestTransaction(Duration.ZERO, false, 0, null, null, null);

	/** A line for logs and health details: who, how long, and in what state. */
	public String describe() {
		StringBuilder text = new StringBuilder();
		text.append((this.pid != null) ? "pid " + this.pid + ", application '" + this.holder + "'" : this.holder);
		if (this.state != null) {
			text.append(", ").append(this.state);
		}
		text.append(", for ").append(this.ageEstimated ? "at least " : "").append(this.age.toSeconds()).append(" s and ")
			.append(this.transactionsSince).append(" transactions");
		return text.toString();
	}

}
