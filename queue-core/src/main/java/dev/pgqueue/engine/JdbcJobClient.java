package dev.pgqueue.engine;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.pgqueue.JobClient;
import dev.pgqueue.JobEvent;
import dev.pgqueue.JobRequest;
import dev.pgqueue.QueueMode;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.job.JobEvents;
import dev.pgqueue.engine.job.NewJob;
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

/**
 * The {@link JobClient} that inserts into the jobs table through {@link JobRepository}, joining the
 * caller's transaction.
 *
 * <p>Public ids are random (version 4) UUIDs made here ({@link NewJobs}) rather than by the database, so
 * a many-job enqueue needs no {@code RETURNING} and keeps the requests' order.
 *
 * <p>Given this application's {@link PollerWakeUps}, it wakes the pollers of a queue it enqueued due
 * jobs in as soon as the enqueue commits, without waiting for the notification to come back. Given a
 * {@link NotificationThrottle}, it notifies each queue at most once per interval, however fast it
 * enqueues: an enqueue in between leaves its notification to the throttle once it commits.
 *
 * <p>An enqueue in the caller's transaction leaves a trace of what becomes of its job: at debug, that
 * the job becomes visible to workers when that transaction commits; at info, if the transaction rolls
 * back, which jobs it discarded (ids, kinds, queues), since those never run and nothing else says so.
 * Info rather than warn, because a rollback is often the business's own decision; info rather than
 * debug, because a transaction that rolls back where the developer expected a commit (a
 * {@code @Transactional} test awaiting its job) otherwise leaves nothing in the log. One
 * synchronization per transaction does both, and the after-commit wake-ups, however many jobs it
 * enqueues.
 *
 * <p>It also warns, through {@link UnpolledQueueWarnings}, about a job that no instance will run.
 */
class JdbcJobClient implements JobClient {

	private static final Logger logger = LoggerFactory.getLogger(JdbcJobClient.class);

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

	private final UnpolledQueueWarnings unpolled;

	/** Where enqueues are published, once they commit. */
	private final JobEvents events;

	/**
	 * @param maxPayloadBytes largest serialized payload accepted, in bytes of UTF-8 JSON
	 * @param wakeUps this application's pollers, woken after commit for jobs due now; {@code null}
	 * to leave waking to notifications and polling
	 * @param throttle spaces out this client's notifications; {@code null} to notify on every enqueue
	 * (when the repository notifies at all)
	 * @param observations observes each enqueue
	 * @param unpolled warns about jobs that no instance will run
	 * @param publicIds makes each new job's public id
	 * @param shard the shard this client writes to, or {@code null} without shards
	 */
	JdbcJobClient(JobRepository repository, UniqueJobRepository uniqueJobs, JsonMapper jsonMapper, QueueCatalog queues,
			JobHandlerRegistry handlers, long maxPayloadBytes, @Nullable PollerWakeUps wakeUps,
			@Nullable NotificationThrottle throttle, QueueObservations observations, UnpolledQueueWarnings unpolled,
			JobEvents events, Supplier<UUID> publicIds, @Nullable String shard) {
		this.events = events;
		this.repository = repository;
		this.uniqueJobs = uniqueJobs;
		this.queues = queues;
		this.newJobs = new NewJobs(jsonMapper, queues, handlers, maxPayloadBytes, publicIds, shard);
		this.wakeUps = wakeUps;
		this.throttle = (repository.notifies()) ? throttle : null;
		this.observations = observations;
		this.unpolled = unpolled;
	}

	@Override
	public UUID enqueue(JobRequest request) {
		NewJob job = this.newJobs.of(request);
		Set<String> dueQueues = job.isDueNow() ? Set.of(job.queue()) : Set.of();
		boolean notify = notifyNow(dueQueues);
		if (job.unique() != null) {
			List<Enqueued> enqueued = new ArrayList<>(1);
			observed(() -> new EnqueueContext(job.queue(), job.kind(), modeOf(job.queue()), job.publicId(), 1),
					(traceContext) -> enqueued.addAll(this.uniqueJobs
						.insert(List.of(traceContext.isEmpty() ? job : job.withTraceContext(traceContext)), notify)));
			this.unpolled.enqueued(job.kind(), job.queue(), request.queue() != null);
			enlist(inserted(List.of(job), enqueued), dueQueues, notify);
			return enqueued.get(0).publicId();
		}
		observed(() -> new EnqueueContext(job.queue(), job.kind(), modeOf(job.queue()), job.publicId(), 1),
				(traceContext) -> this.repository.insert(traceContext.isEmpty() ? job : job.withTraceContext(traceContext),
						notify));
		this.unpolled.enqueued(job.kind(), job.queue(), request.queue() != null);
		enlist(List.of(job), dueQueues, notify);
		return job.publicId();
	}

