/**
 * Internal: leased mode. Claims commit at once with a lease; jobs run outside any transaction;
 * the poller claims ahead of its free workers while jobs are short, workers claim for themselves
 * while there is a backlog, a lease keeper extends the leases of held jobs on its own timer, and a
 * completer writes outcomes in batches, each guarded by the attempt it ran.
 */
@NullMarked
package dev.pgqueue.engine.leased;

import org.jspecify.annotations.NullMarked;
