/**
 * Internal: where a key's jobs live when queues are spread over several PostgreSQL servers (shards).
 * See {@link dev.pgqueue.engine.shards.SlotMap}. May change in any release.
 */
@NullMarked
package dev.pgqueue.engine.shards;

import org.jspecify.annotations.NullMarked;
