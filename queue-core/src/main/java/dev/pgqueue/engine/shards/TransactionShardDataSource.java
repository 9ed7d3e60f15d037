package dev.pgqueue.engine.shards;

import java.util.LinkedHashMap;
import java.util.Map;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Routes each connection to the shard whose DataSource the caller's transaction holds, and hands out
 * that transaction's own connection: a transactional job's listener that writes through it joins the
 * batch that claimed its job, on its job's shard. Where no transaction holds a shard's connection,
 * there is no shard to choose, and it says so rather than pick one.
 */
final class TransactionShardDataSource extends AbstractRoutingDataSource {

	private final Map<String, DataSource> shards;

	TransactionShardDataSource(Map<String, DataSource> shards) {
		this.shards = Map.copyOf(shards);
		Map<Object, Object> targets = new LinkedHashMap<>();
		// The proxy makes getConnection() return the connection the shard's transaction holds.
		shards.forEach((shard, dataSource) -> targets.put(shard, new TransactionAwareDataSourceProxy(dataSource)));
		setTargetDataSources(targets);
		setLenientFallback(false);
		afterPropertiesSet();
	}

	@Override
	protected Object determineCurrentLookupKey() {
		for (Map.Entry<String, DataSource> shard : this.shards.entrySet()) {
			if (TransactionSynchronizationManager.hasResource(shard.getValue())) {
				return shard.getKey();
			}
		}
		throw new IllegalStateException("No transaction on a shard's DataSource is active on this thread, so there is "
				+ "no shard to connect to (the shards are " + this.shards.keySet() + "). Use this DataSource inside a "
				+ "transactional job's listener, or inside a transaction on one shard's DataSource.");
	}

}
