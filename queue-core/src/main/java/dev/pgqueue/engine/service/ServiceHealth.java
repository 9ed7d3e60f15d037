package dev.pgqueue.engine.service;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.core.NestedExceptionUtils;

/**
 * How one service's loop fares: every failure of one of its iterations, whatever was thrown (an
 * {@link Error} too: a callback's {@code StackOverflowError}, an {@code OutOfMemoryError} that
 * passed), is logged, counted and survived, so that no thread of the engine ends without a word while
 * the engine reports itself up; and the one way a service can still end on its own, its thread gone,
 * is recorded, so that the engine's status and health name it.
 */
public final class ServiceHealth {

	private static final Logger logger = LoggerFactory.getLogger(ServiceHealth.class);

	/** The health of a service whose work runs on others' threads: nothing is ever reported to it. */
	public static final ServiceHealth NOT_WATCHED = new ServiceHealth("service");

	private final String service;

	private final LongAdder failures = new LongAdder();

	private volatile Consumer<String> counter = (service) -> {
	};

	private volatile @Nullable String stoppedBy;

	/** @param service the service's name, as its threads and its status name it */
	public ServiceHealth(String service) {
		this.service = service;
	}

	/**
	 * Counts the failures from now on in {@code counter} too, given the service's name: the engine's
	 * metrics ({@code pgqueue.service.failures}).
	 */
	public void countIn(Consumer<String> counter) {
		this.counter = counter;
	}

	/**
	 * One iteration failed; the loop goes on.
	 * @param next what the service does next, for the log ("it runs again in 1s")
	 */
	public void failed(Throwable failure, String next) {
		this.failures.increment();
		try {
			this.counter.accept(this.service);
		}
		catch (RuntimeException ex) {
			// The failure is logged below either way.
		}
		if (failure instanceof Error) {
			logger.error("pgqueue {} failed with an error; {}", this.service, next, failure);
		}
		else {
			logger.warn("pgqueue {} failed; {}: {}", this.service, next, describe(failure));
		}
	}

	/** The service's thread ended on its own, by {@code cause}: nothing does its work any more. */
	public void stopped(Throwable cause) {
		this.stoppedBy = cause.toString();
		logger.error("pgqueue {} stopped: its thread ended on {}; what it does is not done until the application "
				+ "restarts", this.service, cause, cause);
	}

	/**
	 * A failure as a log line shows it: the exception, and the database's own words when Spring's
	 * translation leaves them out (a {@code BadSqlGrammarException} for a refused permission says
	 * only "bad SQL grammar []"; its cause says "permission denied for table …").
	 */
	public static String describe(Throwable ex) {
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(ex);
		return (cause == ex) ? ex.toString() : ex + " (" + cause + ")";
	}

	/** Failures of iterations so far. */
	public long failures() {
		return this.failures.sum();
	}

	/** What ended the service's thread on its own, or {@code null} while it has not. */
	public @Nullable String stoppedBy() {
		return this.stoppedBy;
	}

}
