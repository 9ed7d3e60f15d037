/**
 * Internal: the background services on timers, each a
 * {@link dev.pgqueue.engine.service.PeriodicService}: the promoter makes due scheduled jobs available,
 * the rescuer returns jobs whose lease expired, the cleaner prunes finished jobs past their
 * retention, and the stats reader reads what metrics and health show, among it what holds back
 * cleanup ({@link dev.pgqueue.engine.maintenance.TransactionHorizon}). May change in any release.
 */
@NullMarked
package dev.pgqueue.engine.maintenance;

import org.jspecify.annotations.NullMarked;
