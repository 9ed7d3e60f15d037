/**
 * Internal: finds {@link dev.pgqueue.JobListener @JobListener} methods and adapts them to the engine's
 * handlers (payload mapping with Jackson, argument resolution, exception unwrapping).
 */
@NullMarked
package dev.pgqueue.listener;

import org.jspecify.annotations.NullMarked;
