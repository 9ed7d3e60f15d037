package dev.pgqueue;

import java.time.Instant;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link JobQuery#describe()}, the words a log line and the dashboard's confirmation use
 * for a search.
 */
class JobQueryTests {

	@Test
	void describesEveryFilterInOrderAndNoneAsEveryJob() {
		JobQuery query = JobQuery.all()
			.state(JobState.FAILED)
			.finishedSince(Instant.parse("2026-11-26T08:00:00Z"))
			.error("timed out")
			.tag("eu")
			.kind("report.daily")
			.queue("reports")
			.before("42");

		assertThat(query.describe()).isEqualTo("queue 'reports', kind 'report.daily', tag 'eu', "
				+ "an error containing 'timed out', finished since 2026-11-26T08:00:00Z, state failed");
		assertThat(JobQuery.all().describe()).isEqualTo("every job");
		assertThat(JobQuery.all().limit(7).describe()).isEqualTo("every job");
	}

}
