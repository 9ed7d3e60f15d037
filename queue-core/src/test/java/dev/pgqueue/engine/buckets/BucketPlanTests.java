package dev.pgqueue.engine.buckets;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.pgqueue.engine.sql.CoordinationRepository.BucketOwner;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class BucketPlanTests {

	@Test
	void spreadsTheBucketsEvenlyOverTheLiveMembersOldestFirst() {
		List<BucketOwner> rows = BucketPlan.plan(64, List.of("a", "b", "c"), List.of(), 1);

		assertThat(rows).hasSize(64).allSatisfy((row) -> assertThat(row.nextOwner()).isNull());
		assertThat(countByOwner(rows)).containsExactlyInAnyOrderEntriesOf(Map.of("a", 22L, "b", 21L, "c", 21L));
	}

	@Test
	void aJoiningMemberTakesItsShareFromLiveOwnersOnlyThroughAHandOver() {
		List<BucketOwner> before = BucketPlan.plan(64, List.of("a", "b", "c"), List.of(), 1);

		List<BucketOwner> changed = BucketPlan.plan(64, List.of("a", "b", "c", "d"), before, 1);

		assertThat(changed).hasSize(16).allSatisfy((row) -> {
			assertThat(row.owner()).isIn("a", "b", "c");
			assertThat(row.nextOwner()).isEqualTo("d");
		});
		Map<String, Long> afterHandOver = countByOwner(handOver(apply(before, changed)));
		assertThat(afterHandOver).containsExactlyInAnyOrderEntriesOf(Map.of("a", 16L, "b", 16L, "c", 16L, "d", 16L));
	}

	@Test
	void theBucketsOfADeadMemberGoToTheOthersAtOnce() {
		List<BucketOwner> before = BucketPlan.plan(64, List.of("a", "b", "c"), List.of(), 1);

		List<BucketOwner> changed = BucketPlan.plan(64, List.of("a", "c"), before, 1);

		assertThat(changed).hasSize(21).allSatisfy((row) -> {
			assertThat(row.owner()).isIn("a", "c");
			assertThat(row.nextOwner()).isNull();
		});
		assertThat(countByOwner(apply(before, changed))).containsExactlyInAnyOrderEntriesOf(Map.of("a", 32L, "c", 32L));
	}

	@Test
	void aSpreadThatIsRightChangesNothingButANewGenerationConfirmsEveryRow() {
		List<BucketOwner> rows = BucketPlan.plan(64, List.of("a", "b"), List.of(), 1);

		assertThat(BucketPlan.plan(64, List.of("a", "b"), rows, 1)).isEmpty();
		List<BucketOwner> confirmed = BucketPlan.plan(64, List.of("a", "b"), rows, 2);
		assertThat(confirmed).hasSize(64).allSatisfy((row) -> assertThat(row.generation()).isEqualTo(2));
		assertThat(countByOwner(confirmed)).isEqualTo(countByOwner(rows));
	}

	@Test
	void moreMembersThanBucketsLeavesTheNewestWithout() {
		List<BucketOwner> rows = BucketPlan.plan(2, List.of("a", "b", "c"), List.of(), 1);

		assertThat(countByOwner(rows)).containsExactlyInAnyOrderEntriesOf(Map.of("a", 1L, "b", 1L));
	}

	private static Map<String, Long> countByOwner(List<BucketOwner> rows) {
		return rows.stream().collect(Collectors.groupingBy(BucketOwner::owner, Collectors.counting()));
	}

	private static List<BucketOwner> apply(List<BucketOwner> rows, List<BucketOwner> changed) {
		Map<Integer, BucketOwner> byBucket = new HashMap<>();
		rows.forEach((row) -> byBucket.put(row.bucket(), row));
		changed.forEach((row) -> byBucket.put(row.bucket(), row));
		return new ArrayList<>(byBucket.values());
	}

	private static List<BucketOwner> handOver(List<BucketOwner> rows) {
		return rows.stream()
			.map((row) -> (row.nextOwner() != null) ? new BucketOwner(row.bucket(), row.nextOwner(), null, row.generation())
					: row)
			.toList();
	}

}