	@Override
	public List<UUID> enqueueAll(List<JobRequest> requests) {
		Objects.requireNonNull(requests, "requests must not be null");
		List<NewJob> jobs = new ArrayList<>(requests.size());
		List<UUID> ids = new ArrayList<>(requests.size());
		boolean anyUnique = false;
		for (JobRequest request : requests) {
			NewJob job = this.newJobs.of(request);
			jobs.add(job);
			ids.add(job.publicId());
			anyUnique |= job.unique() != null;
		}
		if (jobs.isEmpty()) {
			return ids;
		}
		Set<String> dueQueues = new LinkedHashSet<>();
		jobs.stream().filter(NewJob::isDueNow).forEach((job) -> dueQueues.add(job.queue()));
		boolean notify = notifyNow(dueQueues);
		List<NewJob> enlisted = jobs;
		if (anyUnique) {
			enlisted = enqueueWithUnique(jobs, ids, notify);
		}
		else {
			observed(() -> enqueueContext(jobs), (traceContext) -> this.repository
				.insertAll(traceContext.isEmpty() ? jobs : jobs.stream().map((job) -> job.withTraceContext(traceContext)).toList(),
						notify));
		}
		for (int i = 0; i < jobs.size(); i++) {
			this.unpolled.enqueued(jobs.get(i).kind(), jobs.get(i).queue(), requests.get(i).queue() != null);
		}
		enlist(enlisted, dueQueues, notify);
		return ids;
	}

	/**
	 * Inserts the jobs without a unique key in one statement and those with one through
	 * {@link UniqueJobRepository}; sets the ids of the latter to the jobs that hold their keys, and
	 * returns the jobs inserted.
	 */
	private List<NewJob> enqueueWithUnique(List<NewJob> jobs, List<UUID> ids, boolean notify) {
		List<NewJob> plain = new ArrayList<>();
		List<NewJob> unique = new ArrayList<>();
		List<Integer> uniqueAt = new ArrayList<>();
		for (int i = 0; i < jobs.size(); i++) {
			if (jobs.get(i).unique() != null) {
				unique.add(jobs.get(i));
				uniqueAt.add(i);
			}
			else {
				plain.add(jobs.get(i));
			}
		}
		List<Enqueued> enqueued = new ArrayList<>(unique.size());
		observed(() -> enqueueContext(jobs), (traceContext) -> {
			if (!plain.isEmpty()) {
				this.repository.insertAll(traceContext.isEmpty() ? plain
						: plain.stream().map((job) -> job.withTraceContext(traceContext)).toList(), notify);
			}
			enqueued.addAll(this.uniqueJobs.insert(traceContext.isEmpty() ? unique
					: unique.stream().map((job) -> job.withTraceContext(traceContext)).toList(), notify));
		});
		for (int k = 0; k < unique.size(); k++) {
			ids.set(uniqueAt.get(k), enqueued.get(k).publicId());
		}
		List<NewJob> inserted = new ArrayList<>(plain);
		inserted.addAll(inserted(unique, enqueued));
		return inserted;
	}

	/** The jobs that an enqueue with unique keys inserted, rather than resolved to a job holding their key. */
	private static List<NewJob> inserted(List<NewJob> jobs, List<Enqueued> enqueued) {
		List<NewJob> inserted = new ArrayList<>(jobs.size());
		for (int i = 0; i < jobs.size(); i++) {
			if (enqueued.get(i).outcome() == UniqueJobRepository.Outcome.INSERTED) {
				inserted.add(jobs.get(i));
			}
		}
		return inserted;
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
			if (synchronization instanceof TransactionJobs jobs && jobs.client() == this) {
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

		JdbcJobClient client() {
			return JdbcJobClient.this;
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
