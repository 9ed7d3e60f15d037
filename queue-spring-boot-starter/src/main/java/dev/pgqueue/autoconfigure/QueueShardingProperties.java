package dev.pgqueue.autoconfigure;

/** How pgqueue runs over the shards of pgqueue.shards. */
public class QueueShardingProperties {

	/**
	 * Whether a job without a shard or key (shard, concurrency, bucket or unique key) that its shard
	 * fails to take, as an unreachable server fails (connection refused or cut, pool timed out), is
	 * tried on the next shard that answers. Off by default: a connection cut while a commit is
	 * acknowledged hides a job that did commit, which spilling would enqueue a second time.
	 */
	private boolean spillUnkeyed;

	public boolean isSpillUnkeyed() {
		return this.spillUnkeyed;
	}

	public void setSpillUnkeyed(boolean spillUnkeyed) {
		this.spillUnkeyed = spillUnkeyed;
	}

	/**
	 * Whether the application starts while some shards do not answer (at least one must): each
	 * such shard counts as down, its keyed jobs refused, until it answers, is migrated and its
	 * pollers start. Off by default: start-up then fails naming the shard, so that a wrong URL
	 * cannot pass for an outage.
	 */
	private boolean startWhileDown;

	public boolean isStartWhileDown() {
		return this.startWhileDown;
	}

	public void setStartWhileDown(boolean startWhileDown) {
		this.startWhileDown = startWhileDown;
	}

}
