package dev.pgqueue.engine.transactional;

import java.util.function.IntConsumer;

/**
 * Claims and runs one batch of a transactional queue in one transaction: {@link TransactionalBatchRunner}
 * for most queues, one job prepared and committed in two phases for queues with two-phase commit.
 */
@FunctionalInterface
public interface BatchRun {

	/**
	 * Claims and runs one batch.
	 * @param onClaimed told how many jobs the claim returned, as soon as it has
	 */
	void run(IntConsumer onClaimed);

}
