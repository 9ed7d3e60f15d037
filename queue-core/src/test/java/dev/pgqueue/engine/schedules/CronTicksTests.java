package dev.pgqueue.engine.schedules;

import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.scheduling.support.CronExpression;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ticks across daylight saving time in Paris: clocks went forward at 02:00 on 2026-03-29 (to 03:00,
 * UTC+2) and back at 03:00 on 2026-10-25 (to 02:00, UTC+1).
 */
class CronTicksTests {

	private static final ZoneId PARIS = ZoneId.of("Europe/Paris");

	@Test
	void aDailyTimeThatDoesNotExistFiresOnceAtTheEndOfTheGap() {
		CronTicks ticks = ticks("0 30 2 * * *");

		assertThat(ticksAfter(ticks, "2026-03-27T12:00:00Z", 4)).containsExactly(
				Instant.parse("2026-03-28T01:30:00Z"), // 02:30 UTC+1
				Instant.parse("2026-03-29T01:00:00Z"), // 02:30 does not exist: 03:00 UTC+2, the first instant after the gap
				Instant.parse("2026-03-30T00:30:00Z"), // 02:30 UTC+2
				Instant.parse("2026-03-31T00:30:00Z"));
	}

	@Test
	void ticksInsideTheGapBecomeOneTick() {
		CronTicks ticks = ticks("0 */15 * * * *");

		assertThat(ticksAfter(ticks, "2026-03-29T00:30:00Z", 4)).containsExactly(
				Instant.parse("2026-03-29T00:45:00Z"), // 01:45 UTC+1
				Instant.parse("2026-03-29T01:00:00Z"), // 02:00, 02:15, 02:30, 02:45 do not exist: once, at 03:00 UTC+2
				Instant.parse("2026-03-29T01:15:00Z"), // 03:15 UTC+2
				Instant.parse("2026-03-29T01:30:00Z"));
	}

	@Test
	void aDailyTimeThatHappensTwiceFiresOnce() {
		CronTicks ticks = ticks("0 30 2 * * *");

		assertThat(ticksAfter(ticks, "2026-10-24T12:00:00Z", 2)).containsExactly(
				Instant.parse("2026-10-25T00:30:00Z"), // 02:30 UTC+2; 02:30 UTC+1 an hour later does not fire
				Instant.parse("2026-10-26T01:30:00Z")); // 02:30 UTC+1
	}

	@Test
	void theRepeatedHourDoesNotRunAgain() {
		CronTicks ticks = ticks("0 */30 * * * *");

		assertThat(ticksAfter(ticks, "2026-10-24T23:45:00Z", 5)).containsExactly(
				Instant.parse("2026-10-25T00:00:00Z"), // 02:00 UTC+2
				Instant.parse("2026-10-25T00:30:00Z"), // 02:30 UTC+2
				// 02:00 and 02:30 UTC+1 (01:00Z, 01:30Z) are the same local times again
				Instant.parse("2026-10-25T02:00:00Z"), // 03:00 UTC+1
				Instant.parse("2026-10-25T02:30:00Z"),
				Instant.parse("2026-10-25T03:00:00Z"));
	}

	@Test
	void inUtcEveryTickIsTheExpressionsOwn() {
		CronTicks ticks = new CronTicks(CronExpression.parse("@hourly"), ZoneId.of("UTC"));

		assertThat(ticksAfter(ticks, "2026-10-25T00:10:00Z", 3)).containsExactly(Instant.parse("2026-10-25T01:00:00Z"),
				Instant.parse("2026-10-25T02:00:00Z"), Instant.parse("2026-10-25T03:00:00Z"));
	}

	@Test
	void anExpressionWithoutTicksHasNone() {
		assertThat(ticks("0 0 0 30 2 *").next(Instant.parse("2026-01-01T00:00:00Z"))).isNull();
	}

	private static CronTicks ticks(String cron) {
		return new CronTicks(CronExpression.parse(cron), PARIS);
	}

	private static List<Instant> ticksAfter(CronTicks ticks, String after, int count) {
		List<Instant> result = new ArrayList<>();
		Instant tick = Instant.parse(after);
		for (int i = 0; i < count; i++) {
			tick = ticks.next(tick);
			result.add(tick);
		}
		return result;
	}

}
