package dev.pgqueue.engine.schedules;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.pgqueue.MissedTicks;
import org.jspecify.annotations.Nullable;

/**
 * Which of a schedule's due ticks one pass fires, which it skips, and where the schedule goes on.
 * A pure function of the schedule's ticks, its next tick, the database's clock and its policy, so that
 * it is tested on a turned clock.
 *
 * <p>The due ticks are the schedule's next tick and every tick after it up to now. The newest of them
 * is on time if it fell due within the grace; every other due tick is missed (the instances were
 * down, the schedule paused, or the ticker behind by more than the grace). {@link MissedTicks#LATEST}
 * fires the newest and skips the others; {@link MissedTicks#ALL} fires them all in order, at most
 * {@code maxFired} in one pass (the next pass goes on at once); {@link MissedTicks#NONE} fires the
 * newest only if it is on time.
 *
 * @param fired the ticks to fire, oldest first
 * @param missed how many due ticks are skipped as missed
 * @param nextTick the schedule's next tick after this pass, or {@code null} if its expression has no
 * more
 * @param more whether due ticks remain for another pass (a bound was reached)
 */
record TickPlan(List<Instant> fired, long missed, @Nullable Instant nextTick, boolean more) {

	/** Due ticks read in one pass at most: a per-second schedule after a day down has 86 400. */
	static final int MAX_SCANNED = 100_000;

	/**
	 * @param ticks the schedule's ticks
	 * @param nextTick its next tick, due if not after {@code now}
	 * @param now the database's clock
	 * @param grace how late the newest due tick may be and still be on time
	 * @param maxFired how many ticks {@link MissedTicks#ALL} fires in one pass at most
	 */
	static TickPlan of(CronTicks ticks, Instant nextTick, Instant now, MissedTicks policy, Duration grace,
			int maxFired) {
		List<Instant> fired = new ArrayList<>();
		long due = 0;
		Instant newest = null;
		Instant tick = nextTick;
		while (tick != null && !tick.isAfter(now) && due < MAX_SCANNED) {
			due++;
			newest = tick;
			if (policy == MissedTicks.ALL) {
				fired.add(tick);
				if (fired.size() == maxFired) {
					Instant following = ticks.next(tick);
					return new TickPlan(fired, 0, following, following != null && !following.isAfter(now));
				}
			}
			tick = ticks.next(tick);
		}
		if (newest == null) {
			return new TickPlan(List.of(), 0, nextTick, false);
		}
		boolean more = tick != null && !tick.isAfter(now);
		if (policy == MissedTicks.ALL) {
			return new TickPlan(fired, 0, tick, more);
		}
		if (more) {
			// The bound was reached before the newest due tick: skip what was read, go on next pass.
			return new TickPlan(List.of(), due, tick, true);
		}
		boolean onTime = !newest.plus(grace).isBefore(now);
		if (policy == MissedTicks.LATEST || onTime) {
			return new TickPlan(List.of(newest), due - 1, tick, false);
		}
		return new TickPlan(List.of(), due, tick, false);
	}

}
