/**
 * Internal: concurrency limits across instances, per concurrency key, per kind and per queue, and the
 * order of a key's jobs. See {@link dev.pgqueue.engine.limits.LimitedClaims}. May change in any
 * release.
 */
@NullMarked
package dev.pgqueue.engine.limits;

import org.jspecify.annotations.NullMarked;
