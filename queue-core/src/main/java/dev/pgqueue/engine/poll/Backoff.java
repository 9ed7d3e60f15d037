package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Jittered waits: a poll interval spread by ±10 % so that instances started together do not poll in
 * lock-step, and the pause after failures in a row, doubling from 250 ms to at most 30 s.
 */
public final class Backoff {

	private static final Duration MAX_ERROR_BACKOFF = Duration.ofSeconds(30);

	private Backoff() {
	}

	/** The interval spread by ±10 %, at least 1 ms. */
	public static Duration jittered(Duration interval) {
		long millis = interval.toMillis();
		long spread = millis / 10;
		long offset = (spread > 0) ? ThreadLocalRandom.current().nextLong(-spread, spread + 1) : 0;
		return Duration.ofMillis(Math.max(1, millis + offset));
	}

	/** The pause after this many failures in a row. */
	public static Duration afterFailures(int failures) {
		long millis = Math.min(MAX_ERROR_BACKOFF.toMillis(), 250L << Math.min(failures - 1, 10));
		return jittered(Duration.ofMillis(millis));
	}

}
