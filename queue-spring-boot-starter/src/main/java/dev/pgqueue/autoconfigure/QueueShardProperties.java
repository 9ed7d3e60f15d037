package dev.pgqueue.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * One shard under {@code pgqueue.shards.<name>}: a PostgreSQL database holding a complete pgqueue
 * install (its jobs table and everything beside it), reached through a DataSource bean or a pool
 * pgqueue creates from connection settings.
 */
public class QueueShardProperties {

	/**
	 * Name of the DataSource bean the shard's jobs table is on. Leave unset to give url, username and
	 * password instead, for a pool pgqueue creates and closes.
	 */
	private @Nullable String dataSource;

	/**
	 * JDBC URL of the shard's database, for a pool pgqueue creates (HikariCP); unused with data-source.
	 */
	private @Nullable String url;

	/** User of the pool pgqueue creates. */
	private @Nullable String username;

	/** Password of the pool pgqueue creates. */
	private @Nullable String password;

	/**
	 * Largest number of connections of the pool pgqueue creates: each queue's pollers and workers
	 * need theirs on every shard.
	 */
	private int maximumPoolSize = 10;

	/**
	 * Longest wait for a connection of the pool pgqueue creates. An enqueue under way when its shard
	 * stops fails after it; once the shard is known down (within a second), enqueues to it fail at once.
	 */
	private Duration connectionTimeout = Duration.ofSeconds(30);

	/**
	 * Schema of the shard's jobs table; pgqueue.schema.name when unset. Migrated like the single
	 * table's when pgqueue.schema.migrate is on.
	 */
	private @Nullable String schema;

	/**
	 * Slots of the fixed 16384 that this shard owns, as ranges such as "0-8191, 12000"; a key's jobs
	 * live on the owner of its slot. Give every shard its slots or none, to spread them over the
	 * shards in the order they are declared.
	 */
	private @Nullable String slots;

	public @Nullable String getDataSource() {
		return this.dataSource;
	}

	public void setDataSource(@Nullable String dataSource) {
		this.dataSource = dataSource;
	}

	public @Nullable String getUrl() {
		return this.url;
	}

	public void setUrl(@Nullable String url) {
		this.url = url;
	}

	public @Nullable String getUsername() {
		return this.username;
	}

	public void setUsername(@Nullable String username) {
		this.username = username;
	}

	public @Nullable String getPassword() {
		return this.password;
	}

	public void setPassword(@Nullable String password) {
		this.password = password;
	}

	public int getMaximumPoolSize() {
		return this.maximumPoolSize;
	}

	public void setMaximumPoolSize(int maximumPoolSize) {
		this.maximumPoolSize = maximumPoolSize;
	}

	public Duration getConnectionTimeout() {
		return this.connectionTimeout;
	}

	public void setConnectionTimeout(Duration connectionTimeout) {
		this.connectionTimeout = connectionTimeout;
	}

	public @Nullable String getSchema() {
		return this.schema;
	}

	public void setSchema(@Nullable String schema) {
		this.schema = schema;
	}

	public @Nullable String getSlots() {
		return this.slots;
	}

	public void setSlots(@Nullable String slots) {
		this.slots = slots;
	}

}
