package dev.pgqueue.engine;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import dev.pgqueue.AdminCaller;
import dev.pgqueue.AdminResult;
import dev.pgqueue.AdminResult.Outcome;
import dev.pgqueue.JobAdmin;
import dev.pgqueue.JobAttempt;
import dev.pgqueue.JobDetails;
import dev.pgqueue.JobEvent;
import dev.pgqueue.JobPage;
import dev.pgqueue.JobProgress;
import dev.pgqueue.JobQuery;
import dev.pgqueue.JobState;
import dev.pgqueue.QueueHistory;
import dev.pgqueue.RetryOptions;
import dev.pgqueue.engine.sql.AdminRepository;
import dev.pgqueue.engine.sql.ControlRepository;
import dev.pgqueue.engine.sql.HistoryRepository;
import dev.pgqueue.engine.sql.AdminRepository.Change;
import dev.pgqueue.engine.sql.AdminRepository.Listed;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.job.JobEvents;
import dev.pgqueue.engine.poll.PollerWakeUps;
import dev.pgqueue.engine.poll.QueuePauses;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static dev.pgqueue.engine.service.LogValues.printable;

/**
 * The {@link JobAdmin} on the jobs table, through {@link AdminRepository}. Each operation logs who
 * asked ({@link AdminCaller}) and what came of it. Jobs made available again are announced as new
 * jobs are: a notification to every instance, and this application's pollers woken once the change
 * commits; pauses and resumes reach this application's pollers the same way.
 */
public class JdbcJobAdmin implements JobAdmin {

	/** Longest window {@link #finishedWithin} counts in: a hundred years, as far as a job's times go. */
	private static final Duration LONGEST_WINDOW = Duration.ofDays(36_525);

	private static final Logger logger = LoggerFactory.getLogger(JdbcJobAdmin.class);

	private final AdminRepository repository;

	private final JobRepository jobs;

	private final @Nullable QueuePauses pauses;

	private final @Nullable PollerWakeUps wakeUps;

	private final AdminCaller caller;

	private final JobEvents events;

	private final @Nullable ControlRepository controls;

	private final @Nullable HistoryRepository history;

	private final Duration historyRetention;

	/**
	 * @param repository the operators' statements
	 * @param jobs notifies the queues of retried jobs, when notifications are on
	 * @param pauses this application's view of the paused queues, told at once of its own changes;
	 * {@code null} when nothing polls here
	 * @param wakeUps this application's pollers, woken for retried jobs and resumed queues;
	 * {@code null} for none
	 * @param caller names who asks, for the log
	 */
	public JdbcJobAdmin(AdminRepository repository, JobRepository jobs, @Nullable QueuePauses pauses,
			@Nullable PollerWakeUps wakeUps, AdminCaller caller) {
		this(repository, jobs, pauses, wakeUps, caller, JobEvents.NONE, null);
	}

	/**
	 * @param events where cancels are published, once they commit
	 * @param controls where cancel requests of running jobs go; {@code null} to answer
	 * {@link Outcome#RUNNING} for them
	 */
	public JdbcJobAdmin(AdminRepository repository, JobRepository jobs, @Nullable QueuePauses pauses,
			@Nullable PollerWakeUps wakeUps, AdminCaller caller, JobEvents events,
			@Nullable ControlRepository controls) {
		this(repository, jobs, pauses, wakeUps, caller, events, controls, null, Duration.ZERO);
	}

	/**
	 * @param history the queues' per-minute history; {@code null} when it cannot be read here
	 * @param historyRetention how long history minutes are kept, the longest window to ask for
	 */
	public JdbcJobAdmin(AdminRepository repository, JobRepository jobs, @Nullable QueuePauses pauses,
			@Nullable PollerWakeUps wakeUps, AdminCaller caller, JobEvents events,
			@Nullable ControlRepository controls, @Nullable HistoryRepository history, Duration historyRetention) {
		this.history = history;
		this.historyRetention = historyRetention;
		this.controls = controls;
		this.repository = repository;
		this.jobs = jobs;
		this.pauses = pauses;
		this.wakeUps = wakeUps;
		this.caller = caller;
		this.events = events;
	}

	/**
	 * Whether a cursor is one of the admin over every shard ({@code s} and each shard's own cursor), which
	 * no single shard's admin reads.
	 */
	static boolean isShardedCursor(String cursor) {
		return cursor.startsWith("s");
	}

