package dev.pgqueue.engine.leased;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The claim-ahead target follows the jobs: what the workers start during two claim round trips plus
 * 2 ms, never more than the batch size.
 */
class ClaimAheadEstimateTests {

	private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

	@Test
	void startsNothingAheadBeforeAnyJobHasStarted() {
		ClaimAheadEstimate estimate = new ClaimAheadEstimate(100);
		estimate.claimed(1 * MS, MS / 2);
		estimate.claimed(2 * MS, MS / 2);
		assertThat(estimate.target()).isZero();
	}

	@Test
	void holdsWhatWorkersStartDuringTwoRoundTripsAndTheSlack() {
		ClaimAheadEstimate estimate = new ClaimAheadEstimate(100);
		// Claims every 10 ms, each taking 1 ms, while workers start 2 jobs per millisecond.
		for (int claim = 1; claim <= 20; claim++) {
			for (int i = 0; i < 20; i++) {
				estimate.jobStarted();
			}
			estimate.claimed(claim * 10 * MS, MS);
		}
		// 2 jobs/ms × (2 × 1 ms + 2 ms) = 8.
		assertThat(estimate.target()).isEqualTo(8);
	}

	@Test
	void neverExceedsTheBatchSize() {
		ClaimAheadEstimate estimate = new ClaimAheadEstimate(10);
		for (int claim = 1; claim <= 20; claim++) {
			for (int i = 0; i < 1_000; i++) {
				estimate.jobStarted();
			}
			estimate.claimed(claim * MS, MS / 2);
		}
		assertThat(estimate.target()).isEqualTo(10);
	}

	@Test
	void dropsToNothingWhenJobsTakeSeconds() {
		ClaimAheadEstimate estimate = new ClaimAheadEstimate(100);
		for (int claim = 1; claim <= 10; claim++) {
			for (int i = 0; i < 50; i++) {
				estimate.jobStarted();
			}
			estimate.claimed(claim * 10 * MS, MS);
		}
		assertThat(estimate.target()).isPositive();
		// Then one start per second: the smoothed rate halves at every claim.
		for (int claim = 1; claim <= 10; claim++) {
			estimate.jobStarted();
			estimate.claimed(100 * MS + claim * 1_000 * MS, MS);
		}
		assertThat(estimate.target()).isZero();
	}

}
