/**
 * Traces and logs of pgqueue: the Micrometer observations around an enqueue and around each
 * attempt of a job ({@link dev.pgqueue.observation.QueueObservation}), their contexts and
 * conventions, which carry the enqueue's trace context to the job's processing through the jobs
 * table, and the MDC entries of a running job ({@link dev.pgqueue.observation.JobLogContext}).
 * Applications may replace a convention; the rest is used by the engine.
 */
@NullMarked
package dev.pgqueue.observation;

import org.jspecify.annotations.NullMarked;
