package dev.pgqueue.engine.shards;

import org.jspecify.annotations.Nullable;

/** Whether a shard answers now, as the client routing new jobs needs to know. */
@FunctionalInterface
interface ShardHealth {

	/** Why the shard counts as down now, or {@code null} while it answers. */
	@Nullable String whyDown(String shard);

}
