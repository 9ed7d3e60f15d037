package dev.pgqueue.engine.shards;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.zip.CRC32C;

import dev.pgqueue.InvalidQueueConfigurationException;

/**
 * Public ids that tell which shard holds their job, so that finding a job by id asks one server. An
 * id is a random (version 4) UUID whose 14 clock-sequence bits carry a tag of its shard's name; the
 * other 108 bits stay random, so ids remain unguessable. The tag follows the name, not the slot map
 * nor the shards' order, so an id keeps pointing at its shard when slots move or shards are added.
 *
 * <p>An id made before shards were configured carries a random tag: {@link #shardOf} may then name a
 * shard that does not hold it, and a caller that finds nothing there asks the others.
 */
final class ShardIds {

	/** Bits of the tag: the clock sequence's, after the variant's two. */
	private static final int TAG_BITS = 14;

	private static final int TAG_SHIFT = 48;

	private static final long TAG_MASK = ((1L << TAG_BITS) - 1) << TAG_SHIFT;

	private final Map<Integer, String> shardsByTag = new HashMap<>();

	private final Map<String, Integer> tagsByShard = new HashMap<>();

	/**
	 * @throws InvalidQueueConfigurationException when two shards' names give the same tag, naming both
	 */
	ShardIds(List<String> shards) {
		for (String shard : shards) {
			int tag = tagOf(shard);
			String other = this.shardsByTag.putIfAbsent(tag, shard);
			if (other != null && !other.equals(shard)) {
				throw new InvalidQueueConfigurationException("pgqueue.shards." + shard, "Shards '" + other + "' and '"
						+ shard + "' share the tag " + tag + " that public ids carry, so an id could not tell them apart",
						"Rename one of the two shards (a name is all the tag depends on).");
			}
			this.tagsByShard.put(shard, tag);
		}
	}

	/** A new public id for a job that lands on {@code shard}. */
	UUID newId(String shard) {
		Integer tag = this.tagsByShard.get(shard);
		if (tag == null) {
			throw new IllegalArgumentException("No shard is named '" + shard + "'; the shards are "
					+ this.tagsByShard.keySet());
		}
		UUID random = UUID.randomUUID();
		return new UUID(random.getMostSignificantBits(),
				(random.getLeastSignificantBits() & ~TAG_MASK) | ((long) tag << TAG_SHIFT));
	}

	/** The shard whose tag an id carries, if any shard has it. */
	Optional<String> shardOf(UUID id) {
		return Optional.ofNullable(this.shardsByTag.get(tagOf(id)));
	}

	static int tagOf(UUID id) {
		return (int) ((id.getLeastSignificantBits() & TAG_MASK) >>> TAG_SHIFT);
	}

	static int tagOf(String shard) {
		CRC32C crc = new CRC32C();
		crc.update(shard.getBytes(StandardCharsets.UTF_8));
		return (int) (crc.getValue() & ((1 << TAG_BITS) - 1));
	}

}
