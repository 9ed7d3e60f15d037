package dev.pgqueue.autoconfigure.dashboard;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import dev.pgqueue.AdminResult;
import dev.pgqueue.AdminResult.Outcome;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobAttempt;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobProgress;
import dev.pgqueue.JobPage;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobState;
import dev.pgqueue.QueueHistory;
import dev.pgqueue.RetryOptions;

/**
 * A {@link JobAdmin} that holds one failed job, answers with counts it is given, and records the
 * operations asked of it: for tests of what the dashboard allows, not of what the operations do
 * (the admin's own tests cover those against PostgreSQL).
 */
class RecordingJobAdmin implements JobAdmin {

	static final UUID FAILED_JOB = UUID.fromString("0b9a2f7e-3c1d-4c55-9a8e-1f0f1d2b3c4d");

	final List<String> operations = new ArrayList<>();

	volatile Map<String, Map<JobState, Long>> counts = Map.of();

	volatile Map<String, Long> finishedLastMinute = Map.of();

	final AtomicInteger countCalls = new AtomicInteger();

	@Override
	public Optional<JobDetails> find(UUID id) {
		return FAILED_JOB.equals(id) ? Optional.of(failedJob()) : Optional.empty();
	}

	@Override
	public List<JobAttempt> attempts(UUID id) {
		Instant created = Instant.parse("2026-01-01T10:00:00Z");
		return FAILED_JOB.equals(id) ? List.of(new JobAttempt(1, created, created.plusSeconds(1),
				JobAttempt.Outcome.FAILED, "java.lang.IllegalStateException", "<b>printer</b> on fire")) : List.of();
	}

	@Override
	public Optional<JobProgress> progress(UUID id) {
		return Optional.empty();
	}

	@Override
	public Optional<String> output(UUID id) {
		return Optional.empty();
	}

	@Override
	public Optional<JobDetails> findWithPayload(UUID id) {
		return find(id);
	}

	@Override
	public JobPage list(JobQuery query) {
		return new JobPage(List.of(failedJob()), null);
	}

	@Override
	public Map<String, Map<JobState, Long>> counts() {
		this.countCalls.incrementAndGet();
		return this.counts;
	}

	@Override
	public synchronized AdminResult retry(UUID id) {
		this.operations.add("retry " + id);
		return new AdminResult(id, Outcome.APPLIED, JobState.AVAILABLE);
	}

	@Override
	public int retryFailed(String queue, String kind) {
		throw new UnsupportedOperationException("The dashboard retries jobs in bulk through retryAll");
	}

	/** What {@link #count} answers, and bulk actions report as done. */
	volatile long matching;

	@Override
	public long count(JobQuery query) {
		return this.matching;
	}

	@Override
	public List<String> kinds() {
		return List.of("email.welcome", "report.monthly");
	}

	@Override
	public synchronized int retryAll(JobQuery query, RetryOptions options) {
		this.operations.add("retry all " + query.limit(JobQuery.DEFAULT_LIMIT));
		return (int) this.matching;
	}

	@Override
	public synchronized int cancelAll(JobQuery query) {
		this.operations.add("cancel all " + query.limit(JobQuery.DEFAULT_LIMIT));
		return (int) this.matching;
	}

	@Override
	public synchronized AdminResult cancel(UUID id) {
		this.operations.add("cancel " + id);
		return new AdminResult(id, Outcome.NOT_ALLOWED, JobState.FAILED);
	}

	@Override
	public AdminResult delete(UUID id) {
		throw new UnsupportedOperationException("The dashboard does not delete jobs");
	}

	@Override
	public synchronized boolean pause(String queue) {
		this.operations.add("pause " + queue);
		return true;
	}

	@Override
	public synchronized boolean resume(String queue) {
		this.operations.add("resume " + queue);
		return true;
	}

	@Override
	public Map<String, Long> finishedWithin(java.time.Duration window) {
		return this.finishedLastMinute;
	}

	@Override
	public List<QueueHistory> history(java.time.Duration window, java.time.Duration step) {
		return List.of();
	}

	@Override
	public Set<String> pausedQueues() {
		return Set.of();
	}

	static Map<String, Map<JobState, Long>> finished(String queue, long completed, long failed) {
		Map<JobState, Long> states = new EnumMap<>(JobState.class);
		states.put(JobState.COMPLETED, completed);
		states.put(JobState.FAILED, failed);
		Map<String, Map<JobState, Long>> counts = new LinkedHashMap<>();
		counts.put(queue, states);
		return counts;
	}

	private static JobDetails failedJob() {
		Instant created = Instant.parse("2026-01-01T10:00:00Z");
		return new JobDetails(FAILED_JOB, "report.monthly", "reports", JobState.FAILED, 0, 1, 1,
				"java.lang.IllegalStateException: <b>printer</b> on fire", created, created, created,
				created.plusSeconds(1), 0, List.of(), "<i>acct-7</i>", 3, null);
	}

}
