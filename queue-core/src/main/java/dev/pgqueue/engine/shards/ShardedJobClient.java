package dev.pgqueue.engine.shards;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Function;

import javax.sql.DataSource;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobRequest;
import dev.pgqueue.ShardUnavailableException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The {@link JobClient} of queues spread over shards: each new job goes to one shard's own client,
 * chosen in this order.
 * <ol>
 * <li>The caller's transaction: an enqueue inside a transaction on a shard's {@link DataSource} lands
 * on that shard and commits or rolls back with it. A transaction on a DataSource that is no shard is
 * an error naming it, since the job could not join it; so is a keyed job whose key belongs to another
 * shard, since a key must never span shards.</li>
 * <li>The shard the request names ({@link JobRequest#shard}).</li>
 * <li>Its key: the shard key, else the concurrency key, else the bucket key, else the unique key, hashed to a slot whose shard holds every job
 * of that key ({@link SlotMap}); while that shard does not answer, the job is refused with a
 * {@link ShardUnavailableException} naming it, never sent elsewhere.</li>
 * <li>Otherwise the shards that are up, in turn ({@link ShardRouter}). With spilling on (off by
 * default), such a job that its shard fails to take as an unreachable server does (a connection
 * refused, a pool timing out) is tried on the next shard up, but only when it certainly did not
 * commit there ({@link #mayHaveCommitted}): a connection cut after the insert was sent can hide a job
 * that did commit, which a spill would enqueue a second time, so that failure goes to the caller.</li>
 * </ol>
 * {@link #enqueueAll} sends each shard its requests in one call, so it is atomic per shard, not
 * across shards: a failure on one shard leaves the others' jobs enqueued.
 */
final class ShardedJobClient implements JobClient {

	private static final Logger logger = LoggerFactory.getLogger(ShardedJobClient.class);

	private final Map<String, Shard> shards;

	private final SlotMap slots;

	private final ShardRouter router;

	private final ShardHealth health;

	private final boolean spillUnkeyed;

	private final Consumer<List<JobRequest>> checkCall;

	/**
	 * @param shards each shard's DataSource and client, in the shards' declared order, which
	 * {@code slots} spreads over
	 * @param health which shards answer now
	 * @param spillUnkeyed whether a job without a shard or key that its shard fails to take (a connection
	 * refused, a pool timing out) is tried on the next shard up, unless it may have committed where it failed
	 * @param checkCall checks an {@code enqueueAll} call as a whole (its size), before it is split
	 */
	ShardedJobClient(List<Shard> shards, SlotMap slots, ShardHealth health, boolean spillUnkeyed,
			Consumer<List<JobRequest>> checkCall) {
		Map<String, Shard> byName = new LinkedHashMap<>();
		shards.forEach((shard) -> byName.put(shard.name(), shard));
		if (!byName.keySet().equals(Set.copyOf(slots.shards()))) {
			throw new IllegalArgumentException("The shards " + byName.keySet() + " are not those the slot map spreads over "
					+ slots.shards());
		}
		this.shards = byName;
		this.slots = slots;
		this.router = new ShardRouter(slots);
		this.health = health;
		this.spillUnkeyed = spillUnkeyed;
		this.checkCall = checkCall;
	}

	@Override
	public UUID enqueue(JobRequest request) {
		Objects.requireNonNull(request, "request must not be null");
		String transaction = transactionShard();
		Health health = new Health();
		String shard = shardOf(request, transaction, health);
		if (transaction != null || !spills(request)) {
			return this.shards.get(shard).client().enqueue(request);
		}
		return spilling(shard, health, request.kind() + " job", (client) -> client.enqueue(request));
	}

	@Override
	public List<UUID> enqueueAll(List<JobRequest> requests) {
		Objects.requireNonNull(requests, "requests must not be null");
		this.checkCall.accept(requests);
		String transaction = transactionShard();
		Health health = new Health();
		Map<String, List<Integer>> positions = new LinkedHashMap<>();
		for (int i = 0; i < requests.size(); i++) {
			JobRequest request = Objects.requireNonNull(requests.get(i), "requests must not hold null");
			positions.computeIfAbsent(shardOf(request, transaction, health), (shard) -> new ArrayList<>()).add(i);
		}
		UUID[] ids = new UUID[requests.size()];
		positions.forEach((shard, indexes) -> {
			List<JobRequest> group = indexes.stream().map(requests::get).toList();
			List<UUID> enqueued = (transaction == null && group.stream().allMatch(this::spills))
					? spilling(shard, health, group.size() + " jobs", (client) -> client.enqueueAll(group))
					: this.shards.get(shard).client().enqueueAll(group);
			for (int k = 0; k < indexes.size(); k++) {
				ids[indexes.get(k)] = enqueued.get(k);
			}
		});
		return List.of(ids);
	}

	/** Whether a request may spill: spilling is on and nothing ties the job to one shard. */
	private boolean spills(JobRequest request) {
		return this.spillUnkeyed && request.shard() == null && keyOf(request) == null;
	}

	/**
	 * Enqueues on a shard, and while a shard fails as an unreachable server does, on the next shard up
	 * that has not been tried. Each spill is logged; when every shard up failed, the first failure is
	 * thrown with the others suppressed.
	 */
	private <T> T spilling(String first, Health health, String what, Function<JobClient, T> enqueue) {
		Set<String> tried = new LinkedHashSet<>();
		RuntimeException failure = null;
		String shard = first;
		while (shard != null) {
			tried.add(shard);
			try {
				return enqueue.apply(this.shards.get(shard).client());
			}
			catch (DataAccessResourceFailureException | TransientDataAccessException | CannotCreateTransactionException ex) {
				if (mayHaveCommitted(ex)) {
					logger.warn("pgqueue could not enqueue a {} on shard '{}' ({}), and did not spill it to another shard: "
							+ "the connection failed after the insert was sent, so it may have committed there", what, shard,
							ex.getMessage());
					if (failure != null) {
						ex.addSuppressed(failure);
					}
					throw ex;
				}
				String next = this.router.another(health.up(), tried);
				logger.warn("pgqueue could not enqueue a {} on shard '{}' ({}); {}", what, shard, ex.getMessage(),
						(next != null) ? "spilling it to shard '" + next + "' (pgqueue.sharding.spill-unkeyed)"
								: "no other shard is up to take it");
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
				shard = next;
			}
		}
		throw Objects.requireNonNull(failure);
	}

	/**
	 * Whether an enqueue that failed so may still have committed its jobs: true unless the failure
	 * happened before anything reached the server (no connection could be had, no transaction begun) or
	 * the server answered the statement with an error of its own, which ends the statement's
	 * transaction. A connection that broke after the insert was sent (SQLState class 08, or no SQLState
	 * at all, as an I/O failure has) leaves the outcome unknown: the server may have committed before
	 * its answer was lost.
	 */
	static boolean mayHaveCommitted(RuntimeException failure) {
		if (failure instanceof CannotGetJdbcConnectionException || failure instanceof CannotCreateTransactionException) {
			return false;
		}
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && sql.getSQLState() != null) {
				return sql.getSQLState().startsWith("08");
			}
		}
		return true;
	}

	private String shardOf(JobRequest request, @Nullable String transaction, Health health) {
		String key = keyOf(request);
		if (transaction == null) {
			String shard = this.router.route(request.shard(), key, health.up());
			String down = health.whyDown(shard);
			if (down != null) {
				throw new ShardUnavailableException(shard, "A '" + request.kind() + "' job "
						+ ((request.shard() != null) ? "names shard '" + shard + "'"
								: "with key '" + key + "' belongs on shard '" + shard + "'")
						+ ", which does not answer (" + down + "); the job was not enqueued, nor sent to another shard, "
						+ "since a key's jobs never span shards. Enqueue it again once shard '" + shard + "' is back.",
						null);
			}
			return shard;
		}
		if (request.shard() != null) {
			if (!request.shard().equals(transaction)) {
				throw new IllegalStateException("A '" + request.kind() + "' job names shard '" + request.shard()
						+ "', but the caller's transaction is on shard '" + transaction + "', which it would have to "
						+ "join. Enqueue it in a transaction on shard '" + request.shard() + "', or after this one commits.");
			}
			return transaction;
		}
		if (key != null && !this.slots.shardOf(key).equals(transaction)) {
			throw new IllegalStateException("A '" + request.kind() + "' job with key '" + key + "' belongs on shard '"
					+ this.slots.shardOf(key) + "', but the caller's transaction is on shard '" + transaction + "': "
					+ "a key's jobs never span shards. Enqueue it in a transaction on shard '" + this.slots.shardOf(key)
					+ "', or after this one commits.");
		}
		return transaction;
	}

	/**
	 * The key that chooses a job's shard: its shard key, else its concurrency key, else its bucket key,
	 * else its unique key, so that the jobs of a unique key meet on one shard, whose unique index holds
	 * them to one.
	 */
	static @Nullable String keyOf(JobRequest request) {
		if (request.shardKey() != null) {
			return request.shardKey();
		}
		if (request.concurrencyKey() != null) {
			return request.concurrencyKey();
		}
		return (request.bucketKey() != null) ? request.bucketKey() : request.uniqueKey();
	}

	/**
	 * The shard whose DataSource the caller's transaction holds, or {@code null} outside a transaction.
	 * @throws IllegalStateException when a transaction is active on none of the shards
	 */
	private @Nullable String transactionShard() {
		if (!TransactionSynchronizationManager.isActualTransactionActive()) {
			return null;
		}
		for (Shard shard : this.shards.values()) {
			if (TransactionSynchronizationManager.hasResource(shard.dataSource())) {
				return shard.name();
			}
		}
		List<Object> others = TransactionSynchronizationManager.getResourceMap()
			.keySet()
			.stream()
			.filter(DataSource.class::isInstance)
			.toList();
		throw new IllegalStateException("The caller's transaction is on " + (others.isEmpty() ? "no DataSource"
				: "DataSource " + others) + ", which is no shard (the shards are " + this.shards.keySet() + "): an "
				+ "enqueue joins its caller's transaction, and this one cannot. Enqueue in a transaction on a shard's "
				+ "DataSource, or outside any transaction.");
	}

	/** Which shards answer, read once for a call, so that one call's jobs see one state of the shards. */
	private final class Health {

		private final Map<String, @Nullable String> down = new LinkedHashMap<>();

		private final Set<String> up = new LinkedHashSet<>();

		Health() {
			for (String shard : ShardedJobClient.this.shards.keySet()) {
				String why = ShardedJobClient.this.health.whyDown(shard);
				if (why == null) {
					this.up.add(shard);
				}
				else {
					this.down.put(shard, why);
				}
			}
		}

		Set<String> up() {
			return this.up;
		}

		@Nullable String whyDown(String shard) {
			return this.down.get(shard);
		}

	}

	/**
	 * One shard as the client sees it.
	 * @param name its name under {@code pgqueue.shards}
	 * @param dataSource the DataSource its jobs table lives on, whose transactions an enqueue joins
	 * @param client the client that writes to its jobs table
	 */
	record Shard(String name, DataSource dataSource, JobClient client) {
	}

}
