package dev.pgqueue.engine.limits;

import java.util.List;

import dev.pgqueue.engine.job.ClaimedJob;
import dev.pgqueue.engine.settings.RateLimit;
import org.jspecify.annotations.Nullable;

/**
 * The units of a queue's own rate limit that the jobs of its claims use, where claims reserve a number
 * of starts rather than choose their jobs: each job its own weight ({@code JobRequest.rateWeight}),
 * at most the whole limit, else one.
 *
 * <p>A claim runs the jobs whose weights the units granted carry, in claim order, and stops at the
 * first that does not fit; the next reservation asks for at least that job's weight, so that a heavy
 * job keeps its place. Reservations follow the units a job has used over recent claims, so that claims
 * of weighted jobs neither leave most of them out nor reserve units they cannot use; while no job
 * carries a weight that is exactly one, and claims reserve as if weights did not exist.
 */
final class QueueUnits {

	private final String queue;

	private final @Nullable RateLimit limit;

	/**
	 * The units the first job left out of the last claim needs: the next reservation asks for at least
	 * that many, so that a heavy job is not left out for ever by claims too small to carry it; 0 when
	 * none was left out.
	 */
	private volatile int needed;

	/** The units a claimed job has used, as a moving average over recent claims; 1 without weights. */
	private volatile double perJob = 1;

	QueueUnits(String queue, @Nullable RateLimit limit) {
		this.queue = queue;
		this.limit = limit;
	}

	/** The units a job has used, on average over recent claims. */
	double perJob() {
		return this.perJob;
	}

	/** The units to reserve for a claim of up to {@code wanted} jobs. */
	int toReserve(int wanted, double perJob) {
		int starts = (this.limit != null) ? this.limit.starts() : Integer.MAX_VALUE;
		return Math.max(this.needed, Math.max(wanted, (int) Math.min(starts, Math.ceil(wanted * perJob))));
	}

	/** How many jobs a claim may take with {@code take} units granted: as many as they carry, at most wanted. */
	static int jobsCarried(int take, int wanted, double perJob) {
		return Math.min(wanted, Math.max(1, (int) (take / perJob)));
	}

	/** Whether {@code take} units are too few for the job the last claim left out. */
	boolean tooFewForNext(int take) {
		return take < this.needed;
	}

	/** Whether the last claim left a job out for want of units. */
	boolean waiting() {
		return this.needed > 0;
	}

	/** The first of {@code jobs} whose weights fit in {@code units}, in claim order, up to the first that does not. */
	List<ClaimedJob> fit(int units, List<ClaimedJob> jobs) {
		if (!jobs.isEmpty()) {
			double average = 0.75 * this.perJob + 0.25 * ((double) of(jobs) / jobs.size());
			// Back to exactly one once weighted jobs are gone, so that unweighted claims reserve as before.
			this.perJob = (average < 1.01) ? 1 : average;
		}
		int used = 0;
		for (int i = 0; i < jobs.size(); i++) {
			int weight = weightOf(jobs.get(i));
			if (used + weight > units) {
				this.needed = weight;
				return List.copyOf(jobs.subList(0, i));
			}
			used += weight;
		}
		this.needed = 0;
		return jobs;
	}

	/** The units the jobs use together. */
	int of(List<ClaimedJob> jobs) {
		int units = 0;
		for (ClaimedJob job : jobs) {
			units += weightOf(job);
		}
		return units;
	}

	/** The units a job uses: its own weight, at most the whole limit; else one. */
	private int weightOf(ClaimedJob job) {
		Integer weight = job.rateWeight();
		RateLimit rate = this.limit;
		if (weight == null || weight <= 1 || rate == null) {
			return 1;
		}
		if (weight > rate.starts()) {
			RatePlanner.warnOverweight(this.queue, job.job().kind(), job.job().id(), weight, "queue", rate.starts());
			return rate.starts();
		}
		return weight;
	}

}
