package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Jittered waits: a poll interval spread by ±10 % so that instances started together do not poll in
 * lock-step. (Pauses after failures are {@link dev.pgqueue.engine.service.FailureStreak}'s.)
 */
final class Backoff {

	private Backoff() {
	}

	/** The interval spread by ±10 %, at least 1 ms. */
	static Duration jittered(Duration interval) {
		long millis = interval.toMillis();
		long spread = millis / 10;
		long offset = (spread > 0) ? ThreadLocalRandom.current().nextLong(-spread, spread + 1) : 0;
		return Duration.ofMillis(Math.max(1, millis + offset));
	}

}
