/**
 * Internal: the background services on timers, each a
 * {@link dev.pgqueue.engine.service.PeriodicService}: the promoter makes due scheduled jobs available,
 * the rescuer returns jobs whose lease expired, the cleaner prunes finished jobs past their
 * retention, the stats reader reads what metrics and health show, among it what holds back
 * cleanup ({@link dev.pgqueue.engine.maintenance.TransactionHorizon}), and the polling heartbeat
 * records which queues this instance polls and reads which queues any instance polls
 * ({@link dev.pgqueue.engine.maintenance.PolledQueues}). May change in any release.
 */
@NullMarked
package dev.pgqueue.engine.maintenance;

import org.jspecify.annotations.NullMarked;
