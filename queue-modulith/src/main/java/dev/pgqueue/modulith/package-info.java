/**
 * pgqueue as a target of Spring Modulith's event externalization: each event that the
 * application's {@code EventExternalizationConfiguration} selects (by default, those annotated
 * {@code @Externalized}) becomes one pgqueue job, enqueued in the transaction that publishes the
 * event. See {@link dev.pgqueue.modulith.JobEventExternalizer} for how an event becomes a job.
 */
@NullMarked
package dev.pgqueue.modulith;

import org.jspecify.annotations.NullMarked;
