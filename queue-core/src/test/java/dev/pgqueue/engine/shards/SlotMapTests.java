package dev.pgqueue.engine.shards;

import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.pgqueue.InvalidQueueConfigurationException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.within;

class SlotMapTests {

	/** Chi-square at which a fair spread over three shards (two degrees of freedom) is rejected, p = 0.001. */
	private static final double CHI_SQUARE_2_DF_P001 = 13.82;

	@Test
	void aKeysSlotIsTheSameInAnotherProcessWhoseDefaultCharsetIsNotUtf8() throws Exception {
		List<String> keys = sampleKeys(2_000);
		Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Dfile.encoding=ISO-8859-1", "-cp", System.getProperty("java.class.path"), SlotsOfSampleKeys.class.getName(),
				String.valueOf(keys.size()))
			.redirectError(ProcessBuilder.Redirect.INHERIT)
			.start();
		String printed = new String(child.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
		assertThat(child.waitFor(60, TimeUnit.SECONDS)).as("the child process ended").isTrue();
		assertThat(child.exitValue()).isZero();
		List<String> lines = printed.lines().toList();
		assertThat(lines.get(0)).as("the child's default charset").isNotEqualTo(StandardCharsets.UTF_8.name());
		List<String> expected = new ArrayList<>();
		for (String key : keys) {
			expected.add(String.valueOf(SlotMap.slotOf(key)));
		}
		assertThat(lines.subList(1, lines.size())).containsExactlyElementsOf(expected);
	}

	@Test
	void aKeysSlotNeverChangesFromOneReleaseToTheNext() {
		// Pinned when the slot function was written, and computed apart from this code (CRC-32C of the
		// UTF-8 bytes, MurmurHash3's finalizer, the low 14 bits): a change here moves keys between
		// shards, whose waiting jobs would then run beside newer jobs of the same key on another server.
		assertThat(SlotMap.slotOf("")).isEqualTo(0);
		assertThat(SlotMap.slotOf("tenant-1")).isEqualTo(14069);
		assertThat(SlotMap.slotOf("tenant-2")).isEqualTo(12452);
		assertThat(SlotMap.slotOf("Zürich")).isEqualTo(15097);
	}

