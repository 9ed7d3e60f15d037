package dev.pgqueue.engine.schedules;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.scheduling.support.CronExpression;

/**
 * The ticks of a cron expression read in a time zone, as instants, with daylight saving time made
 * explicit: the expression is evaluated on local date-times, and each local tick becomes one instant.
 *
 * <ul>
 * <li>A local time that does not exist (the hour skipped when clocks go forward) fires once, at the
 * first instant after the gap: "02:30 every day" fires at 03:00 on that day, and the ticks of an
 * expression that fall inside the gap (every 15 minutes) become that one instant.
 * <li>A local time that happens twice (the hour repeated when clocks go back) fires once, at its first
 * occurrence: "every 15 minutes" does not run the repeated hour again.
 * </ul>
 */
public final class CronTicks {

	/** Local ticks read past in one call before giving up (an expression that never fires). */
	private static final int MAX_STEPS = 10_000;

	private final CronExpression expression;

	private final ZoneId zone;

	private final ZoneRules rules;

	public CronTicks(CronExpression expression, ZoneId zone) {
		this.expression = expression;
		this.zone = zone;
		this.rules = zone.getRules();
	}

	/**
	 * The first tick strictly after {@code after}, or {@code null} if the expression has none (such
	 * as February 30th).
	 */
	public @Nullable Instant next(Instant after) {
		LocalDateTime local = LocalDateTime.ofInstant(after, this.zone);
		for (int step = 0; step < MAX_STEPS; step++) {
			LocalDateTime candidate = this.expression.next(local);
			if (candidate == null) {
				return null;
			}
			Instant tick = instant(candidate);
			if (tick.isAfter(after)) {
				return tick;
			}
			// A local tick in a gap (mapped to the gap's end, already passed) or the second occurrence of
			// a repeated local time: read on.
			local = candidate;
		}
		return null;
	}

	/** The instant of a local tick: its only one, its first of two, or the end of the gap it falls in. */
	Instant instant(LocalDateTime local) {
		List<ZoneOffset> offsets = this.rules.getValidOffsets(local);
		if (offsets.isEmpty()) {
			ZoneOffsetTransition gap = this.rules.getTransition(local);
			return gap.getInstant();
		}
		// One offset, or the earlier occurrence of a repeated time (its offset is the larger one).
		ZoneOffset offset = (offsets.size() == 1) ? offsets.get(0)
				: (offsets.get(0).compareTo(offsets.get(1)) < 0 ? offsets.get(0) : offsets.get(1));
		return local.toInstant(offset);
	}

	public ZoneId zone() {
		return this.zone;
	}

}
