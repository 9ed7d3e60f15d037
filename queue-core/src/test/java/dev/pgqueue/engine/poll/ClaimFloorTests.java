package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import dev.pgqueue.engine.job.ClaimStart;
import dev.pgqueue.engine.job.ClaimedJob;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * How floors move and when a claim sweeps, on a clock the test turns. What floors save on a real
 * table is in {@code dev.pgqueue.ClaimFloorDatabaseTests}.
 */
class ClaimFloorTests {

	private static final Duration SWEEP_INTERVAL = Duration.ofSeconds(1);

	private static final Duration MARGIN = Duration.ofSeconds(2);

	private static final Instant T = Instant.parse("2026-11-23T12:00:00Z");

	private final AtomicLong nanos = new AtomicLong();

	private final ClaimFloor floor = new ClaimFloor(SWEEP_INTERVAL, MARGIN, true, this.nanos::get);

	@Test
	void firstClaimSweepsAndSetsEachLevelsFloorAMarginBehindItsHead() {
		ClaimStart start = this.floor.next();
		assertThat(start.isSweep()).isTrue();
		this.floor.claimed(start, List.of(job(10, T.plusSeconds(5)), job(0, T), job(0, T.plusSeconds(1))), 0);

		assertThat(this.floor.floors()).containsEntry(10, T.plusSeconds(5).minus(MARGIN))
			.containsEntry(0, T.plusSeconds(1).minus(MARGIN));
		ClaimStart next = this.floor.next();
		assertThat(next.isSweep()).isFalse();
		// Each level: the run-ats within the margin up to the head's, then from the head on.
		assertThat(next.priorities()).containsExactly(10, 10, 0, 0);
		assertThat(next.fromRunAts()).containsExactly(T.plusSeconds(5).minus(MARGIN), T.plusSeconds(5),
				T.plusSeconds(1).minus(MARGIN), T.plusSeconds(1));
		assertThat(next.fromIds()).containsExactly(Long.MIN_VALUE, 1, Long.MIN_VALUE, 1);
		assertThat(next.untilRunAts()).containsExactly(T.plusSeconds(5), null, T.plusSeconds(1), null);
	}

	@Test
	void whileClaimsComeBackFullTheMarginsAreReadOnlyEveryRecheck() {
		// A first claim sets the floor; a full claim from it (two of two jobs) means a backlog.
		this.floor.claimed(this.floor.next(), List.of(job(0, T, 500)), 0);
		List<ClaimedJob> full = this.floor.claim(2, (start) -> List.of(job(0, T.plusMillis(10), 600),
				job(0, T.plusMillis(10), 601)));
		assertThat(full).hasSize(2);

		ClaimStart backlog = this.floor.next();
		assertThat(backlog.isSweep()).isFalse();
		assertThat(backlog.fromIds()).as("from the head only: no margin range").containsExactly(601);
		this.nanos.addAndGet(ClaimFloor.MARGIN_RECHECK.toNanos());
		ClaimStart recheck = this.floor.next();
		assertThat(recheck.fromIds()).as("the margins again after a recheck interval")
			.containsExactly(Long.MIN_VALUE, 601);

		// A claim that comes back short: every claim reads the margins again.
		this.floor.claim(2, (start) -> List.of(job(0, T.plusMillis(20), 700)));
		assertThat(this.floor.next().fromIds()).containsExactly(Long.MIN_VALUE, 700);
	}

