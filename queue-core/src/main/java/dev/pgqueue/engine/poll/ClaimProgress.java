package dev.pgqueue.engine.poll;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.metrics.PollCycleAssessment;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.engine.job.ClaimedJob;
import org.jspecify.annotations.Nullable;

/**
 * What one queue's claims achieve, recorded by every claim of either mode: how long the claim took
 * (the poll cycle, kept in a {@link PollCycleWindow} for its p99), how many jobs it took, how many of
 * them were claimed past the queue's SLA, and, when it came back short, whether it had stepped over
 * due jobs that other transactions held.
 *
 * <p>Recording a claim costs a few atomic operations and a pass over the claimed jobs when the queue
 * has an SLA; it allocates nothing while claims come back full. After a short claim it hands one
 * statement to a background thread ({@link #claimed}), so that the check never runs inside a
 * transactional batch (where a failed statement would abort the batch) nor holds up a poll loop, and
 * spaces those checks out (at most one a second per queue and instance).
 */
public final class ClaimProgress {

	private final String queue;

	private final @Nullable Duration sla;

	private final long slaSeconds;

	private final int slaNanos;

	private final Duration slaWindow;

	private final JobRepository repository;

	private final QueueMetrics metrics;

	private final @Nullable Executor checks;

	private final PollCycleWindow pollCycles = new PollCycleWindow();

	/** Shortest time from the end of one check of a short claim to the start of the next. */
	public static final Duration CHECK_INTERVAL = Duration.ofSeconds(1);

	/** The next check waits at least this many times as long as the last one took. */
	public static final int CHECK_SPACING = 50;

	/** Longest time between two checks, however long they take. */
	public static final Duration MAX_CHECK_INTERVAL = Duration.ofSeconds(30);

	/** Whether a check of a short claim is under way: one at a time per queue. */
	private final AtomicBoolean checking = new AtomicBoolean();

	/** When, on {@link System#nanoTime()}, the next check may start. */
	private volatile long nextCheckAt = System.nanoTime();

	private final AtomicLong checkedClaims = new AtomicLong();

	private final LongAdder slaMissed = new LongAdder();

	private final LongAdder jobsClaimed = new LongAdder();

	private final LongAdder unproductiveClaims = new LongAdder();

	private volatile long lastSlaMissNanos;

	/**
	 * @param sla how long after its run-at a job should be claimed, or {@code null}
	 * @param slaWindow how long the queue counts as slipping after a job missed its SLA
	 * @param checks runs the checks of short claims; {@code null} for none
	 */
	ClaimProgress(String queue, @Nullable Duration sla, Duration slaWindow, JobRepository repository,
			QueueMetrics metrics, @Nullable Executor checks) {
		this.queue = queue;
		this.sla = sla;
		this.slaSeconds = (sla != null) ? sla.getSeconds() : 0;
		this.slaNanos = (sla != null) ? sla.getNano() : 0;
		this.slaWindow = slaWindow;
		this.repository = repository;
		this.metrics = metrics;
		this.checks = checks;
	}

	/**
	 * Records a claim that asked for {@code asked} jobs of {@code kinds} and returned {@code jobs}.
	 * @param startNanos when it started, on {@link System#nanoTime()}
	 * @param tookNanos how long it took
	 */
	public void claimed(String[] kinds, int asked, List<ClaimedJob> jobs, long startNanos, long tookNanos) {
		claimed(kinds, asked, jobs, startNanos, tookNanos, Set.of());
	}

	/**
	 * Records a claim as {@link #claimed(String[], int, List, long, long)} does, for a poller whose
	 * other open transactions hold {@code heldHere}: jobs running here, which a short claim that steps
	 * over them has not lost to contention.
	 * @param heldHere ids of the jobs the poller's other open transactions hold, read when a short
	 * claim is checked
	 */
	public void claimed(String[] kinds, int asked, List<ClaimedJob> jobs, long startNanos, long tookNanos,
			Collection<Long> heldHere) {
		int claimed = jobs.size();
		this.metrics.pollCycle(this.queue, tookNanos, claimed);
		this.pollCycles.record(startNanos + tookNanos, tookNanos);
		if (claimed > 0) {
			this.jobsClaimed.add(claimed);
		}
		if (this.sla != null && claimed > 0) {
			countMissedSla(jobs);
		}
		if (claimed < asked && this.checks != null) {
			checkShortClaim(kinds, asked, jobs, heldHere);
		}
	}

