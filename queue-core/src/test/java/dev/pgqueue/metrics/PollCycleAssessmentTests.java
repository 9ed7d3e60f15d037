package dev.pgqueue.metrics;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bands of {@link PollCycleAssessment}, at their edges.
 */
class PollCycleAssessmentTests {

	@Test
	void isHealthyBelowThirtyMilliseconds() {
		assertThat(PollCycleAssessment.of(Duration.ZERO)).isEqualTo(PollCycleAssessment.HEALTHY);
		assertThat(PollCycleAssessment.of(Duration.ofMillis(12))).isEqualTo(PollCycleAssessment.HEALTHY);
		assertThat(PollCycleAssessment.of(Duration.ofMillis(30).minusNanos(1))).isEqualTo(PollCycleAssessment.HEALTHY);
	}

	@Test
	void isDegradingFromThirtyUpToOneHundredMilliseconds() {
		assertThat(PollCycleAssessment.of(Duration.ofMillis(30))).isEqualTo(PollCycleAssessment.DEGRADING);
		assertThat(PollCycleAssessment.of(Duration.ofMillis(100).minusNanos(1)))
			.isEqualTo(PollCycleAssessment.DEGRADING);
	}

	@Test
	void isTroubleFromOneHundredUpToFiveHundredMilliseconds() {
		assertThat(PollCycleAssessment.of(Duration.ofMillis(100))).isEqualTo(PollCycleAssessment.TROUBLE);
		assertThat(PollCycleAssessment.of(Duration.ofMillis(500).minusNanos(1))).isEqualTo(PollCycleAssessment.TROUBLE);
	}

	@Test
	void isBrokenFromFiveHundredMilliseconds() {
		assertThat(PollCycleAssessment.of(Duration.ofMillis(500))).isEqualTo(PollCycleAssessment.BROKEN);
		assertThat(PollCycleAssessment.of(Duration.ofMinutes(5))).isEqualTo(PollCycleAssessment.BROKEN);
	}

	@Test
	void publishesItsLevelAndLabel() {
		assertThat(PollCycleAssessment.HEALTHY.level()).isZero();
		assertThat(PollCycleAssessment.BROKEN.level()).isEqualTo(3);
		assertThat(PollCycleAssessment.DEGRADING.label()).isEqualTo("degrading");
	}

}
