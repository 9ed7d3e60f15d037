package dev.pgqueue.engine.transactional;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** How a transactional queue's batch size follows its claims and the time its batches take. */
class AdaptiveBatchSizeTests {

	private static final long MICROS = 1_000L;

	@Test
	void doublesWhileClaimsComeBackFullUpToTheMost() {
		AdaptiveBatchSize size = new AdaptiveBatchSize(10, 500);
		int[] seen = new int[8];
		for (int i = 0; i < seen.length; i++) {
			seen[i] = size.next();
			size.claimed(seen[i], seen[i]);
			// No-op jobs: the batch's fixed price, about 3 ms, spread over its jobs.
			size.ran(seen[i], 3_000 * MICROS);
		}
		assertThat(seen).containsExactly(10, 20, 40, 80, 160, 320, 500, 500);
	}

	@Test
	void halvesAfterAClaimThatCameBackLessThanHalfFullDownToTheLeast() {
		AdaptiveBatchSize size = grown(new AdaptiveBatchSize(10, 500), 160);
		size.claimed(160, 70);
		assertThat(size.next()).isEqualTo(80);
		size.claimed(80, 50);
		assertThat(size.next()).as("more than half full: kept").isEqualTo(80);
		for (int i = 0; i < 10; i++) {
			size.claimed(size.next(), 0);
		}
		assertThat(size.next()).isEqualTo(10);
	}

	@Test
	void longJobsKeepBatchesWithinTheTargetAndNeverBelowTheLeast() {
		AdaptiveBatchSize size = new AdaptiveBatchSize(10, 500);
		// 1 ms jobs: about 200 fit into 200 ms.
		for (int i = 0; i < 20; i++) {
			int asked = size.next();
			size.claimed(asked, asked);
			size.ran(asked, asked * 1_000 * MICROS);
		}
		assertThat(size.next()).isBetween(150, 200);

		AdaptiveBatchSize slow = new AdaptiveBatchSize(10, 500);
		for (int i = 0; i < 20; i++) {
			int asked = slow.next();
			slow.claimed(asked, asked);
			slow.ran(asked, asked * 1_000_000 * MICROS);
		}
		assertThat(slow.next()).as("1 s jobs: the least, never fewer").isEqualTo(10);
	}

	@Test
	void aFixedSizeNeverMoves() {
		AdaptiveBatchSize size = new AdaptiveBatchSize(25, 25);
		size.claimed(25, 25);
		size.ran(25, 1_000 * MICROS);
		size.claimed(25, 0);
		assertThat(size.next()).isEqualTo(25);
	}

	private static AdaptiveBatchSize grown(AdaptiveBatchSize size, int to) {
		while (size.next() < to) {
			size.claimed(size.next(), size.next());
		}
		return size;
	}

}
