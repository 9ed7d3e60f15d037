package dev.pgqueue.engine.transactional;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import dev.pgqueue.engine.poll.Backoff;
import dev.pgqueue.engine.poll.ClaimProgress;
import dev.pgqueue.engine.poll.ClaimScope;
import dev.pgqueue.engine.poll.ClaimStrategy;
import dev.pgqueue.engine.poll.JobClaims;
import dev.pgqueue.engine.run.JobRunner;
import dev.pgqueue.engine.poll.PollSignals;
import dev.pgqueue.engine.settings.QueueSettings;
import dev.pgqueue.engine.poll.Workers;
import dev.pgqueue.engine.sql.JobRepository;
import dev.pgqueue.metrics.QueueMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.transaction.support.TransactionTemplate;

/**
 * Transactional mode: each worker slot runs a whole batch in one transaction. The claim itself runs
 * on the worker's thread, inside the batch's transaction, so the poll thread hands a slot over and
 * waits only until the claim has returned, to know whether it came back full.
 *
 * <p>Shutdown past its timeout interrupts the running batches; each is rolled back whole, so its
 * jobs go back to the queue as they were, without using an attempt.
 */
public final class TransactionalClaims implements ClaimStrategy {

	private static final Logger logger = LoggerFactory.getLogger(TransactionalClaims.class);

	private final String queue;

	private final int batchSize;

	private final BatchRun batches;

	private final boolean limited;

	private final Map<Thread, Boolean> batchThreads = new ConcurrentHashMap<>();

	private volatile boolean aborting;

	private volatile int batchFailures;

	private Workers workers;

	private PollSignals signals;

	/**
	 * @param settings the queue's settings
	 * @param kinds kinds to claim
	 * @param repository the SQL
	 * @param scope which part of the queue claims read
	 * @param claims the claim statements
	 * @param progress records what each claim achieved
	 * @param runner runs one attempt
	 * @param transactionTemplate the batches' transactions
	 * @param metrics where to report
	 * @param deleteCompleted whether completed jobs are deleted rather than kept
	 */
	public TransactionalClaims(QueueSettings settings, String[] kinds, JobRepository repository, ClaimScope scope,
			JobClaims claims, ClaimProgress progress, JobRunner runner, TransactionTemplate transactionTemplate,
			QueueMetrics metrics, boolean deleteCompleted) {
		this(settings, claims.limited(), (aborting) -> new TransactionalBatchRunner(settings, kinds, repository, scope,
				claims, progress, runner, transactionTemplate, metrics, deleteCompleted, aborting));
	}

	/**
	 * @param settings the queue's settings
	 * @param limited whether claims respect concurrency limits: a finished batch then wakes the
	 * poller, since its slots are free
	 * @param batches makes what runs each batch, given whether shutdown has run out of time
	 */
	public TransactionalClaims(QueueSettings settings, boolean limited, Function<BooleanSupplier, BatchRun> batches) {
		this.queue = settings.name();
		this.batchSize = settings.batchSize();
		this.limited = limited;
		this.batches = batches.apply(this::isAborting);
	}

	/** Whether shutdown has run out of time: batches leave their remaining jobs untouched. */
	boolean isAborting() {
		return this.aborting;
	}

	@Override
	public void start(Workers workers, PollSignals signals) {
		this.workers = workers;
		this.signals = signals;
		this.aborting = false;
	}

	@Override
	public int claimRoom() {
		return this.workers.free();
	}

	@Override
	public boolean claim(int room) throws InterruptedException {
		this.workers.acquire();
		CompletableFuture<Integer> claimed = new CompletableFuture<>();
		try {
			this.workers.execute(() -> runBatch(claimed));
		}
		catch (RuntimeException ex) {
			this.workers.release();
			throw ex;
		}
		try {
			return claimed.get() >= this.batchSize;
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException(ex.getCause());
		}
	}

	private void runBatch(CompletableFuture<Integer> claimed) {
		this.batchThreads.put(Thread.currentThread(), Boolean.TRUE);
		try {
			this.batches.run(claimed::complete);
			claimed.complete(0);
			this.batchFailures = 0;
			if (this.limited) {
				// The batch's slots are free: claim again now rather than after the poll interval.
				this.signals.wakeUp();
			}
		}
		catch (RuntimeException | Error ex) {
			if (!claimed.completeExceptionally(ex)) {
				// The claim had worked, so the poll loop saw no error: pause it here, or a batch that
				// fails the same way every time would be claimed again at once, over and over.
				int failures = ++this.batchFailures;
				Duration pause = Backoff.afterFailures(failures);
				this.signals.pauseClaims(pause);
				logger.warn("Queue '{}': a batch was rolled back and its jobs released ({} in a row); pausing claims "
						+ "for {} ms: {}", this.queue, failures, pause.toMillis(), ex.toString());
			}
		}
		finally {
			this.batchThreads.remove(Thread.currentThread());
			Thread.interrupted();
			this.workers.release();
		}
	}

	@Override
	public void stopClaiming() {
		// Nothing is held outside a running batch.
	}

	@Override
	public void abandonRunning() {
		this.aborting = true;
		logger.warn("Queue '{}': shutdown timeout passed; interrupting {} batches, whose unfinished jobs go back to "
				+ "the queue without using an attempt", this.queue, this.batchThreads.size());
		this.batchThreads.keySet().forEach(Thread::interrupt);
	}

	@Override
	public void close() {
	}

}
