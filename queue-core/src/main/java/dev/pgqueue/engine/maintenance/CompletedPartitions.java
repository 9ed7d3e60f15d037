package dev.pgqueue.engine.maintenance;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.pgqueue.engine.sql.MaintenanceRepository.PartitionChanges;
import dev.pgqueue.engine.sql.MaintenanceRepository.TimePartition;

/**
 * Which time partitions completed jobs need: the cleaner drops those whose every job is past the
 * completed retention, instead of deleting their rows one by one, and creates the next ones ahead of
 * time, so that a completion always finds its partition.
 *
 * <p>A partition spans a quarter of the retention, rounded down to one of a few widths that divide a
 * day (one minute at least, one day at most), aligned on the UTC clock: with the default hour, 15
 * minutes, and a completed job is kept from one hour to one hour and a quarter. Partitions are
 * created from one minute ahead on, two widths ahead at least, so that no completion can be writing
 * into the range of one being attached (a row that finds no partition goes to the default one, which
 * the cleaner prunes row by row).
 */
final class CompletedPartitions {

	/** The widths a partition may have, each dividing a day. */
	private static final List<Duration> WIDTHS = List.of(Duration.ofMinutes(1), Duration.ofMinutes(5),
			Duration.ofMinutes(15), Duration.ofHours(1), Duration.ofHours(6), Duration.ofDays(1));

	/** How far ahead of now the first partition made after a gap may start. */
	static final Duration AHEAD = Duration.ofMinutes(1);

	private static final DateTimeFormatter NAME = DateTimeFormatter.ofPattern("'pgqueue_finished_jobs_completed_p'yyyyMMdd't'HHmm", Locale.ROOT)
		.withZone(ZoneOffset.UTC);

	private CompletedPartitions() {
	}

	/** The width of the partitions of a retention. */
	static Duration width(Duration retention) {
		Duration quarter = retention.dividedBy(4);
		Duration width = WIDTHS.get(0);
		for (Duration candidate : WIDTHS) {
			if (candidate.compareTo(quarter) <= 0) {
				width = candidate;
			}
		}
		return width;
	}

	/**
	 * What to drop and create at {@code now} (the database's clock), given the partitions there are:
	 * drop those that end at or before {@code now - retention}; unless the retention is zero (jobs are
	 * deleted as they complete), create contiguous partitions from the end of the last one (or, after
	 * a gap, from the first aligned instant a minute ahead) until two widths and a minute ahead are
	 * covered.
	 */
	static PartitionChanges plan(List<TimePartition> existing, Instant now, Duration retention) {
		List<TimePartition> drop = new ArrayList<>();
		Instant expired = now.minus(retention);
		for (TimePartition partition : existing) {
			if (!partition.to().isAfter(expired)) {
				drop.add(partition);
			}
		}
		List<TimePartition> create = new ArrayList<>();
		if (!retention.isZero()) {
			Duration width = width(retention);
			Instant earliest = alignUp(now.plus(AHEAD), width);
			Instant start = earliest;
			if (!existing.isEmpty()) {
				Instant lastEnd = existing.get(existing.size() - 1).to();
				// Continue the last partition if no completion can reach its end during this pass.
				if (!lastEnd.isBefore(now.plusSeconds(10))) {
					start = lastEnd;
				}
			}
			Instant horizon = now.plus(width.multipliedBy(2)).plus(AHEAD);
			while (start.isBefore(horizon)) {
				Instant end = alignUp(start.plusNanos(1), width);
				create.add(new TimePartition(NAME.format(start), start, end));
				start = end;
			}
		}
		return new PartitionChanges(drop, create);
	}

	/** The first instant at or after {@code instant} that is a whole multiple of {@code width} since the epoch. */
	static Instant alignUp(Instant instant, Duration width) {
		long step = width.toSeconds();
		long seconds = instant.getEpochSecond() + ((instant.getNano() > 0) ? 1 : 0);
		long aligned = Math.floorDiv(seconds + step - 1, step) * step;
		return Instant.ofEpochSecond(aligned);
	}

}
