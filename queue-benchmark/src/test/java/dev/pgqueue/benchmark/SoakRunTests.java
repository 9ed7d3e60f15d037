package dev.pgqueue.benchmark;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The soak's phase figures: what the hold is compared with on a shared machine. No database: the
 * run is fed pickups directly.
 */
class SoakRunTests {

	private static final Duration WINDOW = Duration.ofSeconds(1);

	/** Two windows before the snapshot, three held, one after. */
	private static final Profile.Soak SOAK = new Profile.Soak(100, Duration.ofSeconds(2), Duration.ofSeconds(3),
			Duration.ofSeconds(1), WINDOW, List.of(1), 0);

	private static final SoakRun.Sample SAMPLE = new SoakRun.Sample(0, 0, 0, 0, 0, 0, 0);

	@Test
	void eachPhaseCountsItsSlowWindowsAndPoolsItsPickupsLeavingOutTheFirstWindowWhichWarmsTheJit() {
		SoakRun run = new SoakRun(SOAK.rate(), 6, SOAK);
		// Window 0 (warm-up): 100 pickups of 500 ms, which the clean phase must not count.
		pickups(run, 0, 100, 500);
		// Window 1 (before): 100 pickups of 2 ms.
		pickups(run, 1, 100, 2);
		// Windows 2-4 (hold): one slow window, whose 3 slowest pickups take 300 ms.
		pickups(run, 2, 100, 10);
		pickups(run, 3, 97, 10);
		pickups(run, 3, 3, 300);
		pickups(run, 4, 100, 20);
		// Window 5 (after).
		pickups(run, 5, 100, 3);
		for (int w = 0; w < 6; w++) {
			run.close(w, SAMPLE);
		}

		SoakRun.PhaseFigures before = run.phaseFigures("before");
		assertThat(before.windows()).isEqualTo(1);
		assertThat(before.slowWindows()).isZero();
		assertThat(before.p99()).isCloseTo(2, within(5.0));
		assertThat(before.highestWindowP99()).isLessThan(100);

		SoakRun.PhaseFigures hold = run.phaseFigures("hold");
		assertThat(hold.windows()).isEqualTo(3);
		assertThat(hold.slowWindows()).isEqualTo(1);
		assertThat(hold.highestWindowP99()).isGreaterThanOrEqualTo(300);
		// 3 of 300 pickups took 300 ms: the 99th percentile of the phase is one of the 20 ms ones.
		assertThat(hold.p99()).isCloseTo(20, within(5.0));
		assertThat(hold.medianWindowP99()).isCloseTo(20, within(5.0));
	}

	@Test
	void aPhaseOfOneWindowKeepsItEvenIfItIsTheFirst() {
		Profile.Soak soak = new Profile.Soak(100, Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1),
				WINDOW, List.of(1), 0);
		SoakRun run = new SoakRun(soak.rate(), 3, soak);
		pickups(run, 0, 50, 4);
		for (int w = 0; w < 3; w++) {
			run.close(w, SAMPLE);
		}

		SoakRun.PhaseFigures before = run.phaseFigures("before");
		assertThat(before.windows()).isEqualTo(1);
		assertThat(before.p99()).isCloseTo(4, within(5.0));
	}

	/** {@code count} jobs started in window {@code window}, each {@code millis} after it was enqueued. */
	private static void pickups(SoakRun run, int window, int count, long millis) {
		long windowNanos = WINDOW.toNanos();
		// The run places a start by the time since its start: put it in the middle of the window.
		long start = System.nanoTime() - window * windowNanos - windowNanos / 2;
		for (int i = 0; i < count; i++) {
			run.started(start, windowNanos, Instant.now().minusMillis(millis));
		}
	}

}
