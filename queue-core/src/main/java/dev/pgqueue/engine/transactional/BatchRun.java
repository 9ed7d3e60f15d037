package dev.pgqueue.engine.transactional;

/**
 * Claims and runs one batch of a transactional queue in one transaction, on a worker's thread:
 * {@link TransactionalBatchRunner} for most queues, one job prepared and committed in two phases for
 * queues with two-phase commit. Both follow {@link BatchFlow}.
 */
@FunctionalInterface
interface BatchRun {

	/**
	 * Claims and runs one batch.
	 * @param handOff told how many jobs the claim returned, as soon as it has, for the poll thread
	 * waiting on it
	 * @param stop whether shutdown has run out of time: the batch then leaves its remaining jobs
	 * untouched, and a job interrupted by it goes back without using an attempt
	 * @param batchSize most jobs the batch claims
	 * @return how many jobs the batch claimed
	 */
	int run(ClaimHandOff handOff, BatchStop stop, int batchSize);

}
