package dev.pgqueue;

import java.util.List;
import java.util.Optional;
import java.util.UUID;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

/**
 * The shards the application's queues are spread over ({@code pgqueue.shards}), as a listener or an
 * operator needs them: their names, which answer, each one's DataSource, and the DataSource that follows
 * a job's transaction to its shard. A bean of the starter's; without shards it names none, and its
 * {@link #transactionDataSource()} is the queue's own DataSource.
 */
public interface QueueShards {

	/** The shards' names, in their declared order; none when the queues live on one database. */
	List<String> names();

	/**
	 * Why a shard counts as down now (its probes fail, or it has not joined since start-up), or
	 * {@code null} while it answers.
	 * @throws IllegalArgumentException when no shard has that name
	 */
	@Nullable String whyDown(String shard);

	/**
	 * The DataSource of one shard's jobs table: for a leased job's listener, which runs outside any
	 * transaction, to open one on its job's shard ({@code dataSource(job.shard())}).
	 * @throws IllegalArgumentException when no shard has that name
	 */
	DataSource dataSource(String shard);

	/**
	 * The DataSource a transactional job's listener writes through so that its writes commit or roll
	 * back with its job: over shards, one whose connections are those of the shard the caller's
	 * transaction is on (inside a transactional job, the batch's own connection; outside a transaction
	 * on a shard it refuses to connect, rather than pick a server); on one database, that database's.
	 */
	DataSource transactionDataSource();

	/** The shard every job of this key lives on; empty when the queues live on one database. */
	Optional<String> shardOfKey(String key);

	/** The shard a job's public id tells; empty on one database, or for an id that tells none. */
	Optional<String> shardOf(UUID id);

}
