package dev.pgqueue.engine;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.pgqueue.JobEvent;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.ScheduleDetails;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.job.JobEvents;
import dev.pgqueue.engine.job.NewJob;
import dev.pgqueue.engine.job.Uniqueness;
import dev.pgqueue.engine.schedules.ScheduleJobs;
import dev.pgqueue.engine.sql.UniqueJobRepository;
import dev.pgqueue.engine.sql.UniqueJobRepository.Enqueued;
import dev.pgqueue.engine.poll.PollerWakeUps;
import dev.pgqueue.engine.settings.QueueCatalog;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.engine.twophase.TwoPhaseJobRunner;
import dev.pgqueue.observation.EnqueueContext;
import dev.pgqueue.observation.QueueObservations;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Where every new job is born: an enqueue's, a schedule's tick's, a schedule run now. Each gets the
 * engine's public ids (which tell their shard), the checks of its request or schedule, an enqueue
 * observation around its insert, and, once the caller's transaction commits, its
 * {@link JobEvent.Enqueued} event and the wake-up of this application's pollers of its queue (or a
 * notification, throttled, for the other instances). The {@link JdbcJobClient} and the schedules make
 * their jobs here; nothing else inserts a new job.
 *
 * <p>Given this application's {@link PollerWakeUps}, it wakes the pollers of a queue it inserted due
 * jobs in as soon as the insert commits, without waiting for the notification to come back. Given a
 * {@link NotificationThrottle}, it notifies each queue at most once per interval, however fast jobs
 * come: an insert in between leaves its notification to the throttle once it commits.
 *
 * <p>An insert in the caller's transaction leaves a trace of what becomes of its jobs: at debug, that
 * they become visible to workers when that transaction commits; at info, if the transaction rolls back,
 * which jobs it discarded (ids, kinds, queues), since those never run and nothing else says so. Info
 * rather than warn, because a rollback is often the business's own decision; info rather than debug,
 * because a transaction that rolls back where the developer expected a commit (a {@code @Transactional}
 * test awaiting its job) otherwise leaves nothing in the log. One synchronization per transaction does
 * both, and the after-commit wake-ups, however many jobs it inserts.
 */
final class JobBirths implements ScheduleJobs {

	/** The enqueue's log category, which the guide names for its lines at commit and rollback. */
	private static final Logger logger = LoggerFactory.getLogger("dev.pgqueue.engine.JdbcJobClient");

	/** Jobs named one by one in a log line; the rest are counted. */
	private static final int JOBS_NAMED = 10;

	private final JobRepository repository;

	private final UniqueJobRepository uniqueJobs;

	private final QueueCatalog queues;

	/** Turns requests into rows, with the queue's defaults and the checks an enqueue makes. */
	private final NewJobs newJobs;

	private final @Nullable PollerWakeUps wakeUps;

	private final @Nullable NotificationThrottle throttle;

	private final QueueObservations observations;

	/** Where new jobs are published, once they commit. */
	private final JobEvents events;

	/** A transaction of the engine's own, for an insert of several statements outside the caller's. */
	private final TransactionTemplate ownTransaction;

	/**
	 * @param maxPayloadBytes largest serialized payload accepted, in bytes of UTF-8 JSON
	 * @param wakeUps this application's pollers, woken after commit for jobs due now; {@code null}
	 * to leave waking to notifications and polling
	 * @param throttle spaces out the notifications; {@code null} to notify on every insert of due jobs
	 * (when the repository notifies at all)
	 * @param observations observes each insert as an enqueue
	 * @param publicIds makes each new job's public id
	 * @param shard the shard the jobs are written to, or {@code null} without shards
	 * @param ownTransaction a transaction on the jobs' database, for an insert that takes several
	 * statements outside the caller's transaction, so that it is all or nothing
	 */
	JobBirths(JobRepository repository, UniqueJobRepository uniqueJobs, JsonMapper jsonMapper, QueueCatalog queues,
			JobHandlerRegistry handlers, long maxPayloadBytes, @Nullable PollerWakeUps wakeUps,
			@Nullable NotificationThrottle throttle, QueueObservations observations, JobEvents events,
			Supplier<UUID> publicIds, @Nullable String shard, TransactionTemplate ownTransaction) {
		this.ownTransaction = ownTransaction;
		this.repository = repository;
		this.uniqueJobs = uniqueJobs;
		this.queues = queues;
		this.newJobs = new NewJobs(jsonMapper, queues, handlers, maxPayloadBytes, publicIds, shard);
		this.wakeUps = wakeUps;
		this.throttle = (repository.notifies()) ? throttle : null;
		this.observations = observations;
		this.events = events;
	}

