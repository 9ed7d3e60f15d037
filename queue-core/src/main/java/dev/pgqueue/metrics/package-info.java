/**
 * What the engine reports: {@link dev.pgqueue.metrics.QueueMetrics}, which an application may
 * implement to send the figures elsewhere, and its Micrometer implementation.
 */
@NullMarked
package dev.pgqueue.metrics;

import org.jspecify.annotations.NullMarked;
