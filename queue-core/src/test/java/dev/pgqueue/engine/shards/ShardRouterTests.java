package dev.pgqueue.engine.shards;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class ShardRouterTests {

	private static final SlotMap SLOTS = SlotMap.spread(List.of("s1", "s2", "s3"));

	private static final Set<String> ALL_UP = Set.of("s1", "s2", "s3");

	@Test
	void aNamedShardComesBeforeTheKey() {
		ShardRouter router = new ShardRouter(SLOTS);
		String owner = SLOTS.shardOf("tenant-1");
		String other = owner.equals("s1") ? "s2" : "s1";
		assertThat(router.route(other, "tenant-1", ALL_UP)).isEqualTo(other);
		assertThatIllegalArgumentException().isThrownBy(() -> router.route("s9", "tenant-1", ALL_UP))
			.withMessage("The job names shard 's9', which is not configured; the shards are [s1, s2, s3] "
					+ "(pgqueue.shards)");
	}

	@Test
	void aKeyedJobGoesToItsSlotsShardEvenWhileThatShardIsDown() {
		ShardRouter router = new ShardRouter(SLOTS);
		for (int i = 0; i < 1_000; i++) {
			String key = "tenant-" + i;
			String owner = SLOTS.shardOf(key);
			assertThat(router.route(null, key, ALL_UP)).isEqualTo(owner);
			assertThat(router.route(null, key, Set.of())).as("never elsewhere, so that a key never spans shards")
				.isEqualTo(owner);
		}
	}

	@Test
	void jobsWithoutAKeyTakeTheShardsThatAreUpInTurn() {
		ShardRouter router = new ShardRouter(SLOTS);
		assertThat(counts(router, 300, ALL_UP)).containsOnly(Map.entry("s1", 100), Map.entry("s2", 100),
				Map.entry("s3", 100));
		assertThat(counts(router, 300, Set.of("s1", "s3"))).as("s2 down: the others share its turns evenly")
			.containsOnly(Map.entry("s1", 150), Map.entry("s3", 150));
		assertThatIllegalStateException().isThrownBy(() -> router.route(null, null, Set.of()))
			.withMessageStartingWith("No shard is up to take a job without a key");
	}

	private static Map<String, Integer> counts(ShardRouter router, int jobs, Set<String> up) {
		Map<String, Integer> counts = new HashMap<>();
		for (int i = 0; i < jobs; i++) {
			counts.merge(router.route(null, null, up), 1, Integer::sum);
		}
		return counts;
	}

}
