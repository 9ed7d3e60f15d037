/**
 * pgqueue's API, what applications use: {@link dev.pgqueue.JobClient} to enqueue jobs,
 * {@link dev.pgqueue.JobListener @JobListener} to handle them, {@link dev.pgqueue.JobAdmin} to look at
 * them and act on them, and the values, settings and exceptions these take and give. It depends on no
 * other package of pgqueue. Where a value may be absent it is marked {@code @Nullable}; everything
 * else is never {@code null}.
 */
@NullMarked
package dev.pgqueue;

import org.jspecify.annotations.NullMarked;
