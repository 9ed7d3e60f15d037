/**
 * Recurring jobs: when each schedule's ticks fall ({@link dev.pgqueue.engine.schedules.CronTicks}),
 * which of them fire ({@link dev.pgqueue.engine.schedules.TickPlan}), the pass that fires them
 * ({@link dev.pgqueue.engine.schedules.ScheduleTicker}) and the {@link dev.pgqueue.JobSchedules} API
 * ({@link dev.pgqueue.engine.schedules.JdbcJobSchedules}).
 */
@NullMarked
package dev.pgqueue.engine.schedules;

import org.jspecify.annotations.NullMarked;
