/**
 * Internal: how the engine's long-running parts start, stop and name their threads, and how long
 * they wait after a failure ({@link dev.pgqueue.engine.service.FailureStreak}). Every part that
 * makes a thread (poller, background service, listener, coordinator) is an
 * {@link dev.pgqueue.engine.service.EngineService}, and every thread the engine makes comes from
 * {@link dev.pgqueue.engine.service.EngineThreads}, named
 * {@code pgqueue-<queue>-<role>} (or {@code pgqueue-<role>} for what serves every queue), so that a
 * thread dump reads like the list of services in the internals documentation.
 */
@NullMarked
package dev.pgqueue.engine.service;

import org.jspecify.annotations.NullMarked;