	/** The row a request makes; see {@link NewJobs#of}. */
	NewJob of(JobRequest request) {
		return this.newJobs.of(request);
	}

	@Override
	public NewJob of(ScheduleDetails schedule, @Nullable Instant runAt, @Nullable Uniqueness unique) {
		return this.newJobs.of(schedule, runAt, unique);
	}

	@Override
	public void check(String schedule, String kind, String queue, String payload) {
		this.newJobs.check(schedule, kind, queue, payload);
	}

	@Override
	public List<Enqueued> insert(List<NewJob> jobs) {
		if (jobs.isEmpty()) {
			return List.of();
		}
		if (jobs.stream().anyMatch((job) -> job.unique() != null) && jobs.stream().anyMatch((job) -> job.unique() == null)
				&& !TransactionSynchronizationManager.isActualTransactionActive()) {
			// Unique jobs take statements of their own, beside the others' insert: without the caller's
			// transaction, one of ours keeps a failure of a later statement from leaving earlier jobs
			// enqueued, jobs the caller has no id of and would enqueue again. Unique jobs alone see to it
			// themselves (UniqueJobRepository), after the plain insert they try first.
			return Objects.requireNonNull(this.ownTransaction.execute((status) -> insertNow(jobs)));
		}
		return insertNow(jobs);
	}

	private List<Enqueued> insertNow(List<NewJob> jobs) {
		Set<String> dueQueues = new LinkedHashSet<>();
		jobs.stream().filter(NewJob::isDueNow).forEach((job) -> dueQueues.add(job.queue()));
		boolean notify = notifyNow(dueQueues);
		List<Enqueued> enqueued = new ArrayList<>(jobs.size());
		List<NewJob> inserted = new ArrayList<>(jobs.size());
		if (jobs.stream().allMatch((job) -> job.unique() == null)) {
			observed(() -> enqueueContext(jobs), (traceContext) -> {
				List<NewJob> traced = traced(jobs, traceContext);
				if (traced.size() == 1) {
					this.repository.insert(traced.get(0), notify);
				}
				else {
					this.repository.insertAll(traced, notify);
				}
			});
			jobs.forEach((job) -> enqueued.add(new Enqueued(job.publicId(), UniqueJobRepository.Outcome.INSERTED)));
			inserted.addAll(jobs);
		}
		else {
			insertWithUnique(jobs, notify, enqueued, inserted);
		}
		enlist(inserted, dueQueues, notify);
		return enqueued;
	}

	/**
	 * Inserts the jobs without a unique key in one statement and those with one through
	 * {@link UniqueJobRepository}; adds what became of each, in order, to {@code enqueued}, and the jobs
	 * inserted (rather than resolved to a job holding their key) to {@code inserted}.
	 */
	private void insertWithUnique(List<NewJob> jobs, boolean notify, List<Enqueued> enqueued, List<NewJob> inserted) {
		List<NewJob> plain = new ArrayList<>();
		List<NewJob> unique = new ArrayList<>();
		for (NewJob job : jobs) {
			((job.unique() != null) ? unique : plain).add(job);
		}
		List<Enqueued> uniqueOutcomes = new ArrayList<>(unique.size());
		observed(() -> enqueueContext(jobs), (traceContext) -> {
			if (!plain.isEmpty()) {
				this.repository.insertAll(traced(plain, traceContext), notify);
			}
			uniqueOutcomes.addAll(this.uniqueJobs.insert(traced(unique, traceContext), notify, this.ownTransaction));
		});
		int next = 0;
		for (NewJob job : jobs) {
			if (job.unique() == null) {
				enqueued.add(new Enqueued(job.publicId(), UniqueJobRepository.Outcome.INSERTED));
				inserted.add(job);
			}
			else {
				Enqueued outcome = uniqueOutcomes.get(next++);
				enqueued.add(outcome);
				if (outcome.outcome() == UniqueJobRepository.Outcome.INSERTED) {
					inserted.add(job);
				}
			}
		}
	}

