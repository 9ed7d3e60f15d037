package dev.pgqueue;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * What is known of a running job beyond its row: the progress its listener last reported
 * ({@link JobContext#progress}) and whether an operator asked to cancel it. Read through
 * {@link JobAdmin#progress}; gone once the job ends.
 *
 * @param percent 0 to 100, or {@code null} when the listener reported none
 * @param message the report's note, or {@code null}
 * @param reportedAt when the report was written, or {@code null}
 * @param cancelRequestedAt when an operator asked to cancel the job, or {@code null}
 */
public record JobProgress(@Nullable Integer percent, @Nullable String message, @Nullable Instant reportedAt,
		@Nullable Instant cancelRequestedAt) {
}
