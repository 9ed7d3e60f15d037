package dev.pgqueue;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.TransientDataAccessResourceException;

/**
 * A job's shard does not answer, so the job was not enqueued: a keyed job (or one naming its shard)
 * is never sent to another shard instead, since a key's jobs must stay on one server. Transient: enqueue
 * again once the shard is back.
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