	@Test
	void randomKeysSpreadEvenlyOverThreeShards() {
		SlotMap map = SlotMap.spread(List.of("s1", "s2", "s3"));
		map.slotCounts().values().forEach((count) -> assertThat(count).isCloseTo(SlotMap.SLOTS / 3, within(200)));
		Random random = new Random(27);
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < 100_000; i++) {
			keys.add(new UUID(random.nextLong(), random.nextLong()).toString());
		}
		assertThat(chiSquare(map, keys)).as("chi-square of 100 000 random keys over three shards")
			.isLessThan(CHI_SQUARE_2_DF_P001);
		List<String> tenants = new ArrayList<>();
		for (int i = 0; i < 100_000; i++) {
			tenants.add("tenant-" + i);
		}
		assertThat(chiSquare(map, tenants)).as("chi-square of 100 000 numbered tenants over three shards")
			.isLessThan(CHI_SQUARE_2_DF_P001);
	}

	@Test
	void keysFillTheSlotsEvenly() {
		int[] counts = new int[SlotMap.SLOTS];
		int keys = 1_000_000;
		for (int i = 0; i < keys; i++) {
			counts[SlotMap.slotOf("customer:" + i)]++;
		}
		double expected = (double) keys / SlotMap.SLOTS;
		double chiSquare = 0;
		for (int count : counts) {
			chiSquare += (count - expected) * (count - expected) / expected;
		}
		// 16 383 degrees of freedom: mean 16 383, standard deviation 181; 5 deviations above the mean.
		assertThat(chiSquare).as("chi-square of a million keys over the slots").isLessThan(16_383 + 5 * 181);
	}

	@Test
	void appendingAShardMovesOnlyTheSlotsItTakes() {
		SlotMap three = SlotMap.spread(List.of("s1", "s2", "s3"));
		SlotMap four = SlotMap.spread(List.of("s1", "s2", "s3", "s4"));
		BitSet moved = three.movedIn(four);
		for (int slot = moved.nextSetBit(0); slot >= 0; slot = moved.nextSetBit(slot + 1)) {
			assertThat(four.shardOfSlot(slot)).as("new owner of moved slot %d", slot).isEqualTo("s4");
		}
		assertThat(moved.cardinality()).isEqualTo(four.slotCounts().get("s4"))
			.isCloseTo(SlotMap.SLOTS / 4, within(300));
		for (String shard : List.of("s1", "s2", "s3")) {
			assertThat(three.slotCounts().get(shard) - four.slotCounts().get(shard)).as("slots %s gave up", shard)
				.isCloseTo(SlotMap.SLOTS / 12, within(200));
		}
		int movedKeys = 0;
		for (int i = 0; i < 100_000; i++) {
			String key = "order-" + i;
			if (!three.shardOf(key).equals(four.shardOf(key))) {
				movedKeys++;
				assertThat(moved.get(SlotMap.slotOf(key))).isTrue();
			}
		}
		assertThat(movedKeys).isCloseTo(25_000, within(1_000));
	}

	@Test
	void reassigningARangeMovesThatRangeAlone() {
		Map<String, String> before = new LinkedHashMap<>();
		before.put("s1", "0-8191");
		before.put("s2", "8192-16383");
		Map<String, String> after = new LinkedHashMap<>();
		after.put("s1", "0-7999");
		after.put("s2", "8192-16383");
		after.put("s3", " 8000 - 8191 ");
		BitSet moved = SlotMap.assigned(before).movedIn(SlotMap.assigned(after));
		BitSet expected = new BitSet();
		expected.set(8000, 8192);
		assertThat(moved).isEqualTo(expected);
		assertThat(SlotMap.assigned(after).slotCounts()).containsExactly(Map.entry("s1", 8000), Map.entry("s2", 8192),
				Map.entry("s3", 192));
	}

	@Test
	void explicitSlotsMustGiveEverySlotToExactlyOneShard() {
		Map<String, String> overlap = new LinkedHashMap<>();
		overlap.put("s1", "0-9000");
		overlap.put("s2", "8192-16383");
		assertThatExceptionOfType(InvalidQueueConfigurationException.class).isThrownBy(() -> SlotMap.assigned(overlap))
			.withMessage("pgqueue.shards.s2.slots gives slot 8192 (and 808 more) to shard 's2', which shard 's1' "
					+ "already holds")
			.satisfies((ex) -> assertThat(ex.key()).isEqualTo("pgqueue.shards.s2.slots"));
		Map<String, String> gap = new LinkedHashMap<>();
		gap.put("s1", "0-8000");
		gap.put("s2", "8192-16383");
		assertThatExceptionOfType(InvalidQueueConfigurationException.class).isThrownBy(() -> SlotMap.assigned(gap))
			.withMessage("pgqueue.shards.*.slots leave 191 of the 16384 slots without a shard, first slots 8001-8191");
		assertThatExceptionOfType(InvalidQueueConfigurationException.class)
			.isThrownBy(() -> SlotMap.assigned(Map.of("s1", "0-16383, ten")))
			.withMessage("pgqueue.shards.s1.slots has 'ten', which is neither a slot nor a range of slots");
		assertThatExceptionOfType(InvalidQueueConfigurationException.class)
			.isThrownBy(() -> SlotMap.assigned(Map.of("s1", "0-16384")))
			.withMessage("pgqueue.shards.s1.slots has '0-16384', outside the slots 0-16383 or running backwards");
		assertThatExceptionOfType(InvalidQueueConfigurationException.class)
			.isThrownBy(() -> SlotMap.assigned(Map.of("s1", " ")))
			.withMessage("pgqueue.shards.s1.slots gives shard 's1' no slot");
		assertThatExceptionOfType(InvalidQueueConfigurationException.class).isThrownBy(() -> SlotMap.spread(List.of()))
			.withMessage("pgqueue.shards names no shard");
		assertThatExceptionOfType(InvalidQueueConfigurationException.class)
			.isThrownBy(() -> SlotMap.spread(List.of("s1", "s2", "s1")))
			.withMessage("pgqueue.shards names a shard twice: [s1, s2, s1]");
	}

	private static double chiSquare(SlotMap map, List<String> keys) {
		Map<String, Integer> landed = new LinkedHashMap<>();
		keys.forEach((key) -> landed.merge(map.shardOf(key), 1, Integer::sum));
		double chiSquare = 0;
		for (Map.Entry<String, Integer> slots : map.slotCounts().entrySet()) {
			double expected = (double) keys.size() * slots.getValue() / SlotMap.SLOTS;
			double observed = landed.getOrDefault(slots.getKey(), 0);
			chiSquare += (observed - expected) * (observed - expected) / expected;
		}
		return chiSquare;
	}

	/** Keys of every shape, non-ASCII ones among them, the same in every process. */
	static List<String> sampleKeys(int count) {
		Random random = new Random(2026);
		String[] words = { "tenant", "Zürich", "東京", "ключ", "émile", "a", "" };
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			keys.add(words[random.nextInt(words.length)] + "-" + random.nextInt(1_000_000));
		}
		return keys;
	}

	/** Prints its default charset, then the slot of each sample key, one a line. */
	static final class SlotsOfSampleKeys {

		public static void main(String[] args) throws IOException {
			StringBuilder out = new StringBuilder(Charset.defaultCharset().name()).append('\n');
			for (String key : sampleKeys(Integer.parseInt(args[0]))) {
				out.append(SlotMap.slotOf(key)).append('\n');
			}
			System.out.write(out.toString().getBytes(StandardCharsets.US_ASCII));
			System.out.flush();
		}

	}

}