	@Override
	public Optional<JobDetails> find(UUID id) {
		return find(id, false);
	}

	@Override
	public Optional<JobDetails> findWithPayload(UUID id) {
		Optional<JobDetails> job = find(id, true);
		job.ifPresent((found) -> logger.info("{} read the payload of job {} (kind '{}', queue '{}')", printable(who()),
				id, printable(found.kind()), printable(found.queue())));
		return job;
	}

	private Optional<JobDetails> find(UUID id, boolean withPayload) {
		Objects.requireNonNull(id, "id must not be null");
		Listed found = this.repository.find(id, withPayload);
		return (found != null) ? Optional.of(found.details()) : Optional.empty();
	}

	@Override
	public List<JobAttempt> attempts(UUID id) {
		Objects.requireNonNull(id, "id must not be null");
		return this.repository.attempts(id);
	}

	@Override
	public Optional<String> output(UUID id) {
		Objects.requireNonNull(id, "id must not be null");
		return Optional.ofNullable(this.repository.output(id));
	}

	@Override
	public Optional<JobProgress> progress(UUID id) {
		Objects.requireNonNull(id, "id must not be null");
		return (this.controls != null) ? Optional.ofNullable(this.controls.progress(id)) : Optional.empty();
	}

	@Override
	public JobPage list(JobQuery query) {
		Objects.requireNonNull(query, "query must not be null");
		List<Listed> listed = listed(query);
		String next = (listed.size() == query.limit()) ? Long.toString(listed.get(listed.size() - 1).id()) : null;
		return new JobPage(listed.stream().map(Listed::details).toList(), next);
	}

	/** The jobs of a page with the internal ids that cursors are made of. */
	List<Listed> listed(JobQuery query) {
		if (query.before() != null && isShardedCursor(query.before())) {
			throw new IllegalArgumentException("'" + query.before() + "' is the cursor of a list across shards: pass it "
					+ "to the JobAdmin over every shard, which made it");
		}
		return this.repository.list(query);
	}

	@Override
	public Map<String, Map<JobState, Long>> counts() {
		return this.repository.counts();
	}

	@Override
	public Map<String, Long> finishedWithin(Duration window) {
		Objects.requireNonNull(window, "window must not be null");
		if (window.isNegative() || window.compareTo(LONGEST_WINDOW) > 0) {
			throw new IllegalArgumentException("The window to count finished jobs in must be zero to "
					+ LONGEST_WINDOW.toDays() + " days, not " + window);
		}
		return this.repository.finishedWithin(window);
	}

	@Override
	public AdminResult retry(UUID id) {
		Objects.requireNonNull(id, "id must not be null");
		Change change = this.repository.retry(id);
		AdminResult result = result(id, change, JobState.AVAILABLE);
		if (result.applied()) {
			announce(Set.of(change.queue()));
		}
		log("retry", id, change, result);
		return result;
	}

	@Override
	public long count(JobQuery query) {
		Objects.requireNonNull(query, "query must not be null");
		return this.repository.count(query);
	}

	@Override
	public List<String> kinds() {
		return this.repository.knownKinds();
	}

	@Override
	public int retryFailed(@Nullable String queue, @Nullable String kind) {
		if (queue == null && kind == null) {
			throw new IllegalArgumentException("Name a queue, a kind or both: retrying every failed job of every "
					+ "queue at once is not offered");
		}
		return retryAll(JobQuery.all().queue(queue).kind(kind));
	}

	@Override
	public int retryAll(JobQuery query, RetryOptions options) {
		Objects.requireNonNull(query, "query must not be null");
		Objects.requireNonNull(options, "options must not be null");
		if (!options.bounded()) {
			requireNarrowed(query, "retry");
		}
		if (query.state() != null && query.state() != JobState.FAILED) {
			throw new IllegalArgumentException("Only failed jobs are retried, and the query asks for "
					+ query.state().sqlValue() + " jobs: leave its state out or make it failed");
		}
		String who = who();
		Map<String, Integer> retried = this.repository.retryMatching(query, options);
		int total = retried.values().stream().mapToInt(Integer::intValue).sum();
		if (total > 0) {
			announce(retried.keySet());
		}
		logger.info("{} retried the failed jobs that match {}{}: {} made available again{}", printable(who),
				printable(query.describe()), describe(options), total, retried.isEmpty() ? "" : " " + printable(retried));
		return total;
	}

