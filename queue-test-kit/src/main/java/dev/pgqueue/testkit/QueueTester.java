package dev.pgqueue.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

import dev.pgqueue.JobState;
import dev.pgqueue.engine.QueueEngine;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.run.Attempt;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Drives and checks pgqueue from a test of the application: waits until the queues have nothing
 * left to run, runs jobs on the test thread, and asserts on the jobs in the table. A bean of
 * {@code @SpringBootTest} classes annotated {@link AutoConfigureQueueTester @AutoConfigureQueueTester}.
 *
 * <pre>{@code
 * @SpringBootTest(properties = "pgqueue.enabled=false") // no pollers: the test decides when jobs run
 * @AutoConfigureQueueTester
 * @IsolatedQueueSchema
 * class SignupTests {
 *
 *     @Autowired SignupService signups;
 *     @Autowired QueueTester queue;
 *
 *     @Test
 *     void signingUpSendsTheWelcomeEmail() {
 *         signups.signUp("ada@example.com", "Ada");
 *         queue.assertThatJobs().ofKind("email.welcome").withPayload(new WelcomeEmail("ada@example.com", "Ada"))
 *             .hasSize(1);
 *         assertThat(queue.drain("mail").completed()).isEqualTo(1);
 *     }
 * }
 * }</pre>
 *
 * <p>{@link #awaitIdle} waits for the application's pollers, as in production. {@link #drain} and
 * {@link #run(UUID)} run jobs on the calling thread through the path a poller's workers take (the
 * same claims, listener invocation, transactions and recorded outcomes), with or without pollers;
 * pollers and the test thread never take the same job. None of the three may be called inside a
 * transaction (a {@code @Transactional} test): the jobs it enqueued are visible to no other
 * transaction until it commits, which a test's never does. {@link #assertThatJobs()} reads inside
 * the caller's transaction, so it sees them.
 */
public final class QueueTester {

	/** How long {@link #awaitIdle} waits unless {@link #withTimeout} says otherwise. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

	/** Most jobs one drain runs before it stops and fails: a queue that never empties. */
	static final int MAX_DRAINED = 10_000;

	/** Each engine with its jobs table: the application's one, or one per shard in declared order. */
	private final List<EngineRows> engines;

	private final JsonMapper jsonMapper;

	private final Duration timeout;

	/**
	 * @param engine the application's pgqueue engine
	 * @param jsonMapper reads payloads, as the application's listeners do
	 */
	QueueTester(QueueEngine engine, JsonMapper jsonMapper) {
		this(engine.databases().stream().map(EngineRows::of).toList(), jsonMapper, DEFAULT_TIMEOUT);
	}

	private QueueTester(List<EngineRows> engines, JsonMapper jsonMapper, Duration timeout) {
		if (engines.isEmpty()) {
			throw new IllegalArgumentException("A QueueTester needs at least one engine");
		}
		this.engines = engines;
		this.jsonMapper = jsonMapper;
		this.timeout = timeout;
	}

	/** A tester like this one whose {@link #awaitIdle} waits at most {@code timeout}. */
	public QueueTester withTimeout(Duration timeout) {
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("The timeout must be positive, not " + timeout);
		}
		return new QueueTester(this.engines, this.jsonMapper, timeout);
	}

	/**
	 * Waits until no queue has anything left to run: no job available or running, and none scheduled
	 * to fall due before the timeout passes (on the database clock). Failed jobs and jobs scheduled for
	 * later do not count.
	 * @throws AssertionError when the timeout passes first, or at once when this application runs no
	 * pollers ({@code pgqueue.enabled=false}) and jobs wait; the message names every job that still
	 * waits or runs, the failed jobs with their last errors, and why some may never run here
	 */
	public void awaitIdle() {
		requireNoTransaction("awaitIdle");
		new IdleWait(this.engines).await(null, this.timeout);
	}

	/** Waits as {@link #awaitIdle()} does, for one queue only. */
	public void awaitIdle(String queue) {
		requireNoTransaction("awaitIdle");
		new IdleWait(this.engines).await(queue, this.timeout);
	}

	/**
	 * Runs the due jobs of the queue on the calling thread, as the queue's poller runs them on its
	 * workers, until none is left: jobs the listeners enqueue into the queue meanwhile run too; a job
	 * whose attempt fails is retried later, not by this drain. Scheduled jobs already due are made
	 * available first. Every outcome is committed when this returns. Paused queues are drained too:
	 * the test asked for it.
	 * @return what ran, in the order the outcomes were recorded
	 * @throws IllegalArgumentException when no listener of this application handles the queue
	 */
	public JobRuns drain(String queue) {
		requireNoTransaction("drain");
		if (handlers().kindsOf(queue).length == 0) {
			throw new IllegalArgumentException("No @JobListener of this application handles queue '" + queue
					+ "', so none of its jobs can run here; the application's listeners handle queues "
					+ quoted(handlers().queues()) + ".");
		}
		// With shards, a job one shard's listener enqueues may land on another: go round until none runs.
		List<Attempt> attempts = new ArrayList<>();
		int ran;
		do {
			ran = 0;
			for (EngineRows engine : this.engines) {
				if (attempts.size() >= MAX_DRAINED) {
					break;
				}
				List<Attempt> drained = engine.engine().runDueHere(queue, MAX_DRAINED - attempts.size());
				ran += drained.size();
				attempts.addAll(drained);
			}
		}
		while (ran > 0 && this.engines.size() > 1 && attempts.size() < MAX_DRAINED);
		if (attempts.size() >= MAX_DRAINED) {
			throw new AssertionError("Queue '" + queue + "' still had jobs after " + attempts.size() + " were drained: "
					+ "does a listener enqueue another job into its own queue every time?");
		}
		return new JobRuns(attempts.stream().map(JobRun::of).toList());
	}

	/**
	 * Drains every queue that this application's listeners handle, as {@link #drain(String)} does, again
	 * and again until a round runs nothing: jobs that listeners enqueue into other queues run too.
	 * @return what ran, in the order the outcomes were recorded
	 */
	public JobRuns drain() {
		requireNoTransaction("drain");
		List<JobRun> runs = new ArrayList<>();
		Set<String> queues = handlers().queues();
		int ran;
		do {
			ran = 0;
			for (String queue : queues) {
				List<JobRun> drained = drain(queue).runs();
				ran += drained.size();
				runs.addAll(drained);
			}
			if (runs.size() >= MAX_DRAINED) {
				throw new AssertionError("The queues still had jobs after " + runs.size() + " were drained: does a "
						+ "listener enqueue another job every time?");
			}
		}
		while (ran > 0);
		return new JobRuns(runs);
	}

	/**
	 * Runs the job with this id on the calling thread now, due or scheduled for later, as its queue's
	 * poller would run it when due. Its outcome is committed when this returns.
	 * @return its run
	 * @throws AssertionError when there is no such job, it no longer waits to run (completed, failed,
	 * cancelled, or running under a poller's lease), no listener of this application handles it, or a
	 * poller's batch holds it at this moment
	 */
	public JobRun run(UUID id) {
		requireNoTransaction("run");
		EnqueuedJob job = null;
		EngineRows holder = null;
		for (EngineRows engine : this.engines) {
			job = engine.rows().find(id);
			if (job != null) {
				holder = engine;
				break;
			}
		}
		if (job == null || holder == null) {
			throw new AssertionError("No job " + id + " in pgqueue schema " + schemas() + " (completed jobs "
					+ "are deleted at once with pgqueue.retention.completed=0).");
		}
		if (!job.isWaiting()) {
			String what = (job.state() == JobState.RUNNING) ? "running under the lease of another worker"
					: job.state().sqlValue() + ((job.state() == JobState.FAILED)
							? "; retry it first (JobAdmin.retry) to run it again" : "");
			throw new AssertionError("Job " + job.describe() + " does not wait to run: it is " + what + ".");
		}
		String handledIn = handlers().queueOf(job.kind());
		if (handledIn == null || !handledIn.equals(job.queue())) {
			throw new AssertionError("Job " + job.describe() + " cannot run here: "
					+ ((handledIn == null) ? "no @JobListener of this application handles its kind."
							: "this application handles kind '" + job.kind() + "' in queue '" + handledIn + "'."));
		}
		Optional<Attempt> attempt = holder.engine().runHere(id);
		EnqueuedJob found = job;
		return attempt.map(JobRun::of)
			.orElseThrow(() -> new AssertionError("Job " + found.describe() + " could not be claimed: a poller's batch "
					+ "holds it now. Start the application without pollers (pgqueue.enabled=false) to decide when "
					+ "jobs run."));
	}

	/**
	 * Assertions on the jobs in the table now (every state, finished jobs included until they are
	 * pruned), read in the caller's transaction if there is one: narrow them with filters, then
	 * assert. See {@link JobsAssert}.
	 */
	public JobsAssert assertThatJobs() {
		List<EnqueuedJob> all = new ArrayList<>();
		this.engines.forEach((engine) -> all.addAll(engine.rows().all()));
		return new JobsAssert(all, List.of(), this.jsonMapper, schemas());
	}

	/** The listeners, the same in every engine of the application. */
	private JobHandlerRegistry handlers() {
		return this.engines.get(0).engine().handlers();
	}

	/** The schema of the jobs table, or of each shard's, for messages. */
	private String schemas() {
		return this.engines.stream().map((engine) -> "'" + engine.rows().schema() + "'").distinct()
			.collect(Collectors.joining(", "));
	}

	private static String quoted(Set<String> names) {
		return names.stream().map((name) -> "'" + name + "'").collect(Collectors.joining(", "));
	}

	private static void requireNoTransaction(String method) {
		if (TransactionSynchronizationManager.isActualTransactionActive()) {
			throw new IllegalStateException("QueueTester." + method + " was called inside a transaction (a "
					+ "@Transactional test?). The jobs that transaction enqueued are visible to no other transaction, "
					+ "pollers included, until it commits, and a test's transaction never does: the jobs would never "
					+ "run. Take @Transactional off the test (isolate it with @IsolatedQueueSchema instead), or, to "
					+ "test what a transaction enqueues, assert on it with assertThatJobs(), which reads inside the "
					+ "transaction.");
		}
	}

}
