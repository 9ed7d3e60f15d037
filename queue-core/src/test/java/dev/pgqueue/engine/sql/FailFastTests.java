package dev.pgqueue.engine.sql;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** When {@link UniqueJobRepository} tries the plain insert first, after failures and successes. */
class FailFastTests {

	@Test
	void triesUntilAFailureThenSkipsOneTwoFourEnqueuesAsFailuresRepeat() {
		PlainUniqueInsert.FailFast failFast = new PlainUniqueInsert.FailFast();
		assertThat(decisions(failFast, 3)).containsExactly(true, true, true);

		failFast.failed();
		assertThat(decisions(failFast, 2)).containsExactly(false, true);
		failFast.failed();
		assertThat(decisions(failFast, 3)).containsExactly(false, false, true);
		failFast.failed();
		assertThat(decisions(failFast, 5)).containsExactly(false, false, false, false, true);
	}

	@Test
	void aSuccessStartsTheCountAgain() {
		PlainUniqueInsert.FailFast failFast = new PlainUniqueInsert.FailFast();
		failFast.failed();
		decisions(failFast, 2);
		failFast.failed();
		decisions(failFast, 3);
		failFast.succeeded();

		failFast.failed();
		assertThat(decisions(failFast, 2)).containsExactly(false, true);
	}

	@Test
	void theSkipsStopGrowingAtTheirMaximum() {
		PlainUniqueInsert.FailFast failFast = new PlainUniqueInsert.FailFast();
		for (int i = 0; i < 20; i++) {
			failFast.failed();
		}
		List<Boolean> decisions = decisions(failFast, PlainUniqueInsert.FailFast.MAX_SKIPS + 1);
		assertThat(decisions.subList(0, PlainUniqueInsert.FailFast.MAX_SKIPS)).containsOnly(false);
		assertThat(decisions.get(PlainUniqueInsert.FailFast.MAX_SKIPS)).isTrue();
	}

	private static List<Boolean> decisions(PlainUniqueInsert.FailFast failFast, int count) {
		List<Boolean> decisions = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			decisions.add(failFast.shouldTry());
		}
		return decisions;
	}

}
