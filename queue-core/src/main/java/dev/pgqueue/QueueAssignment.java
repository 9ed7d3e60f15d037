package dev.pgqueue;

/** How the instances that poll a queue divide its jobs between them. */
public enum QueueAssignment {

	/**
	 * Every instance claims from the whole queue with {@code FOR UPDATE SKIP LOCKED}; PostgreSQL is
	 * the only coordinator. Simple and self-healing; claims slow down as more pollers walk past each
	 * other's locked rows, most of all when many jobs fall due at the same instant.
	 */
	SHARED,

	/**
	 * Every job carries a bucket; a coordinator in PostgreSQL spreads the queue's buckets over the
	 * live instances, and each claims only from its own. Claims stop walking past other instances'
	 * rows, so throughput grows with the number of instances; the price is a heartbeat per instance
	 * and a short pause of a bucket's claims while it moves from one instance to another.
	 */
	BUCKETS

}