	@Override
	public int cancelAll(JobQuery query) {
		Objects.requireNonNull(query, "query must not be null");
		requireNarrowed(query, "cancel");
		if (query.state() != null && query.state() != JobState.AVAILABLE && query.state() != JobState.SCHEDULED) {
			throw new IllegalArgumentException("Only waiting jobs (available or scheduled) are cancelled together, "
					+ "and the query asks for " + query.state().sqlValue() + " jobs: cancel a running job by its id");
		}
		String who = who();
		int total = this.repository.cancelMatching(query, (batch) -> this.events.publishAfterCommit(() -> batch
			.stream()
			.map((job) -> (JobEvent) new JobEvent.Cancelled(job.id(), job.kind(), job.queue()))
			.toList()));
		logger.info("{} cancelled the waiting jobs that match {}: {} cancelled", printable(who),
				printable(query.describe()), total);
		return total;
	}

	private static void requireNarrowed(JobQuery query, String action) {
		if (!query.narrowed()) {
			throw new IllegalArgumentException("Name a queue, a kind, a tag, an error text or a finished instant to "
					+ action + " jobs together: acting on every job of every queue at once is not offered");
		}
	}

	/** The options that differ from the defaults, for the log: " that failed 10m ago or earlier, at most 500". */
	private static String describe(RetryOptions options) {
		StringBuilder text = new StringBuilder();
		if (!options.failedFor().isZero()) {
			text.append(" that failed ").append(options.failedFor()).append(" ago or earlier");
		}
		if (options.batchSize() != RetryOptions.DEFAULT_BATCH_SIZE) {
			text.append(", ").append(options.batchSize()).append(" per statement");
		}
		if (options.bounded()) {
			text.append(", at most ").append(options.atMost());
		}
		return text.toString();
	}

	@Override
	public AdminResult cancel(UUID id) {
		Objects.requireNonNull(id, "id must not be null");
		Change change = this.repository.cancel(id);
		AdminResult result = result(id, change, JobState.CANCELLED);
		if (result.outcome() == Outcome.RUNNING && this.controls != null && this.controls.requestCancel(id, who())) {
			logger.info("{} asked to cancel running job {}: requested; the instance running it stops it within a "
					+ "second, unless it finishes first", printable(who()), id);
			return new AdminResult(id, Outcome.CANCEL_REQUESTED, result.state());
		}
		log("cancel", id, change, result);
		if (result.applied()) {
			this.events.publishAfterCommit(() -> List.of(new JobEvent.Cancelled(id, change.kind(), change.queue())));
		}
		return result;
	}

	@Override
	public AdminResult delete(UUID id) {
		Objects.requireNonNull(id, "id must not be null");
		Change change = this.repository.delete(id);
		AdminResult result = result(id, change, null);
		log("delete", id, change, result);
		return result;
	}

	@Override
	public boolean pause(String queue) {
		requireQueue(queue);
		String who = who();
		boolean paused = this.repository.pause(queue, who);
		afterCommit(() -> {
			if (this.pauses != null) {
				this.pauses.changed();
			}
		});
		logger.info("{} paused queue '{}'{}", printable(who), printable(queue), paused ? "" : " (it was paused already)");
		return paused;
	}

	@Override
	public boolean resume(String queue) {
		requireQueue(queue);
		String who = who();
		boolean resumed = this.repository.resume(queue);
		afterCommit(() -> {
			if (this.pauses != null) {
				this.pauses.changed();
			}
			if (this.wakeUps != null) {
				this.wakeUps.wake(queue);
			}
		});
		logger.info("{} resumed queue '{}'{}", printable(who), printable(queue), resumed ? "" : " (it was not paused)");
		return resumed;
	}

	/**
	 * Refuses a queue name no queue can have, as enqueue refuses it: U+0000, which PostgreSQL's text
	 * cannot hold (the statement would fail), or half a surrogate pair, which it would store as '?'.
	 */
	private static void requireQueue(String queue) {
		Objects.requireNonNull(queue, "queue must not be null");
		StorableText.check("The queue name '" + printable(queue) + "'", queue);
	}

	@Override
	public Set<String> pausedQueues() {
		return this.repository.pausedQueues();
	}

