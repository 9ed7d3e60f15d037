package dev.pgqueue.engine.schedules;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import dev.pgqueue.MissedTicks;
import org.junit.jupiter.api.Test;
import org.springframework.scheduling.support.CronExpression;

import static org.assertj.core.api.Assertions.assertThat;

/** Which ticks a pass fires, on a turned clock: an hourly schedule whose instances were down. */
class TickPlanTests {

	private static final CronTicks HOURLY = new CronTicks(CronExpression.parse("0 0 * * * *"), ZoneOffset.UTC);

	private static final Duration GRACE = Duration.ofMinutes(1);

	private static final Instant NINE = Instant.parse("2026-11-26T09:00:00Z");

	@Test
	void aTickDueWithinTheGraceFiresUnderEveryPolicy() {
		Instant now = NINE.plusSeconds(20);
		for (MissedTicks policy : MissedTicks.values()) {
			TickPlan plan = TickPlan.of(HOURLY, NINE, now, policy, GRACE, 100);

			assertThat(plan.fired()).as(policy.name()).containsExactly(NINE);
			assertThat(plan.missed()).isZero();
			assertThat(plan.nextTick()).isEqualTo(NINE.plusSeconds(3600));
			assertThat(plan.more()).isFalse();
		}
	}

	@Test
	void nothingFiresBeforeTheNextTick() {
		TickPlan plan = TickPlan.of(HOURLY, NINE, NINE.minusSeconds(1), MissedTicks.ALL, GRACE, 100);

		assertThat(plan.fired()).isEmpty();
		assertThat(plan.nextTick()).isEqualTo(NINE);
	}

	@Test
	void latestFiresTheNewestMissedTickOnceAndSkipsTheOthers() {
		// Down from 09:00 to 12:10: the ticks of 9, 10, 11 and 12 o'clock are missed.
		TickPlan plan = TickPlan.of(HOURLY, NINE, NINE.plusSeconds(3 * 3600 + 600), MissedTicks.LATEST, GRACE, 100);

		assertThat(plan.fired()).containsExactly(NINE.plusSeconds(3 * 3600));
		assertThat(plan.missed()).isEqualTo(3);
		assertThat(plan.nextTick()).isEqualTo(NINE.plusSeconds(4 * 3600));
	}

	@Test
	void allFiresEveryMissedTickInOrder() {
		TickPlan plan = TickPlan.of(HOURLY, NINE, NINE.plusSeconds(3 * 3600 + 600), MissedTicks.ALL, GRACE, 100);

		assertThat(plan.fired()).containsExactly(NINE, NINE.plusSeconds(3600), NINE.plusSeconds(7200),
				NINE.plusSeconds(10800));
		assertThat(plan.missed()).isZero();
		assertThat(plan.more()).isFalse();
	}

	@Test
	void allFiresAtMostTheBoundInOnePassAndSaysMoreAreDue() {
		TickPlan plan = TickPlan.of(HOURLY, NINE, NINE.plusSeconds(3 * 3600 + 600), MissedTicks.ALL, GRACE, 2);

		assertThat(plan.fired()).containsExactly(NINE, NINE.plusSeconds(3600));
		assertThat(plan.nextTick()).isEqualTo(NINE.plusSeconds(7200));
		assertThat(plan.more()).isTrue();
	}

	@Test
	void noneSkipsEveryMissedTick() {
		TickPlan plan = TickPlan.of(HOURLY, NINE, NINE.plusSeconds(3 * 3600 + 600), MissedTicks.NONE, GRACE, 100);

		assertThat(plan.fired()).isEmpty();
		assertThat(plan.missed()).isEqualTo(4);
		assertThat(plan.nextTick()).isEqualTo(NINE.plusSeconds(4 * 3600));
	}

	@Test
	void noneStillFiresTheNewestTickIfItIsOnTime() {
		TickPlan plan = TickPlan.of(HOURLY, NINE, NINE.plusSeconds(3 * 3600 + 30), MissedTicks.NONE, GRACE, 100);

		assertThat(plan.fired()).containsExactly(NINE.plusSeconds(3 * 3600));
		assertThat(plan.missed()).isEqualTo(3);
	}

	@Test
	void aPerSecondScheduleDownForDaysIsSkippedInBoundedPasses() {
		CronTicks everySecond = new CronTicks(CronExpression.parse("* * * * * *"), ZoneOffset.UTC);
		Instant now = NINE.plus(Duration.ofDays(2));

		TickPlan plan = TickPlan.of(everySecond, NINE, now, MissedTicks.LATEST, GRACE, 100);

		assertThat(plan.fired()).isEmpty();
		assertThat(plan.missed()).isEqualTo(TickPlan.MAX_SCANNED);
		assertThat(plan.more()).isTrue();
		assertThat(plan.nextTick()).isEqualTo(NINE.plusSeconds(TickPlan.MAX_SCANNED));
	}

}
