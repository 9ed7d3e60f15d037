/**
 * Internal: what a claim may take. The claim statements of one queue
 * ({@link dev.pgqueue.engine.limits.JobClaims}): plain, or under concurrency limits across
 * instances, per concurrency key, per kind and per queue, with the order of a key's jobs
 * ({@link dev.pgqueue.engine.limits.LimitedClaims}), or fair between keys
 * ({@link dev.pgqueue.engine.limits.FairClaims}); and rate limits, per queue, per kind and per key,
 * which each claim reserves starts of before it claims ({@link dev.pgqueue.engine.limits.RateGate}).
 * May change in any release.
 */
@NullMarked
package dev.pgqueue.engine.limits;

import org.jspecify.annotations.NullMarked;