	@Test
	void aShortClaimThatReadTheMarginsSlowlyAndFoundNothingThereMakesTheNextReadThemOnlyEveryRecheck() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T, 500)), 0);
		// Many workers whose batches hold most of a thin backlog: the margins hold their locked rows, the
		// claim walks past them for long and comes back short with jobs from the head on only.
		List<ClaimedJob> short_ = this.floor.claim(100, (start) -> {
			assertThat(start.fromIds()).containsExactly(Long.MIN_VALUE, 500);
			this.nanos.addAndGet(ClaimFloor.MARGIN_COSTLY.toNanos());
			return List.of(job(0, T.plusMillis(10), 600));
		});
		assertThat(short_).hasSize(1);

		assertThat(this.floor.next().fromIds()).as("from the head only").containsExactly(600);
		this.nanos.addAndGet(ClaimFloor.MARGIN_RECHECK.toNanos());
		assertThat(this.floor.next().fromIds()).as("the margins again after a recheck interval")
			.containsExactly(Long.MIN_VALUE, 600);
	}

	@Test
	void aSlowClaimThatFoundAJobInTheMarginsAndAQuickOneThatFoundNoneKeepEveryClaimReadingThem() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T, 500)), 0);
		// A late commit behind the head, found in the margin by a slow claim.
		this.floor.claim(100, (start) -> {
			this.nanos.addAndGet(ClaimFloor.MARGIN_COSTLY.toNanos());
			return List.of(job(0, T.minusMillis(5), 450), job(0, T.plusMillis(10), 600));
		});
		assertThat(this.floor.next().fromIds()).containsExactly(Long.MIN_VALUE, 600);

		// A quick claim that found nothing there: reading the margins costs little, so every claim does.
		this.floor.claim(100, (start) -> List.of(job(0, T.plusMillis(20), 700)));
		assertThat(this.floor.next().fromIds()).containsExactly(Long.MIN_VALUE, 700);
	}

	@Test
	void withinOneRunAtAClaimStartsAtTheHeadNotAtTheStartOfTheRunAt() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T, 500), job(0, T, 501)), 0);
		ClaimStart floored = this.floor.next();
		// A burst enqueued in one transaction: every job has the same run-at, ids in enqueue order.
		this.floor.claimed(floored, List.of(job(0, T, 720), job(0, T, 705)), 0);

		assertThat(this.floor.heads()).containsEntry(0, new ClaimFloor.Key(T, 720));
		ClaimStart next = this.floor.next();
		assertThat(next.fromRunAts()).containsExactly(T.minus(MARGIN), T);
		assertThat(next.fromIds()).containsExactly(Long.MIN_VALUE, 720);
	}

	@Test
	void theNextClaimStartsAfterTheJobsThisInstancesOpenBatchesTook() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T, 1)), 0);
		// One batch takes a hundred jobs of a burst and keeps them while its listener runs.
		List<ClaimedJob> batch = new java.util.ArrayList<>();
		for (long id = 2; id <= 101; id++) {
			batch.add(job(0, T, id));
		}
		this.floor.claim(100, (start) -> batch);

		// The next batch does not read through the first one's locked rows: it starts at its last job.
		assertThat(this.floor.next().fromIds()).containsExactly(101);
	}

	@Test
	void aHeadOnlyMovesForwardWithinItsRunAt() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T, 500)), 0);
		ClaimStart floored = this.floor.next();
		// Two claims from the same floors; the one that skipped the other's rows ends first.
		this.floor.claimed(floored, List.of(job(0, T, 700), job(0, T, 750)), 0);
		this.floor.claimed(floored, List.of(job(0, T, 600), job(0, T, 650)), 0);

		assertThat(this.floor.heads()).containsEntry(0, new ClaimFloor.Key(T, 750));
	}

	@Test
	void aSweepThatFindsAJobOfTheHeadsRunAtBehindTheHeadIsFollowedByAnother() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T, 500)), 0);
		this.nanos.addAndGet(SWEEP_INTERVAL.toNanos());
		ClaimStart sweep = this.floor.next();
		assertThat(sweep.isSweep()).isTrue();
		// A rolled-back batch of the same burst: its jobs are behind the head, within its run-at.
		this.floor.claimed(sweep, List.of(job(0, T, 120)), 0);

		assertThat(this.floor.next().isSweep()).isTrue();
	}

	@Test
	void aSweepOvertakenByAClaimThatMovedTheHeadDoesNotSweepAgain() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T, 500)), 0);
		this.nanos.addAndGet(SWEEP_INTERVAL.toNanos());
		ClaimStart sweep = this.floor.next();
		ClaimStart floored = this.floor.next();
		assertThat(floored.isSweep()).isFalse();
		// The floor claim skipped the rows the sweep locked and ended first.
		this.floor.claimed(floored, List.of(job(0, T, 700)), 0);
		this.floor.claimed(sweep, List.of(job(0, T, 600)), 0);

		assertThat(this.floor.next().isSweep()).isFalse();
	}

	@Test
	void floorsOnlyMoveForward() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T.plusSeconds(60))), 0);
		ClaimStart floored = this.floor.next();
		this.floor.claimed(floored, List.of(job(0, T.plusSeconds(100))), 0);
		this.floor.claimed(floored, List.of(job(0, T.plusSeconds(70))), 0);

		assertThat(this.floor.floors()).containsEntry(0, T.plusSeconds(100).minus(MARGIN));
	}

	@Test
	void aClaimThatFindsNothingLeavesTheFloors() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T)), 0);
		this.floor.claimed(this.floor.next(), List.of(), 0);

		assertThat(this.floor.floors()).containsEntry(0, T.minus(MARGIN));
	}

	@Test
	void sweepsOncePerIntervalWhileOtherClaimsStartFromTheFloors() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T)), 0);
		assertThat(this.floor.next().isSweep()).isFalse();

		this.nanos.addAndGet(SWEEP_INTERVAL.toNanos());
		ClaimStart sweep = this.floor.next();
		assertThat(sweep.isSweep()).isTrue();
		assertThat(this.floor.next().isSweep()).as("a second claimer while the sweep runs").isFalse();
		this.floor.claimed(sweep, List.of(job(0, T.plusSeconds(1))), 0);
		assertThat(this.floor.next().isSweep()).isFalse();
	}

	@Test
	void sweepsSpaceOutWhenTheyTakeLong() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T)), 0);
		this.nanos.addAndGet(SWEEP_INTERVAL.toNanos());
		ClaimStart slow = this.floor.next();
		assertThat(slow.isSweep()).isTrue();
		// A snapshot held for minutes: the sweep walks every entry claimed since.
		this.floor.claimed(slow, List.of(job(0, T.plusSeconds(1))), Duration.ofMillis(100).toNanos());

		this.nanos.addAndGet(Duration.ofMillis(4_900).toNanos());
		assertThat(this.floor.next().isSweep()).as("before 50 times the last sweep's 100 ms").isFalse();
		this.nanos.addAndGet(Duration.ofMillis(100).toNanos());
		ClaimStart fast = this.floor.next();
		assertThat(fast.isSweep()).isTrue();
		this.floor.claimed(fast, List.of(job(0, T.plusSeconds(2))), Duration.ofMillis(1).toNanos());

		this.nanos.addAndGet(SWEEP_INTERVAL.toNanos());
		assertThat(this.floor.next().isSweep()).as("back to the interval once sweeps are cheap").isTrue();
	}

	@Test
	void aSweepThatFindsJobsBehindAFloorIsFollowedByAnotherAtOnce() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T.plusSeconds(600))), 0);
		this.nanos.addAndGet(SWEEP_INTERVAL.toNanos());
		ClaimStart sweep = this.floor.next();
		// A rescued job, due ten minutes before the floor.
		this.floor.claimed(sweep, List.of(job(0, T)), 0);

		assertThat(this.floor.floors()).as("not moved back").containsEntry(0, T.plusSeconds(600).minus(MARGIN));
		ClaimStart again = this.floor.next();
		assertThat(again.isSweep()).isTrue();
		this.floor.claimed(again, List.of(job(0, T.plusSeconds(601))), 0);
		assertThat(this.floor.next().isSweep()).isFalse();
	}

	@Test
	void aSweepThatFindsANewPriorityLevelLearnsItsFloorWithoutSweepingAgain() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T)), 0);
		this.nanos.addAndGet(SWEEP_INTERVAL.toNanos());
		ClaimStart sweep = this.floor.next();
		this.floor.claimed(sweep, List.of(job(5, T.plusSeconds(3)), job(0, T.plusSeconds(1))), 0);

		ClaimStart next = this.floor.next();
		assertThat(next.isSweep()).isFalse();
		assertThat(next.priorities()).containsExactly(5, 5, 0, 0);
	}

	@Test
	void aFailedSweepIsFollowedByAnotherAtOnce() {
		this.floor.claimed(this.floor.next(), List.of(job(0, T)), 0);
		this.nanos.addAndGet(SWEEP_INTERVAL.toNanos());
		assertThatIllegalStateException().isThrownBy(() -> this.floor.claim((start) -> {
			assertThat(start.isSweep()).isTrue();
			throw new IllegalStateException("connection lost");
		}));

		assertThat(this.floor.next().isSweep()).isTrue();
	}

	@Test
	void withoutFloorsEveryClaimSweeps() {
		ClaimFloor none = ClaimFloor.none();
		none.claimed(none.next(), List.of(job(0, T)), 0);

		assertThat(none.next().isSweep()).isTrue();
		assertThat(none.floors()).isEmpty();
	}

	private static ClaimedJob job(int priority, Instant runAt) {
		return job(priority, runAt, 1);
	}

	private static ClaimedJob job(int priority, Instant runAt, long id) {
		return ClaimedJob.of(id, UUID.randomUUID(), "kind", "queue", 0, 1, 3, priority, "{}", runAt, runAt);
	}

}
