/**
 * Internal: the engine's vocabulary of jobs: a row about to be inserted, a row claimed, where a
 * claim starts reading, and the handlers that run each kind (to which {@code @JobListener} methods
 * are adapted), by kind. May change in any release.
 */
@NullMarked
package dev.pgqueue.engine.job;

import org.jspecify.annotations.NullMarked;
