/**
 * Internal: runs one attempt of a job through its handler, under its time limit and its observation,
 * and decides what becomes of it (completed, retried after a backoff, or failed); the modes record
 * the outcome. May change in any release.
 */
@NullMarked
package dev.pgqueue.engine.run;

import org.jspecify.annotations.NullMarked;
