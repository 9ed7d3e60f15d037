/**
 * The engine's read model: one snapshot of what it knows in memory (per database: each queue's depth
 * and age, its poller, limits and their use, buckets and claim signals, the database's health readings,
 * the services and their state; per shard, whether it answers), taken by {@code QueueEngine.status()}.
 * Health, info, the endpoint and the dashboard read it, and nothing else of the engine's parts.
 */
@NullMarked
package dev.pgqueue.engine.status;

import org.jspecify.annotations.NullMarked;
