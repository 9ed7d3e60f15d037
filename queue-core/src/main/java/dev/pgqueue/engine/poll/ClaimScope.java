package dev.pgqueue.engine.poll;

import java.util.List;
import java.util.function.Function;

import dev.pgqueue.engine.job.ClaimStart;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.service.EngineService;

/**
 * Which part of its queue a poller's claims read: the whole queue from {@link ClaimFloor floors}
 * (shared assignment), or the buckets a coordinator gave this instance (bucket assignment). The
 * claim strategies (one per mode) ask the scope where each claim starts, so every mode works with
 * every assignment.
 */
public interface ClaimScope {

	/**
	 * Runs one claim from where the next claim starts.
	 * @param claim the claim statement, given where to start
	 * @return the jobs claimed
	 */
	List<ClaimedJob> claim(Function<ClaimStart, List<ClaimedJob>> claim);

	/**
	 * Runs one claim of at most {@code limit} jobs from where the next claim starts; a scope may
	 * start the next claim differently after one that came back full.
	 * @param limit most jobs the claim takes
	 * @param claim the claim statement, given where to start
	 * @return the jobs claimed
	 */
	default List<ClaimedJob> claim(int limit, Function<ClaimStart, List<ClaimedJob>> claim) {
		return claim(claim);
	}

	/**
	 * The poller starts: returns the services the scope needs while the poller runs (a coordinator),
	 * which wake the poller through {@code signals}. The poller starts them before its strategy's
	 * services, and stops them after those, once it has stopped claiming and every worker has
	 * finished.
	 */
	default List<EngineService> prepare(PollSignals signals) {
		return List.of();
	}

}
