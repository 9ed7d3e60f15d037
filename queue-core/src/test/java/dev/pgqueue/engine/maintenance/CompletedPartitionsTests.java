package dev.pgqueue.engine.maintenance;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.pgqueue.engine.sql.MaintenanceRepository.PartitionChanges;
import dev.pgqueue.engine.sql.MaintenanceRepository.TimePartition;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Which time partitions of completed jobs the cleaner drops and creates. */
class CompletedPartitionsTests {

	private static final Instant NOW = Instant.parse("2026-11-29T12:07:30Z");

	@Test
	void aPartitionSpansAQuarterOfTheRetentionRoundedDownToAWidthThatDividesADay() {
		assertThat(CompletedPartitions.width(Duration.ofHours(1))).isEqualTo(Duration.ofMinutes(15));
		assertThat(CompletedPartitions.width(Duration.ofDays(7))).isEqualTo(Duration.ofDays(1));
		assertThat(CompletedPartitions.width(Duration.ofHours(2))).isEqualTo(Duration.ofMinutes(15));
		assertThat(CompletedPartitions.width(Duration.ofHours(4))).isEqualTo(Duration.ofHours(1));
		assertThat(CompletedPartitions.width(Duration.ofMinutes(10))).isEqualTo(Duration.ofMinutes(1));
		assertThat(CompletedPartitions.width(Duration.ofSeconds(5))).isEqualTo(Duration.ofMinutes(1));
	}

	@Test
	void withNoneYetTheFirstStartsAMinuteAheadOnTheGridAndTwoWidthsAheadAreCovered() {
		PartitionChanges changes = CompletedPartitions.plan(List.of(), NOW, Duration.ofHours(1));
		assertThat(changes.drop()).isEmpty();
		assertThat(changes.create()).extracting(TimePartition::from)
			.containsExactly(Instant.parse("2026-11-29T12:15:00Z"), Instant.parse("2026-11-29T12:30:00Z"));
		assertThat(changes.create()).extracting(TimePartition::name)
			.containsExactly("pgqueue_finished_jobs_completed_p20261129t1215",
					"pgqueue_finished_jobs_completed_p20261129t1230");
		assertThat(changes.create().get(1).to()).isEqualTo(Instant.parse("2026-11-29T12:45:00Z"));
	}

	@Test
	void partitionsContinueFromTheLastOneAndThoseWhollyPastTheRetentionAreDropped() {
		List<TimePartition> existing = List.of(slot("10:45", "11:00"), slot("11:00", "11:15"), slot("11:15", "11:30"),
				slot("11:30", "11:45"), slot("11:45", "12:00"), slot("12:00", "12:15"), slot("12:15", "12:30"));
		PartitionChanges changes = CompletedPartitions.plan(existing, NOW, Duration.ofHours(1));
		assertThat(changes.drop()).as("ended at or before 11:07:30").containsExactly(slot("10:45", "11:00"));
		assertThat(changes.create()).containsExactly(slot("12:30", "12:45"));
		assertThat(CompletedPartitions.plan(List.of(slot("12:00", "12:15"), slot("12:15", "12:30"), slot("12:30", "12:45")),
				NOW, Duration.ofHours(1)).isEmpty()).isTrue();
	}

	@Test
	void afterAGapNoPartitionStartsBeforeAMinuteAhead() {
		PartitionChanges changes = CompletedPartitions.plan(List.of(slot("11:45", "12:00"), slot("12:00", "12:07")), NOW,
				Duration.ofHours(1));
		assertThat(changes.create()).extracting(TimePartition::from)
			.containsExactly(Instant.parse("2026-11-29T12:15:00Z"), Instant.parse("2026-11-29T12:30:00Z"));
	}

	@Test
	void aChangedRetentionContinuesWithoutOverlapAndThenOnItsOwnGrid() {
		// From 15-minute partitions to hourly ones (a retention of four hours).
		PartitionChanges changes = CompletedPartitions.plan(List.of(slot("12:00", "12:15"), slot("12:15", "12:30")), NOW,
				Duration.ofHours(4));
		assertThat(changes.create()).containsExactly(slot("12:30", "13:00"), slot("13:00", "14:00"),
				slot("14:00", "15:00"));
	}

	@Test
	void aRetentionOfZeroCreatesNoneAndDropsEveryEndedOne() {
		PartitionChanges changes = CompletedPartitions.plan(List.of(slot("11:45", "12:00"), slot("12:00", "12:15")), NOW,
				Duration.ZERO);
		assertThat(changes.create()).isEmpty();
		assertThat(changes.drop()).containsExactly(slot("11:45", "12:00"));
	}

	private static TimePartition slot(String from, String to) {
		Instant start = Instant.parse("2026-11-29T" + from + ":00Z");
		return new TimePartition("pgqueue_finished_jobs_completed_p20261129t" + from.replace(":", ""), start,
				Instant.parse("2026-11-29T" + to + ":00Z"));
	}

}