	private static List<NewJob> traced(List<NewJob> jobs, Map<String, String> traceContext) {
		return traceContext.isEmpty() ? jobs : jobs.stream().map((job) -> job.withTraceContext(traceContext)).toList();
	}

	/** Runs an insert in the scope of an enqueue observation, with the trace headers its handlers wrote. */
	@SuppressWarnings("try") // the scope is what makes the insert's own observations (a traced DataSource) its children
	private void observed(Supplier<EnqueueContext> context, Consumer<Map<String, String>> insert) {
		Observation observation = this.observations.startEnqueue(context);
		try (Observation.Scope scope = observation.openScope()) {
			insert.accept(QueueObservations.traceContext(observation));
		}
		catch (RuntimeException | Error ex) {
			observation.error(ex);
			throw ex;
		}
		finally {
			observation.stop();
		}
	}

	/** The context of an enqueue of many jobs: their queue, kind and mode, where they share one. */
	private EnqueueContext enqueueContext(List<NewJob> jobs) {
		NewJob first = jobs.get(0);
		String queue = first.queue();
		String kind = first.kind();
		for (NewJob job : jobs) {
			queue = (queue != null && queue.equals(job.queue())) ? queue : null;
			kind = (kind != null && kind.equals(job.kind())) ? kind : null;
		}
		QueueMode mode = (queue != null) ? modeOf(queue) : null;
		if (queue == null) {
			Set<QueueMode> modes = new LinkedHashSet<>();
			jobs.forEach((job) -> modes.add(modeOf(job.queue())));
			mode = (modes.size() == 1) ? modes.iterator().next() : null;
		}
		return new EnqueueContext(queue, kind, mode, (jobs.size() == 1) ? first.publicId() : null, jobs.size());
	}

	private QueueMode modeOf(String queue) {
		return this.queues.settings(queue).mode();
	}

	private boolean notifyNow(Set<String> dueQueues) {
		if (dueQueues.isEmpty() || TransactionSynchronizationManager.hasResource(TwoPhaseJobRunner.PREPARED_TRANSACTION)) {
			return false;
		}
		return this.throttle == null || this.throttle.tryNotifyNow(dueQueues);
	}

	/**
	 * Once the caller's transaction commits (never if it rolls back), or now outside one: wakes this
	 * application's pollers of the due queues, and has the throttle notify those the insert did not.
	 * In the caller's transaction, also says at debug that the jobs become visible when it commits,
	 * and has its rollback log them as discarded.
	 */
	private void enlist(List<NewJob> jobs, Set<String> dueQueues, boolean notified) {
		this.events.publishAfterCommit(() -> jobs.stream()
			.map((job) -> new JobEvent.Enqueued(job.publicId(), job.kind(), job.queue()))
			.toList());
		boolean wake = this.wakeUps != null && this.wakeUps.hasPollers();
		// A notifying insert still counts: it covers the transaction's other inserts into its queues.
		boolean signal = !dueQueues.isEmpty() && (wake || this.throttle != null);
		if (!TransactionSynchronizationManager.isSynchronizationActive()) {
			if (signal) {
				new TransactionJobs().add(dueQueues, notified).afterCommit();
			}
			return;
		}
		boolean inTransaction = TransactionSynchronizationManager.isActualTransactionActive();
		if (!signal && !inTransaction) {
			return;
		}
		TransactionJobs enlisted = transactionJobs();
		if (signal) {
			enlisted.add(dueQueues, notified);
		}
		if (inTransaction) {
			enlisted.enqueued(jobs);
			if (logger.isDebugEnabled()) {
				logger.debug("{} joined the caller's transaction and {} visible to workers once it commits (never if it "
						+ "rolls back or stays open): {}", count(jobs.size()), (jobs.size() == 1) ? "becomes" : "become",
						describe(jobs, jobs.size()));
			}
		}
	}

