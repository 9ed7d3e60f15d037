/**
 * Bucket assignment, for queues that outgrow shared claims: every job has a bucket, a coordinator
 * in PostgreSQL spreads each queue's buckets over the instances that poll it, and each instance
 * claims only from its own. Internal: may change between versions.
 */
@NullMarked
package dev.pgqueue.engine.buckets;

import org.jspecify.annotations.NullMarked;
