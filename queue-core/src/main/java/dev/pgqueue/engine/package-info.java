/**
 * Internal: the engine behind {@link dev.pgqueue.JobClient} and {@link dev.pgqueue.JobListener}. Not
 * an API: any type here may change in any release. Applications use the types of
 * {@code dev.pgqueue} and configure the engine through {@code pgqueue.*} properties.
 *
 * <p>{@link dev.pgqueue.engine.poll.JobPoller} is a lifecycle shell around one poll loop; it knows how to
 * claim only through a {@link dev.pgqueue.engine.poll.ClaimStrategy}, one per mode ({@code transactional},
 * {@code leased}). All SQL lives in {@code sql}. Settings types ({@link dev.pgqueue.engine.settings.QueueSettings}
 * and its siblings) hold every default and every validation rule.
 *
 * <p>An engine type is public only so that the engine's other packages (or the starter) can use it;
 * the packages use each other in one direction, the layers {@code ArchitectureTests} checks: settings
 * and the job vocabulary, then sql, control (cancellation and progress) and limits (concurrency
 * and rate limits, fairness), run, poll, the claim strategies, maintenance, and this package.
 * A type that no other package uses is not public, and no engine package is in the users' Javadoc. pgqueue has no JPMS module descriptor to hide them:
 * Spring Boot applications run on the class path, where a descriptor is ignored, and pgqueue's
 * dependencies (Spring, Jackson 3, Flyway) are automatic modules, so a descriptor would cost every
 * build a module path and hide nothing from the applications.
 */
@NullMarked
package dev.pgqueue.engine;

import org.jspecify.annotations.NullMarked;
