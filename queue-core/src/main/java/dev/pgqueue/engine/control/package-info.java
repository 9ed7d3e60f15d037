/**
 * Internal: cancellation and progress of the attempts running in this application. The runner
 * registers each attempt in {@link dev.pgqueue.engine.control.RunningJobs}, which a cancel request
 * stops (announced on the control channel, or found by the
 * {@link dev.pgqueue.engine.control.RunningJobsWatch}, which also writes the progress listeners
 * report); the control rows themselves are read and written by
 * {@link dev.pgqueue.engine.sql.ControlRepository}. May change in any release.
 */
@NullMarked
package dev.pgqueue.engine.control;

import org.jspecify.annotations.NullMarked;
