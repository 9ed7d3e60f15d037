package dev.pgqueue.engine.shards;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

import dev.pgqueue.InvalidQueueConfigurationException;

/**
 * Which shard holds a key's jobs. A key hashes to one of {@value #SLOTS} slots, and each slot belongs
 * to one shard, so all jobs of a key land on one server, where per-key limits and ordered keys stay
 * exact. The slot of a key never changes (it depends on the key's UTF-8 bytes alone, in every process
 * and release); only the owner of a slot can, and then only for the slots a new map gives away.
 *
 * <p>Two ways to give slots to shards: {@link #spread(List) spread} them over shards in their
 * declared order, or {@link #assigned(Map) assign} ranges explicitly. A spread map gives a shard added
 * at the end its share of slots from each shard before it and moves no slot between the others.
 */
final class SlotMap {

	/**
	 * How many slots keys hash to: fixed, since changing it would move almost every key. Enough that
	 * hundreds of shards each get a share within a percent or two of the others.
	 */
	static final int SLOTS = 16_384;

	private final List<String> shards;

	/** The owner of each slot, as an index into {@link #shards}. */
	private final short[] owners;

	private SlotMap(List<String> shards, short[] owners) {
		this.shards = List.copyOf(shards);
		this.owners = owners;
	}

	/**
	 * Spreads the slots evenly over the shards in the order given (jump consistent hashing of each
	 * slot): appending a shard moves about one slot in {@code n + 1} to it from every other, and none
	 * between the others. Removing or reordering shards moves far more: add shards at the end.
	 */
	static SlotMap spread(List<String> shards) {
		checkNames(shards);
		short[] owners = new short[SLOTS];
		for (int slot = 0; slot < SLOTS; slot++) {
			owners[slot] = (short) jump(mix(slot), shards.size());
		}
		return new SlotMap(shards, owners);
	}

	/**
	 * Gives each shard the slots written for it as ranges ({@code "0-8191, 12000"}, bounds included).
	 * Every slot must belong to exactly one shard.
	 * @param slotsByShard each shard's ranges, in the shards' declared order
	 * @throws InvalidQueueConfigurationException naming {@code pgqueue.shards.<name>.slots} when a range
	 * does not parse or lies outside the slots, when two shards claim a slot, or when a slot has no owner
	 */
	static SlotMap assigned(Map<String, String> slotsByShard) {
		List<String> shards = new ArrayList<>(slotsByShard.keySet());
		checkNames(shards);
		short[] owners = new short[SLOTS];
		BitSet owned = new BitSet(SLOTS);
		Map<String, BitSet> parsed = new LinkedHashMap<>();
		slotsByShard.forEach((shard, ranges) -> parsed.put(shard, parse(shard, ranges)));
		for (int index = 0; index < shards.size(); index++) {
			String shard = shards.get(index);
			BitSet slots = parsed.get(shard);
			BitSet overlap = (BitSet) slots.clone();
			overlap.and(owned);
			if (!overlap.isEmpty()) {
				int first = overlap.nextSetBit(0);
				throw new InvalidQueueConfigurationException(key(shard), key(shard) + " gives slot " + first
						+ " (and " + (overlap.cardinality() - 1) + " more) to shard '" + shard + "', which shard '"
						+ shards.get(owners[first]) + "' already holds",
						"Give each slot to one shard: remove the overlap from one of the two ranges.");
			}
			owned.or(slots);
			for (int slot = slots.nextSetBit(0); slot >= 0; slot = slots.nextSetBit(slot + 1)) {
				owners[slot] = (short) index;
			}
		}
		if (owned.cardinality() < SLOTS) {
			int first = owned.nextClearBit(0);
			int last = first;
			while (last + 1 < SLOTS && !owned.get(last + 1)) {
				last++;
			}
			throw new InvalidQueueConfigurationException("pgqueue.shards", "pgqueue.shards.*.slots leave "
					+ (SLOTS - owned.cardinality()) + " of the " + SLOTS + " slots without a shard, first "
					+ ((first == last) ? "slot " + first : "slots " + first + "-" + last),
					"Give every slot from 0 to " + (SLOTS - 1) + " to a shard, or write slots for no shard "
							+ "to spread them evenly.");
		}
		return new SlotMap(shards, owners);
	}

	/** The slot of a key, the same in every process. */
	static int slotOf(String key) {
		CRC32C crc = new CRC32C();
		crc.update(key.getBytes(StandardCharsets.UTF_8));
		// CRC is linear: keys differing in one character land on slots a fixed pattern apart, so its
		// bits are mixed before the low ones are taken.
		return fmix((int) crc.getValue()) & (SLOTS - 1);
	}

