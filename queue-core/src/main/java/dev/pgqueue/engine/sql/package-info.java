/**
 * Internal: every SQL statement the engine runs, in one place and one style.
 *
 * <p>The rule: SQL text is written only in the {@code *Statements} classes.
 * <ul>
 * <li>Every statement is here. Code elsewhere in the engine calls a repository method named after
 * what it does, and never touches a {@code JdbcTemplate}, a {@code ConnectionCallback} or a JDBC
 * {@code Statement} (enforced by {@code SqlStaysInTheSqlPackageTests}). Only
 * {@code dev.pgqueue.schema}, below the engine, runs SQL of its own: the migrations, and the check
 * that the jobs table exists.</li>
 * <li>Each statement is named after what it does: a field of a {@code *Statements} class (a method
 * for one that takes no bind parameters and is written for one value, or for a part that several
 * statements share, such as {@code JobStatements.leasing}, the one lease of every leased claim),
 * written as a text block (a string for a short one-liner), with the schema-qualified, quoted table
 * names filled in by the class's constructor. A repository holds no SQL text and assembles none: it
 * binds parameters and reads rows.</li>
 * <li>Each statement's Javadoc lists its parameters in order, and what it returns. Queue and kind
 * names are always bind parameters; only validated schema names (and, where a statement can take no
 * parameter, a quoted identifier or an escaped literal) are written into the text.</li>
 * <li>Each {@code *Statements} class has one repository that runs it, and nothing else runs it
 * (but for the benchmark's raw JDBC baseline, which runs {@link dev.pgqueue.engine.sql.JobStatements}
 * to measure the same texts). Statements of one repository may reuse parts of
 * {@code JobStatements} (the claimed columns, the lease), so that a claim reads and leases its jobs
 * the same way wherever it is written.</li>
 * </ul>
 *
 * <p>The statements are kept apart by what runs them and how often, one repository each, gathered
 * for one engine by {@link dev.pgqueue.engine.sql.Repositories}:
 * <ul>
 * <li>the hot path, enqueue, claim, outcome and lease: {@link dev.pgqueue.engine.sql.JobStatements},
 * run by {@link dev.pgqueue.engine.sql.JobRepository};</li>
 * <li>claims under concurrency limits and fairness: {@code LimitStatements}, run by
 * {@link dev.pgqueue.engine.sql.LimitRepository};</li>
 * <li>the windows of rate limits: {@code RateStatements}, run by
 * {@link dev.pgqueue.engine.sql.RateRepository}, each in a short transaction of its own;</li>
 * <li>the control rows of running jobs, cancel requests and progress: {@code ControlStatements},
 * run by {@link dev.pgqueue.engine.sql.ControlRepository};</li>
 * <li>enqueues of jobs with unique keys: {@code UniqueStatements}, run by
 * {@link dev.pgqueue.engine.sql.UniqueJobRepository} (with its helpers {@code UniqueInserts} and
 * {@code PlainUniqueInsert});</li>
 * <li>recurring jobs: {@code ScheduleStatements}, run by
 * {@link dev.pgqueue.engine.sql.ScheduleRepository};</li>
 * <li>maintenance, the background services on timers (promoter, rescuer, cleaner, stats):
 * {@link dev.pgqueue.engine.sql.MaintenanceStatements}, run by
 * {@link dev.pgqueue.engine.sql.MaintenanceRepository};</li>
 * <li>the queues' per-minute history, flushed, pruned and read: {@code HistoryStatements}, run by
 * {@link dev.pgqueue.engine.sql.HistoryRepository};</li>
 * <li>the operators' statements and the pause table: {@link dev.pgqueue.engine.sql.AdminStatements},
 * run by {@link dev.pgqueue.engine.sql.AdminRepository};</li>
 * <li>the bucket coordinator: {@code CoordinationStatements}, run by
 * {@link dev.pgqueue.engine.sql.CoordinationRepository};</li>
 * <li>two-phase commit and the in-doubt resolver: {@code PreparedTransactionStatements}, run by
 * {@link dev.pgqueue.engine.sql.PreparedTransactionRepository};</li>
 * <li>the notification listener: {@code NotificationStatements}, run by
 * {@link dev.pgqueue.engine.sql.NotificationRepository};</li>
 * <li>the polling heartbeat, which queues instances poll and which kinds they handle:
 * {@code PollingStatements}, run by {@link dev.pgqueue.engine.sql.PollingRepository}.</li>
 * </ul>
 *
 * <p>Beside them, {@code NewJobColumns} and {@code TraceContextColumn} turn new jobs into the
 * values the inserts bind; they hold no SQL.
 */
@NullMarked
package dev.pgqueue.engine.sql;

import org.jspecify.annotations.NullMarked;
