package dev.pgqueue.engine.shards;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import dev.pgqueue.InvalidQueueConfigurationException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class ShardIdsTests {

	@Test
	void anIdTellsItsShardEvenAfterShardsAreAddedOrReordered() {
		ShardIds three = new ShardIds(List.of("s1", "s2", "s3"));
		ShardIds four = new ShardIds(List.of("s4", "s3", "s2", "s1"));
		Set<UUID> seen = new HashSet<>();
		for (String shard : List.of("s1", "s2", "s3")) {
			for (int i = 0; i < 10_000; i++) {
				UUID id = three.newId(shard);
				assertThat(seen.add(id)).as("a new id").isTrue();
				assertThat(id.version()).isEqualTo(4);
				assertThat(id.variant()).isEqualTo(2);
				assertThat(three.shardOf(id)).contains(shard);
				assertThat(four.shardOf(id)).contains(shard);
			}
		}
	}

	@Test
	void everyBitBesideTheTagVersionAndVariantStaysRandom() {
		ShardIds ids = new ShardIds(List.of("orders-eu", "orders-us"));
		int samples = 20_000;
		int[] ones = new int[128];
		for (int i = 0; i < samples; i++) {
			UUID id = ids.newId("orders-eu");
			for (int bit = 0; bit < 64; bit++) {
				ones[bit] += (int) ((id.getMostSignificantBits() >>> bit) & 1);
				ones[64 + bit] += (int) ((id.getLeastSignificantBits() >>> bit) & 1);
			}
		}
		int randomBits = 0;
		// Five standard deviations of a fair coin over the samples: about 354.
		double allowed = 5 * Math.sqrt(samples * 0.25);
		for (int bit = 0; bit < 128; bit++) {
			boolean fixed = (bit >= 12 && bit < 16) || (bit >= 64 + 48);
			if (!fixed) {
				assertThat(Math.abs(ones[bit] - samples / 2.0)).as("ones in bit %d of %d ids", bit, samples)
					.isLessThan(allowed);
				randomBits++;
			}
			else {
				assertThat(ones[bit]).as("bit %d, the version's, variant's or tag's", bit).isIn(0, samples);
			}
		}
		assertThat(randomBits).isEqualTo(108);
	}

	@Test
	void twoShardNamesThatWouldShareATagFailNamingBoth() {
		Map<Integer, String> byTag = new HashMap<>();
		String first = null;
		String second = null;
		for (int i = 0; first == null; i++) {
			String name = "shard-" + i;
			String other = byTag.putIfAbsent(ShardIds.tagOf(name), name);
			if (other != null) {
				first = other;
				second = name;
			}
		}
		String a = first;
		String b = second;
		assertThatExceptionOfType(InvalidQueueConfigurationException.class)
			.isThrownBy(() -> new ShardIds(List.of("main", a, b)))
			.withMessageStartingWith("Shards '" + a + "' and '" + b + "' share the tag")
			.satisfies((ex) -> assertThat(ex.key()).isEqualTo("pgqueue.shards." + b));
	}

	@Test
	void anIdMadeWithoutShardsNamesAShardOnlyWhenItsRandomTagMatches() {
		ShardIds ids = new ShardIds(List.of("s1", "s2", "s3"));
		int named = 0;
		for (int i = 0; i < 16_384; i++) {
			if (ids.shardOf(UUID.randomUUID()).isPresent()) {
				named++;
			}
		}
		// Three tags of 16 384: about three ids in 16 384 match one, so finding by id asks further.
		assertThat(named).isLessThan(20);
	}

}
