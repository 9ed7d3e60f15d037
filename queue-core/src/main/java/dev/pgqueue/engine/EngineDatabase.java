package dev.pgqueue.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

import javax.sql.DataSource;

import dev.pgqueue.NotificationConnectionFactory;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.QueueMigrator;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * One database an engine runs on, as its {@link QueueEngineBuilder} is told it: the pool of
 * connections and what belongs to that database alone. An engine on one database has one, given
 * to {@link QueueEngine#builder(DataSource)}; an engine over shards has one per
 * {@link QueueEngineBuilder#shard shard}. What is not set here is the engine's: its schema, its
 * metrics, a JDBC template and a transaction manager on this pool.
 */
public final class EngineDatabase {

	final @Nullable String shard;

	final DataSource dataSource;

	@Nullable String slots;

	@Nullable SchemaName schema;

	@Nullable JdbcTemplate jdbcTemplate;

	@Nullable PlatformTransactionManager transactionManager;

	@Nullable NotificationConnectionFactory notificationConnections;

	@Nullable QueueMetrics metrics;

	@Nullable QueueMigrator migrator;

	final List<AutoCloseable> closeWith = new ArrayList<>();

	/** Set when the engine is built: the ids that tell this shard, or random ones. */
	Supplier<UUID> publicIds = UUID::randomUUID;

	/** Set when the engine is built: whether the recurring jobs live here (the first database). */
	boolean keepsSchedules = true;

	EngineDatabase(@Nullable String shard, DataSource dataSource) {
		this.shard = shard;
		this.dataSource = dataSource;
	}

	/**
	 * The slots of the key space this shard owns, as ranges ({@code "0-8191, 12000"}); unset on every
	 * shard to spread the slots over the shards in their declared order.
	 */
	public EngineDatabase slots(@Nullable String slots) {
		this.slots = slots;
		return this;
	}

	/** The schema of this database's tables, where it is not the engine's. */
	public EngineDatabase schema(@Nullable SchemaName schema) {
		this.schema = schema;
		return this;
	}

	/** Runs every statement on this database; one on its pool unless given. */
	public EngineDatabase jdbcTemplate(@Nullable JdbcTemplate jdbcTemplate) {
		this.jdbcTemplate = jdbcTemplate;
		return this;
	}

	/** The transactions of transactional queues and of limited claims on this database. */
	public EngineDatabase transactionManager(@Nullable PlatformTransactionManager transactionManager) {
		this.transactionManager = transactionManager;
		return this;
	}

	/**
	 * Opens the sessions the notification listener holds on this database; unless given, sessions of
	 * its own made after the pool's settings ({@link NotificationConnections}).
	 */
	public EngineDatabase notificationConnections(@Nullable NotificationConnectionFactory connections) {
		this.notificationConnections = connections;
		return this;
	}

	/** Where this database's meters go, where they are not the engine's (a shard's tagged meters). */
	public EngineDatabase metrics(@Nullable QueueMetrics metrics) {
		this.metrics = metrics;
		return this;
	}

	/**
	 * Migrates this database's tables when the engine is built, and, for a shard that does not answer
	 * then (see {@link QueueEngineBuilder#startWhileDown}), again until it does.
	 */
	public EngineDatabase migrator(@Nullable QueueMigrator migrator) {
		this.migrator = migrator;
		return this;
	}

	/** Closed after the engine is closed: a pool made for this database alone. */
	public EngineDatabase closeWith(AutoCloseable resource) {
		this.closeWith.add(resource);
		return this;
	}

	/** The shard's name; {@code null} for an engine on this one database. */
	public @Nullable String shard() {
		return this.shard;
	}

}
