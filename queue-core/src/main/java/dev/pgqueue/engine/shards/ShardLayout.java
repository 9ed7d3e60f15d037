package dev.pgqueue.engine.shards;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import javax.sql.DataSource;

import dev.pgqueue.InvalidQueueConfigurationException;
import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import org.jspecify.annotations.Nullable;

/**
 * The shards queues are spread over, as the rest of the application sees them: their names in
 * declared order, which shard a key's jobs live on, the public ids that tell each job's shard, the
 * {@link JobClient} that routes each new job to its shard, and the DataSource that follows the
 * caller's transaction to its shard.
 */
public final class ShardLayout {

	private final SlotMap slots;

	private final ShardIds ids;

	private ShardLayout(SlotMap slots) {
		this.slots = slots;
		this.ids = new ShardIds(slots.shards());
	}

	/**
	 * The layout of these shards, in their declared order.
	 * @param slotsByShard each shard's slots as ranges ({@code "0-8191, 12000"}), or {@code null} for
	 * every shard to spread the slots over the shards in their order
	 * @throws InvalidQueueConfigurationException naming {@code pgqueue.shards} when there are none, when
	 * some shards give their slots and others do not, or when the slots given are not each owned by one
	 * shard
	 */
	public static ShardLayout of(Map<String, @Nullable String> slotsByShard) {
		if (slotsByShard.isEmpty()) {
			throw new InvalidQueueConfigurationException("pgqueue.shards", "pgqueue.shards names no shard",
					"Configure at least one shard under pgqueue.shards.<name>.");
		}
		List<String> given = new ArrayList<>();
		List<String> spread = new ArrayList<>();
		slotsByShard.forEach((shard, slots) -> ((slots != null && !slots.isBlank()) ? given : spread).add(shard));
		if (given.isEmpty()) {
			return new ShardLayout(SlotMap.spread(List.copyOf(slotsByShard.keySet())));
		}
		if (!spread.isEmpty()) {
			String key = "pgqueue.shards." + spread.get(0) + ".slots";
			throw new InvalidQueueConfigurationException(key, "pgqueue.shards." + given.get(0) + ".slots is set but "
					+ key + " is not", "Give every shard its slots, or none, to spread them over the shards in "
							+ "their declared order.");
		}
		Map<String, String> assigned = new LinkedHashMap<>();
		slotsByShard.forEach((shard, slots) -> assigned.put(shard, slots));
		return new ShardLayout(SlotMap.assigned(assigned));
	}

	/** The shards' names, in their declared order. */
	public List<String> shards() {
		return this.slots.shards();
	}

	/** The shard every job of this key lives on. */
	public String shardOfKey(String key) {
		return this.slots.shardOf(key);
	}

	/** How many of the fixed number of slots each shard owns, in declared order. */
	public Map<String, Integer> slotCounts() {
		return this.slots.slotCounts();
	}

	/** Makes the public ids of a shard's new jobs, each telling the shard. */
	public Supplier<UUID> ids(String shard) {
		if (!shards().contains(shard)) {
			throw new IllegalArgumentException("No shard '" + shard + "'; the shards are " + shards());
		}
		return () -> this.ids.newId(shard);
	}

	/** The shard a job's public id tells, if it tells one of these shards. */
	public Optional<String> shardOf(UUID id) {
		return this.ids.shardOf(id);
	}

	/**
	 * The client that routes each new job to its shard's client: the caller's transaction's shard, else
	 * the shard the request names, else its key's, else the shards up in turn (see
	 * {@link ShardedJobClient}).
	 * @param dataSource each shard's DataSource, whose transactions its client's enqueues join
	 * @param client each shard's own client
	 * @param health which shards answer now; a keyed job for a shard it reports down is refused
	 * @param spillUnkeyed whether a job without a shard or key that its shard fails to take (a connection
	 * refused, a pool timing out) is tried on the next shard up, unless it may have committed where it
	 * failed
	 * @param checkCall checks an {@code enqueueAll} call as a whole (its size), before its jobs are split over
	 * the shards
	 */
	public JobClient client(Function<String, DataSource> dataSource, Function<String, JobClient> client,
			ShardWatch health, boolean spillUnkeyed, Consumer<List<JobRequest>> checkCall) {
		List<ShardedJobClient.Shard> members = shards().stream()
			.map((shard) -> new ShardedJobClient.Shard(shard, dataSource.apply(shard), client.apply(shard)))
			.toList();
		return new ShardedJobClient(members, this.slots, health, spillUnkeyed, checkCall);
	}

	/**
	 * A DataSource whose connections are those of the shard the caller's transaction is on: inside a
	 * transactional job, the batch's own connection, so a listener's JDBC work commits or rolls back
	 * with its job on its job's shard. Outside a transaction on a shard it refuses to choose.
	 * @param dataSource each shard's DataSource
	 */
	public DataSource transactionDataSource(Function<String, DataSource> dataSource) {
		Map<String, DataSource> byShard = new LinkedHashMap<>();
		shards().forEach((shard) -> byShard.put(shard, dataSource.apply(shard)));
		return new TransactionShardDataSource(byShard);
	}

}