	private void countMissedSla(List<ClaimedJob> jobs) {
		int missed = 0;
		for (int i = 0; i < jobs.size(); i++) {
			ClaimedJob job = jobs.get(i);
			if (job.claimedAt() != null && later(job.job().runAt(), job.claimedAt())) {
				missed++;
			}
		}
		if (missed > 0) {
			this.lastSlaMissNanos = System.nanoTime();
			this.slaMissed.add(missed);
			this.metrics.slaMissed(this.queue, missed);
		}
	}

	/** Whether {@code claimedAt} is later than {@code runAt} plus the SLA; compared without allocating. */
	private boolean later(Instant runAt, Instant claimedAt) {
		long seconds = claimedAt.getEpochSecond() - runAt.getEpochSecond();
		int nanos = claimedAt.getNano() - runAt.getNano();
		if (nanos < 0) {
			seconds--;
			nanos += 1_000_000_000;
		}
		return seconds > this.slaSeconds || (seconds == this.slaSeconds && nanos > this.slaNanos);
	}

	/**
	 * Counts, on another thread, the due jobs of the claim's kinds that other transactions hold, other
	 * than the claim's own and those held here; the claim was unproductive if there are any. A short
	 * claim is not checked while a check of this queue is under way, nor within
	 * {@link #CHECK_INTERVAL} of the last one's end, or {@value #CHECK_SPACING} times its duration if
	 * that is longer: the check reads the claim index from its start, dead entries included, and an
	 * idle poller's claims all come back short, so unspaced checks of a queue whose index holds many
	 * entries not yet vacuumed would keep a connection of every instance busy reading them.
	 */
	private void checkShortClaim(String[] kinds, int asked, List<ClaimedJob> jobs, Collection<Long> heldHere) {
		if (System.nanoTime() - this.nextCheckAt < 0 || !this.checking.compareAndSet(false, true)) {
			return;
		}
		List<Long> ownIds = new ArrayList<>(jobs.size() + heldHere.size());
		for (int i = 0; i < jobs.size(); i++) {
			ownIds.add(jobs.get(i).id());
		}
		ownIds.addAll(heldHere);
		Long[] own = ownIds.toArray(new Long[0]);
		try {
			this.checks.execute(() -> checkHeldElsewhere(kinds, asked, own));
		}
		catch (RejectedExecutionException ex) {
			this.checking.set(false);
		}
	}

	private void checkHeldElsewhere(String[] kinds, int asked, Long[] own) {
		long began = System.nanoTime();
		try {
			if (this.repository.countHeldElsewhere(this.queue, kinds, own, asked) > 0) {
				this.unproductiveClaims.increment();
				this.metrics.unproductiveClaim(this.queue);
			}
			this.checkedClaims.incrementAndGet();
		}
		finally {
			// A failure goes on to the checks' executor, which logs and counts it (QueueSignals).
			long ended = System.nanoTime();
			this.nextCheckAt = ended + Math.min(MAX_CHECK_INTERVAL.toNanos(),
					Math.max(CHECK_INTERVAL.toNanos(), (ended - began) * CHECK_SPACING));
			this.checking.set(false);
		}
	}

	public String queue() {
		return this.queue;
	}

	/** The 99th percentile of the poll cycles of the last minute (at most the last 2 048 claims); zero without any. */
	public Duration pollCycleP99() {
		return this.pollCycles.p99(System.nanoTime());
	}

	/** {@link #pollCycleP99()} judged by {@link PollCycleAssessment}'s bands. */
	public PollCycleAssessment pollCycleAssessment() {
		return PollCycleAssessment.of(pollCycleP99());
	}

	/** The queue's SLA, or {@code null} when it has none. */
	public @Nullable Duration sla() {
		return this.sla;
	}

	/** Jobs claimed later than their run-at plus the SLA, since this application started. */
	public long slaMissed() {
		return this.slaMissed.sum();
	}

	/** Whether a job was claimed past its SLA within the SLA window (two stats intervals). */
	public boolean slaSlipping() {
		return this.slaMissed.sum() > 0 && System.nanoTime() - this.lastSlaMissNanos <= this.slaWindow.toNanos();
	}

	/** Jobs this application's claims of the queue took since it started. */
	public long jobsClaimed() {
		return this.jobsClaimed.sum();
	}

	/**
	 * Short claims since this application started that stepped over due jobs other transactions held
	 * (checked only while metrics are published, one check at a time and at most one a second: a
	 * lower bound).
	 */
	public long unproductiveClaims() {
		return this.unproductiveClaims.sum();
	}

	/** Short claims checked for jobs held elsewhere, whatever the check found. */
	public long checkedClaims() {
		return this.checkedClaims.get();
	}

}
