package dev.pgqueue.metrics;

import java.time.Duration;

/**
 * This schema's prepared transactions, as the in-doubt resolver last found them once it had
 * resolved what it could: jobs of queues with two-phase commit between prepare and commit, and
 * those left in doubt by workers that died there. Each holds its job's row lock and, like any open
 * transaction, holds back vacuum in the whole database while it lives.
 *
 * @param count prepared transactions of this schema
 * @param oldestAge how long the oldest of them has been prepared; zero when there is none
 * @param inDoubt those prepared for longer than {@code pgqueue.two-phase-commit.in-doubt-after}
 * that are still there: their workers are alive but slow, or this application could not decide them
 */
public record PreparedTransactions(long count, Duration oldestAge, long inDoubt) {

	/** None, or not read yet. */
	public static final PreparedTransactions NONE = new PreparedTransactions(0, Duration.ZERO, 0);

}
