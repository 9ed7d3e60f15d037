package dev.pgqueue.engine.twophase;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.pgqueue.InDoubtJob;
import dev.pgqueue.InDoubtJobResolver;
import dev.pgqueue.engine.job.JobHandlerRegistry;
import dev.pgqueue.engine.service.PeriodicService;
import dev.pgqueue.engine.settings.TwoPhaseSettings;
import dev.pgqueue.engine.sql.PreparedTransactionRepository;
import dev.pgqueue.engine.sql.PreparedTransactionRepository.PreparedJob;
import dev.pgqueue.metrics.PreparedTransactions;
import dev.pgqueue.metrics.QueueMetrics;
import dev.pgqueue.schema.SchemaName;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-doubt resolver: finds this schema's prepared transactions (in this database only) and
 * finishes those whose worker is gone: a background service of its own, on a thread of its own (it
 * waits on the application's answers), that runs at start-up and then every
 * {@link TwoPhaseSettings#resolveInterval()}.
 *
 * <p>A transaction is in doubt once it has been prepared for {@link TwoPhaseSettings#inDoubtAfter()}
 * and its worker's lock is free (see {@link TwoPhaseJobRunner}); one whose lock is held belongs to
 * a live worker and is left alone, however old. For each in doubt, holding that lock itself, the
 * resolver asks the application's {@link InDoubtJobResolver} whether the job's effect happened, and
 * commits the transaction if it did, rolls it back if it did not. It leaves undecided, and warns
 * about, those it cannot ask about (no resolver, a kind without a listener here, a job it cannot
 * find) and those whose resolver failed, until {@link TwoPhaseSettings#rollBackAfter()}: then it
 * rolls them back, so that nothing stays prepared for ever, and logs an error.
 *
 * <p>Every instance runs it; the lock makes them take turns on each transaction, and one that finds
 * a transaction gone (another instance finished it) moves on.
 */
public class InDoubtResolver extends PeriodicService {

	private static final Logger logger = LoggerFactory.getLogger(InDoubtResolver.class);

	/** How often one undecided transaction is warned about. */
	static final Duration WARNING_PERIOD = Duration.ofMinutes(5);

	private final PreparedTransactionRepository repository;

	private final SchemaName schema;

	private final TwoPhaseSettings settings;

	private final JobHandlerRegistry handlers;

	private final @Nullable InDoubtJobResolver resolver;

	private final QueueMetrics metrics;

	private final Map<String, Long> lastWarning = new ConcurrentHashMap<>();

	private volatile PreparedTransactions last = PreparedTransactions.NONE;

	/**
	 * @param handlers this application's listeners: only jobs of their kinds are asked about
	 * @param resolver the application's answer, or {@code null} when it has none
	 */
	public InDoubtResolver(PreparedTransactionRepository repository, SchemaName schema, TwoPhaseSettings settings,
			JobHandlerRegistry handlers, @Nullable InDoubtJobResolver resolver, QueueMetrics metrics) {
		super("in-doubt resolver", settings.resolveInterval());
		this.repository = repository;
		this.schema = schema;
		this.settings = settings;
		this.handlers = handlers;
		this.resolver = resolver;
		this.metrics = metrics;
	}

	@Override
	protected void runOnce() {
		resolve();
	}

	public TwoPhaseSettings settings() {
		return this.settings;
	}

	/** What the last round left prepared; {@link PreparedTransactions#NONE} before the first. */
	public PreparedTransactions last() {
		return this.last;
	}

	/** Finishes what it can, then reports and returns what is still prepared. */
	public PreparedTransactions resolve() {
		List<PreparedJob> remaining = new ArrayList<>();
		Set<String> seen = new HashSet<>();
		for (PreparedJob prepared : this.repository.preparedJobs(TransactionIds.prefix(this.schema))) {
			seen.add(prepared.gid());
			if (prepared.age().compareTo(this.settings.inDoubtAfter()) < 0 || !resolve(prepared)) {
				remaining.add(prepared);
			}
		}
		this.lastWarning.keySet().retainAll(seen);
		Duration oldest = remaining.isEmpty() ? Duration.ZERO : remaining.get(0).age();
		long inDoubt = remaining.stream().filter((p) -> p.age().compareTo(this.settings.inDoubtAfter()) >= 0).count();
		PreparedTransactions reading = new PreparedTransactions(remaining.size(), oldest, inDoubt);
		this.last = reading;
		this.metrics.preparedTransactions(reading);
		return reading;
	}

	/** Resolves one transaction if its worker is gone; returns whether it is finished. */
	private boolean resolve(PreparedJob prepared) {
		Decision decision = this.repository.onOwnConnection((session) -> {
			if (!session.tryHold(prepared.gid())) {
				return Decision.WORKER_ALIVE;
			}
			try {
				if (!session.isPrepared(prepared.gid(), prepared.xid())) {
					return Decision.GONE;
				}
				Decision decided = decide(prepared);
				if (decided == Decision.COMMIT) {
					session.commitPrepared(prepared.gid());
				}
				else if (decided == Decision.ROLL_BACK || decided == Decision.ABANDON) {
					session.rollbackPrepared(prepared.gid());
				}
				return decided;
			}
			finally {
				session.release(prepared.gid());
			}
		});
		report(prepared, decision);
		return decision != Decision.WORKER_ALIVE && decision != Decision.UNDECIDED;
	}

	private Decision decide(PreparedJob prepared) {
		String undecided;
		if (prepared.jobId() == null) {
			undecided = "no job of the schema has the id it names";
		}
		else if (this.resolver == null) {
			undecided = "this application has no InDoubtJobResolver bean to ask";
		}
		else if (this.handlers.find(prepared.kind()) == null) {
			undecided = "no listener of this application handles kind '" + prepared.kind()
					+ "', so it leaves the job to the application that has one";
		}
		else {
			try {
				return this.resolver.effectHappened(inDoubtJob(prepared)) ? Decision.COMMIT : Decision.ROLL_BACK;
			}
			catch (Exception ex) {
				undecided = "the InDoubtJobResolver failed: " + ex;
			}
		}
		if (prepared.age().compareTo(this.settings.rollBackAfter()) >= 0) {
			logger.error("Prepared transaction '{}' has been in doubt for {} s, past pgqueue.two-phase-commit."
					+ "roll-back-after, and could not be decided ({}): rolled back. Its job runs again; if its external "
					+ "effect did happen, only an idempotency key on the job's id keeps it from happening twice.",
					prepared.gid(), prepared.age().toSeconds(), undecided);
			return Decision.ABANDON;
		}
		warnUndecided(prepared, undecided);
		return Decision.UNDECIDED;
	}

	private InDoubtJob inDoubtJob(PreparedJob prepared) {
		int attempt = (prepared.storedAttempt() != null) ? prepared.storedAttempt() + 1 : 0;
		return new InDoubtJob(prepared.jobId(), prepared.kind(), prepared.queue(), attempt, prepared.payload(),
				prepared.age());
	}

	private void warnUndecided(PreparedJob prepared, String reason) {
		long now = System.nanoTime();
		Long last = this.lastWarning.get(prepared.gid());
		if (last != null && now - last < WARNING_PERIOD.toNanos()) {
			return;
		}
		this.lastWarning.put(prepared.gid(), now);
		logger.warn("Prepared transaction '{}' has been in doubt for {} s (its worker died between prepare and commit) "
				+ "and stays prepared, holding its job's row and vacuum back: {}. It is rolled back after {} "
				+ "(pgqueue.two-phase-commit.roll-back-after) unless decided before.", prepared.gid(),
				prepared.age().toSeconds(), reason, this.settings.rollBackAfter());
	}

	private void report(PreparedJob prepared, Decision decision) {
		String queue = (prepared.queue() != null) ? prepared.queue() : TransactionIds.queueOf(this.schema, prepared.gid());
		switch (decision) {
			case COMMIT -> logger.warn("Job {} of kind '{}' in queue '{}' was left prepared for {} s by a worker that "
					+ "died between prepare and commit; its external effect happened, so its transaction '{}' was "
					+ "committed", prepared.jobId(), prepared.kind(), queue, prepared.age().toSeconds(), prepared.gid());
			case ROLL_BACK -> logger.warn("Job {} of kind '{}' in queue '{}' was left prepared for {} s by a worker that "
					+ "died between prepare and commit; its external effect did not happen, so its transaction '{}' "
					+ "was rolled back and the job runs again without using an attempt", prepared.jobId(),
					prepared.kind(), queue, prepared.age().toSeconds(), prepared.gid());
			default -> {
				// Abandoned ones were logged as an error when decided; the others are not finished.
			}
		}
		if (decision.label != null) {
			this.metrics.inDoubtResolved(queue, decision.label);
		}
	}

	/** What became of one prepared transaction in a round. */
	private enum Decision {

		/** Its effect happened: committed. */
		COMMIT("committed"),

		/** Its effect did not happen: rolled back. */
		ROLL_BACK("rolled-back"),

		/** Undecided past roll-back-after: rolled back. */
		ABANDON("abandoned"),

		/** Undecided: left prepared. */
		UNDECIDED(null),

		/** Its worker still holds its lock: left alone. */
		WORKER_ALIVE(null),

		/** Committed or rolled back by someone else meanwhile. */
		GONE(null);

		private final @Nullable String label;

		Decision(@Nullable String label) {
			this.label = label;
		}

	}

}
