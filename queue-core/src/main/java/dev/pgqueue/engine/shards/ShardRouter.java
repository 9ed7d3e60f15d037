package dev.pgqueue.engine.shards;

import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/**
 * Chooses the shard of a new job, in this order: the shard the request names; else the owner of its
 * key's slot, up or not, since a key must never span shards (its waiting jobs would run beside newer
 * ones elsewhere, and its limits would count apart); else the next shard that is up, round robin.
 * Following the caller's transaction comes before all of these and belongs to the client, which knows
 * the transaction's connection.
 */
final class ShardRouter {

	private final SlotMap slots;

	private final List<String> shards;

	private final AtomicInteger next = new AtomicInteger();

	ShardRouter(SlotMap slots) {
		this.slots = slots;
		this.shards = slots.shards();
	}

	/**
	 * The shard for a job.
	 * @param named the shard the request names, or {@code null}
	 * @param key the job's routing key (its shard key, else its concurrency key, else its bucket key), or
	 * {@code null}
	 * @param up the shards that answer now
	 * @throws IllegalArgumentException when the request names a shard that does not exist
	 * @throws IllegalStateException when a job without a shard or key finds no shard up
	 */
	String route(@Nullable String named, @Nullable String key, Set<String> up) {
		if (named != null) {
			if (!this.shards.contains(named)) {
				throw new IllegalArgumentException("The job names shard '" + named + "', which is not configured; "
						+ "the shards are " + this.shards + " (pgqueue.shards)");
			}
			return named;
		}
		if (key != null) {
			return this.slots.shardOf(key);
		}
		// Turns over the shards that are up, not over all of them: skipping a down shard by taking the
		// next one would give that one a double share.
		List<String> candidates = this.shards.stream().filter(up::contains).toList();
		if (!candidates.isEmpty()) {
			return candidates.get(Math.floorMod(this.next.getAndIncrement(), candidates.size()));
		}
		throw new IllegalStateException("No shard is up to take a job without a key; the shards are " + this.shards
				+ ". Enqueue again once one answers.");
	}

	/**
	 * The next shard up, in turn, that a job without a shard or key has not been tried on yet: where it
	 * spills once the shard it was routed to failed to take it.
	 * @param up the shards that answer now
	 * @param tried the shards the job failed on
	 * @return {@code null} when every shard up has been tried
	 */
	@Nullable String another(Set<String> up, Set<String> tried) {
		List<String> candidates = this.shards.stream().filter((shard) -> up.contains(shard) && !tried.contains(shard))
			.toList();
		return candidates.isEmpty() ? null
				: candidates.get(Math.floorMod(this.next.getAndIncrement(), candidates.size()));
	}

}
