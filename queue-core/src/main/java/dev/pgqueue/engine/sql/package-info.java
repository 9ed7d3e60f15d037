/**
 * Internal: every SQL statement pgqueue runs, in one style. {@link dev.pgqueue.engine.sql.JobStatements}
 * and {@link dev.pgqueue.engine.sql.MaintenanceStatements} hold the texts, named after what they do,
 * for the hot path and for the background services; the repositories run them.
 */
package dev.pgqueue.engine.sql;