	/** What a change of one job came to; {@code after} is the job's state once it is applied. */
	private static AdminResult result(UUID id, Change change, @Nullable JobState after) {
		if (change.locked() || (!change.changed() && change.state() == JobState.RUNNING)) {
			return new AdminResult(id, Outcome.RUNNING, JobState.RUNNING);
		}
		if (change.state() == null) {
			return new AdminResult(id, Outcome.NOT_FOUND, null);
		}
		return change.changed() ? new AdminResult(id, Outcome.APPLIED, after)
				: new AdminResult(id, Outcome.NOT_ALLOWED, change.state());
	}

	private void log(String operation, UUID id, Change change, AdminResult result) {
		String job = printable((change.kind() != null)
				? "job " + id + " (kind '" + change.kind() + "', queue '" + change.queue() + "')" : "job " + id);
		String who = printable(who());
		switch (result.outcome()) {
			case APPLIED -> logger.info("{} asked to {} {}: done", who, operation, job);
			case NOT_FOUND -> logger.info("{} asked to {} {}: no such job", who, operation, job);
			case RUNNING -> logger.info("{} asked to {} {}: refused, a worker has it (its row is held by another "
					+ "transaction or it runs under a lease)", who, operation, job);
			case NOT_ALLOWED -> logger.info("{} asked to {} {}: refused, it is {}", who, operation, job,
					change.state().sqlValue());
		}
	}

	/**
	 * Retried jobs are new due jobs: their queues are notified (delivered at commit) and, once the
	 * change commits, this application's pollers of them are woken.
	 */
	private void announce(Set<String> queues) {
		if (this.jobs.notifies()) {
			this.jobs.notifyQueues(queues);
		}
		afterCommit(() -> {
			if (this.wakeUps != null) {
				queues.forEach(this.wakeUps::wake);
			}
		});
	}

	/** Runs the task once the caller's transaction commits, or now outside one. */
	private static void afterCommit(Runnable task) {
		if (!TransactionSynchronizationManager.isSynchronizationActive()) {
			task.run();
			return;
		}
		TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

			@Override
			public void afterCommit() {
				task.run();
			}

		});
	}

	/**
	 * Who asked, as stored beside a pause or a cancel request: escaped as a log line shows it when
	 * PostgreSQL's text could not hold it as it is, and at most 200 characters, whatever the caller's
	 * principal is named.
	 */
	private String who() {
		String name = this.caller.name();
		if (name == null || name.isBlank()) {
			return "unknown";
		}
		String stored = (StorableText.problem(name) == null) ? name : printable(name);
		return (stored.length() > 200) ? stored.substring(0, 200) : stored;
	}

	@Override
	public List<QueueHistory> history(Duration window, Duration step) {
		if (this.history == null) {
			throw new UnsupportedOperationException("This JobAdmin was built without the queues' history");
		}
		Objects.requireNonNull(window, "window");
		Objects.requireNonNull(step, "step");
		if (step.compareTo(Duration.ofMinutes(1)) < 0 || step.toSecondsPart() != 0 || step.toNanosPart() != 0) {
			throw new IllegalArgumentException("The history's step must be whole minutes, at least one, was " + step
					+ ": the history holds one row per queue and minute.");
		}
		if (window.compareTo(step) < 0) {
			throw new IllegalArgumentException("The history's window (" + window + ") must be at least its step ("
					+ step + ").");
		}
		if (window.compareTo(this.historyRetention) > 0) {
			throw new IllegalArgumentException("The history's window (" + window + ") is longer than "
					+ "pgqueue.history.retention (" + this.historyRetention + "), past which minutes are deleted. Ask "
					+ "for at most " + this.historyRetention + ", or raise pgqueue.history.retention.");
		}
		long steps = (window.toSeconds() + step.toSeconds() - 1) / step.toSeconds();
		if (steps > MAX_HISTORY_POINTS) {
			throw new IllegalArgumentException("The history's window (" + window + ") holds " + steps + " steps of "
					+ step + ", more than " + MAX_HISTORY_POINTS + ". Ask for a longer step, at least "
					+ Duration.ofMinutes((window.toMinutes() + MAX_HISTORY_POINTS - 1) / MAX_HISTORY_POINTS) + ".");
		}
		return this.history.read(step, (int) steps);
	}

}
