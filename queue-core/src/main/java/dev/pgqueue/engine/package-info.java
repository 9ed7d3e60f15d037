/**
 * Internal: the engine behind {@link dev.pgqueue.JobClient} and {@link dev.pgqueue.JobListener}. Not
 * an API: any type here may change in any release. Applications use the types of
 * {@code dev.pgqueue} and configure the engine through {@code pgqueue.*} properties.
 *
 * <p>{@link dev.pgqueue.engine.poll.JobPoller} is a lifecycle shell around one poll loop; it knows how to
 * claim only through a {@link dev.pgqueue.engine.poll.ClaimStrategy}, one per mode ({@code transactional},
 * {@code leased}). All SQL lives in {@code sql}. Settings types ({@link dev.pgqueue.engine.settings.QueueSettings}
 * and its siblings) hold every default and every validation rule.
 */
package dev.pgqueue.engine;