	/** The shard that holds a key's jobs. */
	String shardOf(String key) {
		return shardOfSlot(slotOf(key));
	}

	/** The shard that holds a slot. */
	String shardOfSlot(int slot) {
		return this.shards.get(this.owners[slot]);
	}

	/** The shards, in their declared order. */
	List<String> shards() {
		return this.shards;
	}

	/** How many slots each shard holds, in the shards' order. */
	Map<String, Integer> slotCounts() {
		int[] counts = new int[this.shards.size()];
		for (short owner : this.owners) {
			counts[owner]++;
		}
		Map<String, Integer> result = new LinkedHashMap<>();
		for (int index = 0; index < counts.length; index++) {
			result.put(this.shards.get(index), counts[index]);
		}
		return result;
	}

	/** The slots whose shard differs in {@code next}: the keys whose new jobs would land elsewhere. */
	BitSet movedIn(SlotMap next) {
		BitSet moved = new BitSet(SLOTS);
		for (int slot = 0; slot < SLOTS; slot++) {
			if (!shardOfSlot(slot).equals(next.shardOfSlot(slot))) {
				moved.set(slot);
			}
		}
		return moved;
	}

	private static BitSet parse(String shard, String ranges) {
		BitSet slots = new BitSet(SLOTS);
		for (String part : ranges.split(",")) {
			String range = part.strip();
			if (range.isEmpty()) {
				continue;
			}
			int dash = range.indexOf('-', 1);
			int from;
			int to;
			try {
				from = Integer.parseInt(((dash < 0) ? range : range.substring(0, dash)).strip());
				to = (dash < 0) ? from : Integer.parseInt(range.substring(dash + 1).strip());
			}
			catch (NumberFormatException ex) {
				throw new InvalidQueueConfigurationException(key(shard), key(shard) + " has '" + range
						+ "', which is neither a slot nor a range of slots",
						"Write slots as numbers and ranges separated by commas, for example 0-8191, 12000.");
			}
			if (from < 0 || to >= SLOTS || from > to) {
				throw new InvalidQueueConfigurationException(key(shard), key(shard) + " has '" + range
						+ "', outside the slots 0-" + (SLOTS - 1) + " or running backwards",
						"Write ranges low-high within 0-" + (SLOTS - 1) + ".");
			}
			slots.set(from, to + 1);
		}
		if (slots.isEmpty()) {
			throw new InvalidQueueConfigurationException(key(shard), key(shard) + " gives shard '" + shard
					+ "' no slot", "Give it at least one slot, or write slots for no shard to spread them evenly.");
		}
		return slots;
	}

	private static void checkNames(List<String> shards) {
		if (shards.isEmpty()) {
			throw new InvalidQueueConfigurationException("pgqueue.shards", "pgqueue.shards names no shard",
					"Name at least one shard, or leave pgqueue.shards out to use the one DataSource.");
		}
		if (new HashSet<>(shards).size() < shards.size()) {
			throw new InvalidQueueConfigurationException("pgqueue.shards", "pgqueue.shards names a shard twice: " + shards,
					"Name each shard once.");
		}
		if (shards.size() > Short.MAX_VALUE) {
			throw new InvalidQueueConfigurationException("pgqueue.shards", "pgqueue.shards names " + shards.size()
					+ " shards, more than " + Short.MAX_VALUE, "Name fewer shards.");
		}
	}

	private static String key(String shard) {
		return "pgqueue.shards." + shard + ".slots";
	}

	/**
	 * Jump consistent hashing (Lamping and Veach, 2014): the bucket in {@code [0, buckets)} of a key,
	 * such that growing {@code buckets} by one moves a key only into the new bucket.
	 */
	private static int jump(long key, int buckets) {
		long bucket = -1;
		long next = 0;
		long state = key;
		while (next < buckets) {
			bucket = next;
			state = state * 2862933555777941757L + 1;
			next = (long) ((bucket + 1) * ((double) (1L << 31) / (double) ((state >>> 33) + 1)));
		}
		return (int) bucket;
	}

	/** Spreads the bits of a slot number before jump hashing, whose generator wants varied seeds. */
	private static long mix(long value) {
		long h = value + 0x9E3779B97F4A7C15L;
		h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
		h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
		return h ^ (h >>> 31);
	}

	/** The finalizer of MurmurHash3's 32-bit hash: every input bit reaches every output bit. */
	private static int fmix(int value) {
		int h = value;
		h ^= h >>> 16;
		h *= 0x85EBCA6B;
		h ^= h >>> 13;
		h *= 0xC2B2AE35;
		h ^= h >>> 16;
		return h;
	}

}
