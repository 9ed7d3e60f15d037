/**
 * Internal: two-phase commit for transactional queues that opt in. A job runs alone in its
 * transaction; when its listener returns an {@link dev.pgqueue.ExternalEffect}, the transaction is
 * prepared, the effect runs, and the prepared transaction is committed (or rolled back when the
 * effect fails). The {@link dev.pgqueue.engine.twophase.InDoubtResolver} finishes the transactions
 * that dead workers left prepared, asking the application's {@link dev.pgqueue.InDoubtJobResolver}.
 */
@NullMarked
package dev.pgqueue.engine.twophase;

import org.jspecify.annotations.NullMarked;
