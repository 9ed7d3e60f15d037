/**
 * Internal: what the polling of every mode shares: the {@link dev.pgqueue.engine.poll.JobPoller}, a
 * lifecycle around one queue's poll loop, the {@link dev.pgqueue.engine.poll.ClaimStrategy} each mode
 * implements, the worker slots, where claims start reading ({@link dev.pgqueue.engine.poll.ClaimScope},
 * {@link dev.pgqueue.engine.poll.ClaimFloor}), what claims achieve
 * ({@link dev.pgqueue.engine.poll.QueueSignals}), and which queues are paused or have new jobs. The
 * claim statements and the limits they meet are in {@code engine.limits}. May change in any release.
 */
@NullMarked
package dev.pgqueue.engine.poll;

import org.jspecify.annotations.NullMarked;
