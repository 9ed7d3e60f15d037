package dev.pgqueue;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.TransientDataAccessResourceException;

/**
 * A shard does not answer, so it was not asked. On enqueue: the job was not enqueued, since a keyed job
 * (or one naming its shard) is never sent to another shard instead, a key's jobs having to stay on one
 * server; enqueue again once the shard is back. On an administrative operation: the shard was not asked
 * (its pool would have waited for its connection timeout); repeat it once the shard is back.
 * Transient either way.
 */
public class ShardUnavailableException extends TransientDataAccessResourceException {

	private static final long serialVersionUID = 1L;

	private final String shard;

	public ShardUnavailableException(String shard, String message, @Nullable Throwable cause) {
		super(message, cause);
		this.shard = shard;
	}

	/** The shard that does not answer, as named under {@code pgqueue.shards}. */
	public String shard() {
		return this.shard;
	}

}
