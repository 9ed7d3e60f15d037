package dev.pgqueue.engine.service;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.pgqueue.engine.service.FailureStreak.Pause;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessResourceFailureException;

import static org.assertj.core.api.Assertions.assertThat;

/** The rules of a failure streak, on a clock the test moves. */
class FailureStreakTests {

	private final AtomicLong clock = new AtomicLong(1_000_000_000L);

	private final FailureStreak streak = new FailureStreak(PooledConnections.NONE, this.clock::get);

	private static final Exception LOST = new DataAccessResourceFailureException("terminated",
			new SQLException("FATAL: terminating connection due to administrator command", "57P01"));

	private static final Exception MISSING_TABLE = new SQLException("relation does not exist", "42P01");

	@Test
	void attemptsThatWereOpenWhenTheFirstFailureCountedBelongToIt() {
		long opened = this.clock.get();
		advance(100);
		Pause first = this.streak.failed(LOST, opened);
		Pause second = this.streak.failed(LOST, opened);
		Pause third = this.streak.failed(MISSING_TABLE, opened + 50_000_000L);

		assertThat(first.counted()).isTrue();
		assertThat(first.inARow()).isEqualTo(1);
		assertThat(first.delay()).as("a lost connection is tried again at once").isZero();
		assertThat(second.counted()).isFalse();
		assertThat(third.counted()).as("started before the counted failure").isFalse();
		assertThat(this.streak.count()).isEqualTo(1);
	}

	@Test
	void anAttemptOpenBeforeTheCountedFailureBelongsToItEvenWhenItReportsAfterAFreshAttemptSucceeded() {
		long opened = this.clock.get();
		advance(100);
		assertThat(this.streak.failed(LOST, opened).counted()).isTrue();
		advance(5);
		assertThat(this.streak.succeeded()).as("a fresh batch worked").isNotNull();
		advance(200);
		// A batch of the same sweep whose thread was slow to see its connection gone.
		Pause late = this.streak.failed(LOST, opened);

		assertThat(late.counted()).as("one sweep, one failure").isFalse();
		assertThat(late.delay()).isZero();
		assertThat(this.streak.count()).isZero();
		assertThat(this.streak.succeeded()).as("no streak was started").isNull();
		advance(1);
		assertThat(this.streak.failed(LOST, this.clock.get() - 1).counted()).as("an attempt started since counts")
			.isTrue();
	}

	@Test
	void aFailureBeforeAnyHasCountedCountsWhateverTheClockReads() {
		FailureStreak negative = new FailureStreak(PooledConnections.NONE, () -> -5_000_000_000L);
		assertThat(negative.failed(LOST, -6_000_000_000L).counted()).isTrue();
	}

	@Test
	void freshAttemptsThatFailAgainSpaceOutToASecondForLostConnections() {
		assertThat(this.streak.failed(LOST, this.clock.get()).delay()).isZero();
		long[] expected = { 100, 200, 400, 800, 1000, 1000 };
		for (long millis : expected) {
			advance(1);
			Pause pause = this.streak.failed(LOST, this.clock.get());
			assertThat(pause.counted()).isTrue();
			assertThat(pause.delay().toMillis()).isBetween(millis * 9 / 10, millis * 11 / 10);
		}
		assertThat(this.streak.count()).isEqualTo(expected.length + 1);
	}

	@Test
	void otherFailuresSpaceOutFromAQuarterSecondToThirtySeconds() {
		long[] expected = { 250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000 };
		for (long millis : expected) {
			advance(1);
			Pause pause = this.streak.failed(MISSING_TABLE, this.clock.get());
			assertThat(pause.cause()).isEqualTo(FailureCause.ERROR);
			assertThat(pause.delay().toMillis()).isBetween(millis * 9 / 10, millis * 11 / 10);
		}
	}

	@Test
	void aSuccessEndsTheStreakAndSaysHowLongItLasted() {
		assertThat(this.streak.succeeded()).as("no streak to end").isNull();
		this.streak.failed(LOST, this.clock.get());
		advance(1);
		this.streak.failed(LOST, this.clock.get());
		advance(700);

		FailureStreak.Ended ended = this.streak.succeeded();

		assertThat(ended).isNotNull();
		assertThat(ended.failures()).isEqualTo(2);
		assertThat(ended.lasted()).isEqualTo(Duration.ofMillis(701));
		assertThat(this.streak.count()).isZero();
		advance(1);
		assertThat(this.streak.failed(LOST, this.clock.get()).inARow()).as("a new streak").isEqualTo(1);
	}

	private void advance(long millis) {
		this.clock.addAndGet(millis * 1_000_000L);
	}

}
