package dev.pgqueue.engine.limits;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.pgqueue.engine.job.ClaimStart;
import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.sql.RateRepository.Grant;
import org.jspecify.annotations.Nullable;

/**
 * What a claim may take under a queue's rate limits ({@link RateGate#reserve}).
 * @param granted how many jobs the claim may start
 * @param units the units of the queue's limit granted, which the jobs' weights may use; equal to
 * {@code granted} unless a heavy job needs more
 * @param grant the database's grant, or {@code null} without a limit or when the jobs were chosen
 * @param plan the jobs chosen by limits that depend on the job, and their grants; {@code null} without
 */
public record RatePermit(int granted, int units, @Nullable Grant grant, RatePlanner.@Nullable Plan plan) {

	/** The start instant of the jobs claimed under this permit, or {@code null} without a limit. */
	public @Nullable Instant startedAt() {
		if (this.plan != null) {
			return this.plan.startedAt();
		}
		return (this.grant != null) ? this.grant.grantedAt() : null;
	}

	/** The only jobs the claim may take, in claim order, or {@code null} to let it read the queue. */
	public @Nullable List<Long> chosen() {
		return (this.plan != null) ? this.plan.chosen() : null;
	}

	/** Where a claim under this permit starts: {@code from}, with the grant's instant and chosen jobs. */
	public ClaimStart applyTo(ClaimStart from) {
		return (this.plan == null && this.grant == null) ? from : from.granted(startedAt(), chosen());
	}

	/**
	 * The jobs claimed under this permit, with the grant's instant as their claim instant: the start
	 * their attempts record, where the window counted them. Without a limit, the jobs as they are.
	 */
	public List<ClaimedJob> stamped(List<ClaimedJob> jobs) {
		Instant startedAt = startedAt();
		if (startedAt == null || jobs.isEmpty()) {
			return jobs;
		}
		List<ClaimedJob> stamped = new ArrayList<>(jobs.size());
		for (ClaimedJob job : jobs) {
			stamped.add(new ClaimedJob(job.id(), job.attempt(), job.job(), startedAt, job.traceContext(),
					job.snoozes(), job.rateWeight()));
		}
		return stamped;
	}

}
