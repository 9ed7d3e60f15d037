package dev.pgqueue.engine.transactional;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.pgqueue.engine.poll.ClaimStrategy;
import dev.pgqueue.engine.poll.PollSignals;
import dev.pgqueue.engine.poll.RunContext;
import dev.pgqueue.engine.poll.Workers;
import dev.pgqueue.engine.service.EngineService;
import dev.pgqueue.engine.settings.QueueSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

	private final AdaptiveBatchSize batchSize;

	private final BatchRun batches;

	private final boolean limited;

	private final Map<Thread, Boolean> batchThreads = new ConcurrentHashMap<>();

	private final BatchStop stop = new BatchStop();

	private Workers workers;

	private PollSignals signals;

	/**
	 * @param context the queue, its claims and where they are recorded
	 * @param batches what claims and runs each batch: the queue's variant of {@link BatchFlow}
	 */
	public TransactionalClaims(RunContext context, BatchRun batches) {
		this.queue = context.queue();
		QueueSettings settings = context.settings();
		this.batchSize = new AdaptiveBatchSize(settings.batchSize(),
				settings.adaptsBatchSize() ? settings.maxBatchSize() : settings.batchSize());
		// A finished batch of limited claims frees slots its poller can use at once.
		this.limited = context.claims().limited();
		this.batches = batches;
	}

	@Override
	public List<EngineService> prepare(Workers workers, PollSignals signals) {
		this.workers = workers;
		this.signals = signals;
		this.stop.reset();
		return List.of();
	}

	@Override
	public int claimRoom() {
		return this.workers.free();
	}

	@Override
	public boolean claim(int room) throws InterruptedException {
		this.workers.acquire();
		ClaimHandOff handOff = new ClaimHandOff();
		int size = this.batchSize.next();
		try {
			this.workers.execute(() -> runBatch(handOff, size));
		}
		catch (RuntimeException ex) {
			this.workers.release();
			throw ex;
		}
		int claimed = handOff.await();
		this.batchSize.claimed(size, claimed);
		return claimed >= size;
	}

	private void runBatch(ClaimHandOff handOff, int size) {
		this.batchThreads.put(Thread.currentThread(), Boolean.TRUE);
		long started = System.nanoTime();
		try {
			int jobs = this.batches.run(handOff, this.stop, size);
			handOff.claimed(0);
			this.batchSize.ran(jobs, System.nanoTime() - started);
			this.signals.claimWorked();
			if (this.limited) {
				// The batch's slots are free: claim again now rather than after the poll interval.
				this.signals.wakeUp();
			}
		}
		catch (RuntimeException | Error ex) {
			if (!handOff.failed(ex)) {
				// The claim had worked, so the poll loop saw no error: count it here, or a batch that
				// fails the same way every time would be claimed again at once, over and over. Batches
				// that a lost connection broke together count once, and a fresh batch is claimed at once.
				this.signals.claimFailed(ex, started, "a batch (rolled back, its jobs released)");
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
		this.stop.abort();
		logger.warn("Queue '{}': shutdown timeout passed; interrupting {} batches, whose unfinished jobs go back to "
				+ "the queue without using an attempt", this.queue, this.batchThreads.size());
		this.batchThreads.keySet().forEach(Thread::interrupt);
	}

}
