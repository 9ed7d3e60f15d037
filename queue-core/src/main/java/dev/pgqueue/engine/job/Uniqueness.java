package dev.pgqueue.engine.job;

import java.time.Instant;

import dev.pgqueue.OnConflict;
import org.jspecify.annotations.Nullable;

/**
 * The key that keeps a second job of the same kind out: among the unfinished jobs of the kind
 * ({@code periodSeconds} of zero), or within a period, finished jobs included.
 *
 * @param key the key, unique per kind
 * @param periodSeconds the length of the period the key is held for, in seconds; zero to hold it
 * while the job is unfinished
 * @param periodStart the start of the period, or {@code null} for the period of the database's
 * clock now (periods aligned on the Unix epoch)
 * @param onConflict what an enqueue does to the job that holds the key
 */
public record Uniqueness(String key, long periodSeconds, @Nullable Instant periodStart, OnConflict onConflict) {

	/** Unique while unfinished. */
	public static Uniqueness whileUnfinished(String key, OnConflict onConflict) {
		return new Uniqueness(key, 0, null, onConflict);
	}

	/** Whether the key is held for a period rather than while the job is unfinished. */
	public boolean periodic() {
		return this.periodSeconds > 0;
	}

}