	/** This client's synchronization of the current transaction, registered by the first enqueue in it. */
	private TransactionJobs transactionJobs() {
		// Looked up among the current synchronizations, not bound as a resource: a transaction that
		// suspends this one (REQUIRES_NEW) has synchronizations of its own, and so its own jobs.
		for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
			if (synchronization instanceof TransactionJobs jobs && jobs.births() == this) {
				return jobs;
			}
		}
		TransactionJobs created = new TransactionJobs();
		TransactionSynchronizationManager.registerSynchronization(created);
		return created;
	}

	/** {@code 1 job}, {@code 3 jobs}. */
	private static String count(int jobs) {
		return jobs + ((jobs == 1) ? " job" : " jobs");
	}

	/** {@code <id> (kind 'k', queue 'q'), …}, the first few of {@code total} jobs, the rest counted. */
	private static String describe(List<NewJob> named, int total) {
		StringBuilder text = new StringBuilder();
		int shown = Math.min(named.size(), JOBS_NAMED);
		for (int i = 0; i < shown; i++) {
			NewJob job = named.get(i);
			text.append((i > 0) ? ", " : "")
				.append(job.publicId())
				.append(" (kind '")
				.append(job.kind())
				.append("', queue '")
				.append(job.queue())
				.append("')");
		}
		if (total > shown) {
			text.append(", and ").append(total - shown).append(" more");
		}
		return text.toString();
	}

	/**
	 * What one transaction enqueued through this client: the queues it enqueued due jobs in and those
	 * its inserts notified, for the wake-ups after commit, and the jobs (the first few named, the rest
	 * counted) for the log line if it rolls back.
	 */
	private final class TransactionJobs implements TransactionSynchronization {

		private final Set<String> due = new LinkedHashSet<>();

		private final Set<String> notified = new LinkedHashSet<>();

		private final List<NewJob> named = new ArrayList<>();

		private int enqueued;

		JobBirths births() {
			return JobBirths.this;
		}

		TransactionJobs add(Set<String> queues, boolean notifiedByInsert) {
			this.due.addAll(queues);
			if (notifiedByInsert) {
				// Delivered at commit, so it covers the transaction's other jobs in these queues too.
				this.notified.addAll(queues);
			}
			return this;
		}

		void enqueued(List<NewJob> jobs) {
			this.enqueued += jobs.size();
			for (int i = 0; i < jobs.size() && this.named.size() < JOBS_NAMED; i++) {
				this.named.add(jobs.get(i));
			}
		}

		@Override
		public void afterCommit() {
			if (wakeUps != null) {
				this.due.forEach(wakeUps::wake);
			}
			if (throttle != null) {
				Set<String> unnotified = new LinkedHashSet<>(this.due);
				unnotified.removeAll(this.notified);
				if (!unnotified.isEmpty()) {
					throttle.notifyLater(unnotified);
				}
			}
		}

		@Override
		public void afterCompletion(int status) {
			if (status == STATUS_ROLLED_BACK && this.enqueued > 0) {
				logger.info("A transaction rolled back, discarding {} it had enqueued, which will not run: {}. An "
						+ "enqueue joins the caller's transaction, so its job exists only once that transaction commits; "
						+ "a test whose transaction rolls back or never commits (a @Transactional test) never sees its "
						+ "jobs run.", count(this.enqueued), describe(this.named, this.enqueued));
			}
		}

	}

}
