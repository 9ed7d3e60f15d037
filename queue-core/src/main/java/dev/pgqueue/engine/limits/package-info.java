/**
 * Concurrency limits across instances: per concurrency key, per kind and per queue, and the order
 * of a key's jobs. See {@link dev.pgqueue.engine.limits.LimitedClaims}.
 */
package dev.pgqueue.engine.limits;
